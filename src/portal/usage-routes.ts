/**
 * An account's usage for its members: spend, requests and tokens by UTC day, model and key, and
 * the request log with filters and as CSV; always of the account in the URL, whatever the query says.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseBody } from '../admin/key-requests.ts';
import { encodeCursor, jobLogCsv, jobLogFilter, jobsQuery, jobView } from '../admin/usage-routes.ts';
import { microToCredits } from '../billing/money.ts';
import { GatewayError } from '../shared/errors.ts';
import { iso } from '../shared/time.ts';
import type { PortalUsageRow } from '../store/portal.ts';
import type { JobLogFilter, UsageStore } from '../store/usage.ts';
import type { PortalDeps } from './context.ts';

const DAY = 86_400_000;
const MAX_RANGE = 400 * DAY;

const time = z.union([z.iso.datetime({ offset: true }), z.iso.date()]).transform((s) => Date.parse(s));

const usageQuery = z.strictObject({ from: time.optional(), to: time.optional() });
// The admin log's filters, less the account: the account is the URL's.
const portalJobsQuery = jobsQuery.omit({ account_id: true });

const amounts = (r: PortalUsageRow) => ({
  requests: r.requests,
  errors: r.errors,
  credits: microToCredits(r.credits),
  prompt_tokens: r.promptTokens,
  completion_tokens: r.completionTokens,
});

function withoutAccount<T extends { account_id: string }>(view: T): Omit<T, 'account_id'> {
  const { account_id: _account, ...rest } = view;
  return rest;
}

export function registerUsageRoutes(app: FastifyInstance, deps: PortalDeps): void {
  const { portal, store, now } = deps;

  app.get<{ Params: { accountId: string } }>('/usage', async (request) => {
    const query = parseBody(usageQuery, request.query);
    const to = query.to ?? now();
    const from = query.from ?? to - 30 * DAY;
    if (from >= to || to - from > MAX_RANGE) {
      throw new GatewayError('validation_failed', 'from must be before to, at most 400 days apart.', { details: { formErrors: [], fieldErrors: { from: ['before to, at most 400 days'] } } });
    }
    const { accountId } = request.params;
    const [usage, keys] = await Promise.all([portal.usage(accountId, from, to), store.keys.listKeys(accountId)]);
    const names = new Map(keys.map((k) => [k.id, k.name]));
    const total = usage.byDay.reduce((t, r) => ({ ...t, requests: t.requests + r.requests, errors: t.errors + r.errors, credits: t.credits + r.credits,
      promptTokens: t.promptTokens + r.promptTokens, completionTokens: t.completionTokens + r.completionTokens }),
    { group: 'total', requests: 0, errors: 0, credits: 0, promptTokens: 0, completionTokens: 0 } as PortalUsageRow);
    return {
      from: iso(from),
      to: iso(to),
      totals: amounts(total),
      by_day: usage.byDay.map((r) => ({ day: iso(Number(r.group)).slice(0, 10), ...amounts(r) })),
      by_model: usage.byModel.map((r) => ({ model: r.group, ...amounts(r) })),
      by_key: usage.byKey.map((r) => ({ key_id: r.group === '' ? null : r.group, key_name: r.group === '' ? null : (names.get(String(r.group)) ?? null), ...amounts(r) })),
    };
  });

  const filterOf = (accountId: string, raw: unknown): JobLogFilter => ({ ...jobLogFilter(parseBody(portalJobsQuery, raw)), accountId });
  const requireUsage = (): UsageStore => {
    if (deps.usage === undefined) throw new GatewayError('not_found', 'The request log needs the SQL store.');
    return deps.usage;
  };

  app.get<{ Params: { accountId: string } }>('/jobs', async (request) => {
    const filter = filterOf(request.params.accountId, request.query);
    const rows = await requireUsage().jobLog({ ...filter, limit: filter.limit + 1 });
    const page = rows.slice(0, filter.limit);
    const last = page.at(-1);
    return { data: page.map((r) => withoutAccount(jobView(r))), next_cursor: rows.length > filter.limit && last !== undefined ? encodeCursor(last) : null };
  });

  app.get<{ Params: { accountId: string } }>('/jobs.csv', async (request, reply) => {
    const filter = filterOf(request.params.accountId, { ...(request.query as object), limit: '500' });
    reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="requests.csv"');
    return reply.send(jobLogCsv(requireUsage(), filter));
  });
}
