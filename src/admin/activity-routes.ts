/**
 * The dashboard's activity reads beside the request log (usage-routes.ts): one request in detail,
 * and an account's statement (its ledger as money). Inside the admin plugin, behind its token check.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { microToCredits } from '../billing/money.ts';
import { GatewayError } from '../shared/errors.ts';
import type { Store } from '../store/types.ts';
import type { JobDetail, UsageStore } from '../store/usage.ts';
import { parseBody } from './key-requests.ts';
import { jobView } from './usage-routes.ts';
import { ledgerView } from './views.ts';

const statementQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  before: z.coerce.number().int().positive().optional(),
});

/** One request: its log row, the provider and the provider's model id it ran on (its last attempt), what it was answered, its ledger rows. */
export function jobDetailView(job: JobDetail) {
  const last = job.attempts?.at(-1);
  return {
    ...jobView(job),
    account_name: job.accountName,
    provider: last?.provider ?? null,
    provider_model_id: last?.deployment ?? null,
    error_message: job.errorMessage,
    ledger: job.ledger.map(ledgerView),
  };
}

export function registerActivityRoutes(admin: FastifyInstance, usage: UsageStore, store: Store): void {
  admin.get<{ Params: { jobId: string } }>('/jobs/:jobId', async (request) => {
    const job = await usage.job(request.params.jobId);
    if (job === undefined) throw new GatewayError('job_not_found', `No request with id ${request.params.jobId}.`);
    return jobDetailView(job);
  });

  admin.get<{ Params: { id: string } }>('/accounts/:id/statement', async (request) => {
    const query = parseBody(statementQuery, request.query);
    const account = await store.accounts.getAccount(request.params.id);
    if (account === undefined) throw new GatewayError('account_not_found', `No account with id ${request.params.id}.`);
    const lines = await usage.statement(account.id, account.balance, query.limit, query.before);
    const last = lines.at(-1);
    return {
      balance_credits: microToCredits(account.balance),
      data: lines.map((l) => ({ ...ledgerView(l.entry), change_credits: microToCredits(l.change), balance_after_credits: microToCredits(l.balanceAfter) })),
      next_before: lines.length === query.limit && last !== undefined ? last.entry.id : null,
    };
  });
}
