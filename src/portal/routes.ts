/**
 * The customer portal (DECISIONS.md "Customer portal and payments"): its page at /portal (the
 * built portal/ app), sign-in and sign-out, and under /portal/api/accounts/:accountId every read
 * and change of one account, each behind the member guard.
 */
import type { FastifyInstance } from 'fastify';
import { builtAppDir, registerBuiltApp } from '../admin/dashboard-assets.ts';
import { registerAccountRoutes } from './account-routes.ts';
import { registerAuthRoutes } from './auth-routes.ts';
import { memberGuard, type PortalDeps } from './context.ts';
import { registerKeyRoutes } from './key-routes.ts';
import { registerUsageRoutes } from './usage-routes.ts';

export type { PortalDeps } from './context.ts';

/** More account routes (payments), registered under the same guard. */
export type AccountRoutes = (app: FastifyInstance) => void;

export async function registerPortal(app: FastifyInstance, deps: PortalDeps, more: AccountRoutes[] = []): Promise<void> {
  registerBuiltApp(app, '/portal', deps.portalDir ?? builtAppDir('portal'));
  registerAuthRoutes(app, deps);
  await app.register(async (account) => {
    account.decorateRequest('member', undefined);
    // On request, before the body is read: a stranger's body is never parsed.
    account.addHook('onRequest', memberGuard(deps));
    registerAccountRoutes(account, deps);
    registerKeyRoutes(account, deps);
    registerUsageRoutes(account, deps);
    for (const routes of more) routes(account);
  }, { prefix: '/portal/api/accounts/:accountId' });
}
