/**
 * Who may use the admin API: the ADMIN_TOKEN as a Bearer token, or an operator signed in to the
 * dashboard through the OpenID Connect provider (an address of ADMIN_OIDC_EMAILS), with a cookie
 * session and its CSRF token on every change. Also the dashboard's sign-in and sign-out routes.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { OidcSignInError, type OidcSignIn } from '../auth/oidc-sign-in.ts';
import { crossSite, csrfMatches, type LiveSession, type Sessions } from '../auth/sessions.ts';
import { landingPage } from '../auth/landing-page.ts';
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
const CALLBACK = '/admin/auth/oidc/callback';

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
  const origin = (request: FastifyRequest) => sso?.publicBaseUrl ?? `${request.protocol}://${request.host}`;

  app.get('/admin/auth/oidc', async (request, reply) => {
    if (sso === undefined) throw new GatewayError('not_found', 'Single sign-on is not configured for the dashboard (ADMIN_OIDC_EMAILS).');
    try {
      const { url, setCookie } = await sso.oidc.start(`${origin(request)}${CALLBACK}`);
      reply.header('set-cookie', setCookie);
      return { url };
    } catch (error) {
      if (error instanceof OidcSignInError) throw new GatewayError('upstream_error', error.message);
      throw error;
    }
  });

  app.get(CALLBACK, async (request, reply) => {
    const refuse = (message: string) => reply.code(400).type('text/html; charset=utf-8')
      .send(landingPage({ title: 'Sign-in failed', message, next: '/admin/', moveOn: false }));
    if (sso === undefined) return refuse('Single sign-on is not configured for the dashboard (ADMIN_OIDC_EMAILS).');
    const callback = `${origin(request)}${CALLBACK}`;
    reply.header('set-cookie', sso.oidc.clearFlow(callback));
    let email: string;
    try {
      email = await sso.oidc.finish(new URL(request.url, callback), request.headers.cookie);
    } catch (error) {
      if (error instanceof OidcSignInError) return refuse(error.message);
      throw error;
    }
    if (!sso.emails.includes(email)) return refuse(`${email} may not sign in to the admin dashboard (ADMIN_OIDC_EMAILS).`);
    const { setCookie } = await sso.sessions.start('admin', email, request.headers.cookie);
    return reply.header('set-cookie', setCookie).type('text/html; charset=utf-8')
      .send(landingPage({ title: 'Signed in', message: `Signed in as ${email}.`, next: '/admin/', moveOn: true }));
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
