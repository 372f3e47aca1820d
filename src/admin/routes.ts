/**
 * The admin API under /admin/v1 (DECISIONS.md), for operators, tests, the demo and the CLI.
 * Registered only when ADMIN_TOKEN is set; otherwise every /admin route answers 404.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { creditsToMicro, microToCredits } from '../billing/money.ts';
import { createKeyFromBody, patchKeyFromBody, newKeyBody, parseBody, patchKeyBody } from './key-requests.ts';
import { limitBodyFields, limitPatch } from './limit-fields.ts';
import { slowestMediaPartMs } from '../chat/media/media-hold.ts';
import { GatewayError } from '../shared/errors.ts';
import type { KeyService } from '../keys/key-service.ts';
import { HOLD_LIMITS, limitsOf, perTable } from '../store/limits.ts';
import type { Store } from '../store/types.ts';
import { startOfUtcMonth } from '../shared/time.ts';
import type { UsageStore } from '../store/usage.ts';
import { adminAuth, type AdminAccessDeps, registerAdminSignIn, registerSessionRoute } from './admin-access.ts';
import { registerAudit } from './audit.ts';
import { normalEmail } from '../auth/sign-in-links.ts';
import { registerDashboard } from './dashboard-assets.ts';
import type { PortalStore } from '../store/portal.ts';
import { registerUsageRoutes } from './usage-routes.ts';
import { accountView, issuedKeyView, keyView, ledgerView, notificationView } from './views.ts';

export interface AdminDeps {
  /** The admin token and, when configured, the dashboard's OIDC sign-in. */
  access: AdminAccessDeps;
  /** The portal's store: the audit log every admin change is written to, and a new account's first owner; absent without the SQL store. */
  portal?: PortalStore;
  store: Store;
  keys: KeyService;
  /** The dashboard's reads (usage, job log, account search); those routes are absent without it. */
  usage?: UsageStore;
  /** Where the built dashboard lives (default dist/dashboard). */
  dashboardDir?: string;
  now?: () => number;
}

export const newAccountBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  email: z.email().nullable().optional(),
  created_at: z.iso.datetime({ offset: true }).optional(),
  has_purchase: z.boolean().default(false),
  billing_emails: z.boolean().default(true),
});

/** An account's edits: its limits of the limit table (src/store/limits.ts) and its e-mail switch (built once per table). */
export const accountPatchBodyFor = perTable((limits) => z.strictObject({
  ...limitBodyFields(limits, 'account'),
  billing_emails: z.boolean().optional(),
}));

export const patchAccountBody = accountPatchBodyFor(HOLD_LIMITS);

export const addCreditsBody = z.strictObject({
  credits: z.number().finite().positive().max(1e12),
  purchase: z.boolean(),
});

export { newKeyBody, patchKeyBody };

