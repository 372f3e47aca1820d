/**
 * Who may use the admin API: the ADMIN_TOKEN as a Bearer token, or an operator signed in to the
 * dashboard through the OpenID Connect provider (an address of ADMIN_OIDC_EMAILS), with a cookie
 * session and its CSRF token on every change. Also the dashboard's sign-in and sign-out routes.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { OidcSignIn } from '../auth/oidc-sign-in.ts';
import { crossSite, csrfMatches, type LiveSession, type Sessions } from '../auth/sessions.ts';
import { registerOidcRoutes } from '../auth/oidc-routes.ts';
import { GatewayError } from '../shared/errors.ts';

export interface AdminAccessDeps {
  adminToken: string | undefined;
  /** Dashboard sign-in through OIDC: the provider, the sessions, and who may. */
  sso?: { oidc: OidcSignIn; sessions: Sessions; emails: string[]; publicBaseUrl: string | undefined };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Who made an admin call: `admin-token` or `oidc:<e-mail>` (the audit log's actor). */
    adminActor: string | undefined;
  }
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The admin API's onRequest check: sets request.adminActor or refuses with 401 (403 for a change without its CSRF token). */
export function adminAuth(deps: AdminAccessDeps) {
  const tokenHash = deps.adminToken === undefined ? undefined : createHash('sha256').update(deps.adminToken).digest();
  return async (request: FastifyRequest): Promise<void> => {
    const match = /^Bearer +(\S+)$/i.exec(request.headers.authorization ?? '');
    if (match !== null && tokenHash !== undefined) {
      const given = createHash('sha256').update(match[1] ?? '').digest();
      if (timingSafeEqual(given, tokenHash)) {
        request.adminActor = 'admin-token';
        return;
      }
    }
    const session = match === null ? await deps.sso?.sessions.read('admin', request.headers.cookie) : undefined;
    // An address taken off ADMIN_OIDC_EMAILS loses its open sessions at the next start.
    if (session === undefined || !(deps.sso?.emails.includes(session.email) ?? false)) throw new GatewayError('invalid_admin_token', 'Invalid admin token');
    if (!SAFE.has(request.method) && (crossSite(request.headers) || !csrfMatches(session, request.headers['x-csrf-token']))) {
      throw new GatewayError('csrf_failed', 'This change was refused: the CSRF token is missing or wrong. Reload the dashboard.');
    }
    request.adminActor = `oidc:${session.email}`;
    request.adminSession = session;
  };
}

declare module 'fastify' {
  interface FastifyRequest {
    adminSession: LiveSession | undefined;
  }
}

/** GET /admin/v1/session: who is signed in, and the CSRF token a cookie session sends with changes. */
export function registerSessionRoute(admin: FastifyInstance): void {
  admin.get('/session', async (request) => ({
    actor: request.adminActor,
    email: request.adminSession?.email ?? null,
    csrf_token: request.adminSession?.csrfToken ?? null,
  }));
}

/** The dashboard's sign-in options, and its OIDC sign-in and sign-out (outside the token check; without SSO, 404 and a page that says so). */
export function registerAdminSignIn(app: FastifyInstance, deps: AdminAccessDeps): void {
  app.get('/admin/auth/options', async () => ({ token: deps.adminToken !== undefined, oidc: deps.sso !== undefined }));
  const { sso } = deps;
  registerOidcRoutes(app, {
    realm: 'admin', oidc: sso?.oidc, sessions: sso?.sessions, startPath: '/admin/auth/oidc', callbackPath: '/admin/auth/oidc/callback',
    appPath: '/admin/', notConfigured: 'Single sign-on is not configured for the dashboard (ADMIN_OIDC_EMAILS).', publicBaseUrl: sso?.publicBaseUrl,
    refusal: async (email) => (sso?.emails.includes(email) === true ? null : `${email} may not sign in to the admin dashboard (ADMIN_OIDC_EMAILS).`),
  });

  app.post('/admin/auth/sign-out', async (request, reply) => {
    const session = await sso?.sessions.read('admin', request.headers.cookie);
    if (crossSite(request.headers) || (session !== undefined && !csrfMatches(session, request.headers['x-csrf-token']))) {
      throw new GatewayError('csrf_failed', 'Sign-out refused: the CSRF token is missing or wrong.');
    }
    if (sso !== undefined) reply.header('set-cookie', await sso.sessions.end('admin', request.headers.cookie));
    return reply.code(204).send();
  });
}
