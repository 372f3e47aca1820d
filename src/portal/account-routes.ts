/**
 * An account as its members see it: balance and settings (owners change the monthly spending
 * limit and billing e-mails), members (owners invite and remove), notifications, and the ledger
 * as money with a running balance. Every route sits behind the member guard (context.ts).
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { microToCredits } from '../billing/money.ts';
import { accountPatchBodyFor } from '../admin/routes.ts';
import { parseBody } from '../admin/key-requests.ts';
import { limitPatch } from '../admin/limit-fields.ts';
import { accountView, notificationView } from '../admin/views.ts';
import { INVITATION_TTL_MS, normalEmail } from '../auth/sign-in-links.ts';
import { GatewayError } from '../shared/errors.ts';
import { iso, startOfUtcMonth } from '../shared/time.ts';
import { limitsOf } from '../store/limits.ts';
import type { MemberRecord, MoneyEntry } from '../store/portal.ts';
import { memberOf, originOf, type PortalDeps } from './context.ts';

type AccountParams = { Params: { accountId: string } };

const inviteBody = z.strictObject({ email: z.email().max(320), role: z.enum(['owner', 'member']).default('member') });
const pageQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(500).default(100), before: z.coerce.number().int().positive().optional() });

const memberView = (m: MemberRecord) => ({ email: m.email, role: m.role, invited_by: m.invitedBy, created_at: iso(m.createdAt) });

/** A ledger row as money: signed credits (1 credit = USD 0.01) and the balance after it. */
const moneyView = (e: MoneyEntry) => ({
  id: e.id,
  kind: e.kind,
  credits: microToCredits(e.amount),
  balance_after_credits: microToCredits(e.balanceAfter),
  job_id: e.jobId,
  key_id: e.keyId,
  created_at: iso(e.createdAt),
});

export function registerAccountRoutes(app: FastifyInstance, deps: PortalDeps): void {
  const { store, portal, now } = deps;
  const limits = limitsOf(store.money);

  const accountAnswer = async (accountId: string, role: string) => {
    const account = await store.accounts.getAccount(accountId);
    if (account === undefined) throw new GatewayError('account_not_found', `No account with id ${accountId}.`);
    return { ...accountView(account, await store.accounts.accountSpentSince(accountId, startOfUtcMonth(now())), limits), role };
  };

  app.get<AccountParams>('', async (request) => accountAnswer(request.params.accountId, memberOf(request).record.role));

  app.patch<AccountParams>('', { config: { ownerOnly: true } }, async (request) => {
    const body = parseBody(accountPatchBodyFor(limits), request.body);
    await store.accounts.updateAccount(request.params.accountId, { ...limitPatch(limits, 'account', body), billingEmails: body.billing_emails });
    return accountAnswer(request.params.accountId, memberOf(request).record.role);
  });

  app.get<AccountParams>('/members', async (request) => ({ data: (await portal.listMembers(request.params.accountId)).map(memberView) }));

  app.post<AccountParams>('/members', { config: { ownerOnly: true } }, async (request, reply) => {
    const body = parseBody(inviteBody, request.body);
    const { accountId } = request.params;
    const inviter = memberOf(request).session.email;
    const member: MemberRecord = { accountId, email: normalEmail(body.email), role: body.role, createdAt: now(), invitedBy: inviter };
    if ((await portal.addMember(member)) === 'exists') {
      throw new GatewayError('invalid_request', `${member.email} is already a member of this account.`);
    }
    let emailed = false;
    if (deps.mail !== undefined) {
      const account = await store.accounts.getAccount(accountId);
      const link = await deps.links.issue(member.email, `${originOf(request, deps.publicBaseUrl)}/portal`, INVITATION_TTL_MS);
      await deps.mail(member.email, `You are invited to ${account?.name ?? 'an account'} on Model Gateway`,
        `${inviter} invited you to the account "${account?.name ?? accountId}" as ${body.role}.\n\nSign in:\n\n${link}\n\n` +
        'The link works once, for 72 hours; afterwards ask for a new one on the sign-in page with this address.')
        .then(() => { emailed = true; }, (err: unknown) => request.log.warn({ err }, 'an invitation e-mail could not be sent'));
    }
    reply.code(201);
    return { ...memberView(member), emailed };
  });

  app.delete<{ Params: { accountId: string; email: string } }>('/members/:email', { config: { ownerOnly: true } }, async (request, reply) => {
    const email = normalEmail(request.params.email);
    const outcome = await portal.removeMember(request.params.accountId, email);
    if (outcome === 'not_found') throw new GatewayError('member_not_found', `${email} is not a member of this account.`);
    if (outcome === 'last_owner') throw new GatewayError('invalid_request', 'The last owner cannot be removed. Make another member an owner first.');
    // Signed out everywhere at once: the removed person's open pages stop working now, not at their next sign-in.
    await portal.endSessionsOf('portal', email);
    return reply.code(204).send();
  });

  app.get<AccountParams>('/notifications', async (request) => {
    const { accountId } = request.params;
    const [notifications, keys] = await Promise.all([store.notifications.listNotifications(accountId, 500), store.keys.listKeys(accountId)]);
    const names = new Map(keys.map((k) => [k.id, k.name]));
    return { data: notifications.map((n) => ({ ...notificationView(n), key_name: n.keyId === null ? null : (names.get(n.keyId) ?? null) })) };
  });

  app.get<AccountParams>('/ledger', async (request) => {
    const query = parseBody(pageQuery, request.query);
    const rows = await portal.moneyLedger(request.params.accountId, query);
    const last = rows.at(-1);
    return { data: rows.map(moneyView), next_before: rows.length === query.limit && last !== undefined ? last.id : null };
  });
}