export async function registerAdminRoutes(app: FastifyInstance, deps: AdminDeps): Promise<void> {
  const { store, keys } = deps;
  const now = deps.now ?? Date.now;
  const limits = limitsOf(store.money);
  // The dashboard's page and assets are public; everything it shows comes from /admin/v1 with the token.
  registerDashboard(app, deps.dashboardDir);
  registerAdminSignIn(app, deps.access);

  await app.register(async (admin) => {
    admin.decorateRequest('adminActor', undefined);
    admin.decorateRequest('adminSession', undefined);
    admin.addHook('onRequest', adminAuth(deps.access));
    registerSessionRoute(admin);
    if (deps.portal !== undefined) registerAudit(admin, deps.portal, now);

    const requireAccount = async (id: string) => {
      const account = await store.accounts.getAccount(id);
      if (account === undefined) throw new GatewayError('account_not_found', `No account with id ${id}.`);
      return account;
    };
    const accountAnswer = async (id: string) => {
      const account = await requireAccount(id);
      return accountView(account, await store.accounts.accountSpentSince(id, startOfUtcMonth(now())), limits);
    };

    // Process health for operators and the benchmark: memory and event-loop delay since the last reset.
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    admin.addHook('onClose', async () => loopDelay.disable());
    admin.get<{ Querystring: { reset?: string } }>('/stats', async (request) => {
      const memory = process.memoryUsage();
      const stats = {
        rss_bytes: memory.rss,
        heap_used_bytes: memory.heapUsed,
        event_loop_delay_ms: {
          p50: loopDelay.percentile(50) / 1e6,
          p99: loopDelay.percentile(99) / 1e6,
          max: loopDelay.max / 1e6,
        },
        /** The longest one chat image or PDF part took to read and price. */
        media_part_max_ms: slowestMediaPartMs(request.query.reset === 'true'),
      };
      if (request.query.reset === 'true') loopDelay.reset();
      return stats;
    });

    admin.post('/accounts', async (request, reply) => {
      const body = parseBody(newAccountBody, request.body);
      const account = await store.accounts.createAccount({
        name: body.name,
        email: body.email ?? null,
        createdAt: body.created_at === undefined ? now() : Date.parse(body.created_at),
        hasPurchase: body.has_purchase,
        billingEmails: body.billing_emails,
      });
      // The account's address is its first owner in the portal.
      if (account.email !== null) {
        await deps.portal?.addMember({ accountId: account.id, email: normalEmail(account.email), role: 'owner', createdAt: account.createdAt, invitedBy: null });
      }
      reply.code(201);
      return accountView(account, 0, limits);
    });

    if (deps.usage !== undefined) registerUsageRoutes(admin, deps.usage, now);

    admin.get<{ Params: { id: string } }>('/accounts/:id', async (request) => accountAnswer(request.params.id));

    admin.patch<{ Params: { id: string } }>('/accounts/:id', async (request) => {
      const body = parseBody(accountPatchBodyFor(limits), request.body);
      await requireAccount(request.params.id);
      await store.accounts.updateAccount(request.params.id, { ...limitPatch(limits, 'account', body), billingEmails: body.billing_emails });
      return accountAnswer(request.params.id);
    });

    admin.post<{ Params: { id: string } }>('/accounts/:id/credits', async (request) => {
      const body = parseBody(addCreditsBody, request.body);
      await requireAccount(request.params.id);
      await store.accounts.addCredits(request.params.id, creditsToMicro(body.credits), body.purchase ? 'topup' : 'grant', now());
      return accountAnswer(request.params.id);
    });

    admin.get<{ Params: { id: string }; Querystring: { limit?: string } }>('/accounts/:id/ledger', async (request) => {
      await requireAccount(request.params.id);
      // Newest first; 1,000 rows unless `?limit=N` or `?limit=all`.
      const raw = request.query.limit;
      const limit = raw === 'all' ? Number.MAX_SAFE_INTEGER : raw === undefined ? 1000 : Number(raw);
      if (!Number.isInteger(limit) || limit < 1) throw new GatewayError('validation_failed', "limit must be a positive integer or 'all'.", { details: { formErrors: [], fieldErrors: { limit: ['a positive integer or all'] } } });
      return (await store.accounts.listLedger(request.params.id, limit)).map(ledgerView);
    });

    admin.get<{ Params: { id: string } }>('/accounts/:id/notifications', async (request) => {
      await requireAccount(request.params.id);
      return (await store.notifications.listNotifications(request.params.id, 1000)).map(notificationView);
    });

    admin.post<{ Params: { id: string } }>('/accounts/:id/keys', async (request, reply) => {
      await requireAccount(request.params.id);
      const issued = await createKeyFromBody(keys, request.params.id, request.body, now(), limits);
      reply.code(201);
      return issued;
    });

    admin.get<{ Params: { id: string } }>('/accounts/:id/keys', async (request) => {
      await requireAccount(request.params.id);
      const t = now();
      return (await store.keys.listKeys(request.params.id)).map((k) => keyView(k, t, limits));
    });

    admin.patch<{ Params: { keyId: string } }>('/keys/:keyId', async (request) => patchKeyFromBody(keys, request.params.keyId, request.body, now(), limits));

    admin.post<{ Params: { keyId: string } }>('/keys/:keyId/revoke', async (request) => keyView(await keys.revoke(request.params.keyId), now(), limits));

    admin.post<{ Params: { keyId: string } }>('/keys/:keyId/rotate', async (request, reply) => {
      const issued = await keys.rotate(request.params.keyId);
      reply.code(201);
      return issuedKeyView(issued.record, issued.secret, now(), limits);
    });

    admin.get<{ Params: { keyId: string } }>('/keys/:keyId/usage', async (request) => {
      const usage = await keys.usage(request.params.keyId);
      return {
        day_credits: microToCredits(usage.day),
        month_credits: microToCredits(usage.month),
        day_resets_at: new Date(usage.dayResetsAt).toISOString(),
        month_resets_at: new Date(usage.monthResetsAt).toISOString(),
      };
    });
  }, { prefix: '/admin/v1' });
}
