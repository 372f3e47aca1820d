/**
 * Signing in and out of the portal: an e-mail link (asked for on the sign-in page, redeemed by the
 * page the link opens), an OpenID Connect provider when configured, the session's own answer (who,
 * which accounts, the CSRF token), and sign-out.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { registerOidcRoutes } from '../auth/oidc-routes.ts';
import { z } from 'zod';
import { crossSite, type LiveSession } from '../auth/sessions.ts';
import { resolveClientAddress } from '../gate/client-address.ts';
import { parseBody } from '../admin/key-requests.ts';
import { GatewayError } from '../shared/errors.ts';
import { checkChange, originOf, type PortalDeps } from './context.ts';

const emailBody = z.strictObject({ email: z.email().max(320) });
const linkBody = z.strictObject({ token: z.string().min(20).max(200) });

function refuseCrossSite(request: FastifyRequest): void {
  if (crossSite(request.headers)) throw new GatewayError('csrf_failed', 'Sign-in requests are taken only from the portal page.');
}

export function registerAuthRoutes(app: FastifyInstance, deps: PortalDeps): void {
  const sessionView = async (session: LiveSession) => ({
    email: session.email,
    csrf_token: session.csrfToken,
    expires_at: new Date(session.expiresAt).toISOString(),
    accounts: (await deps.portal.membershipsOf(session.email)).map((m) => ({ id: m.accountId, name: m.accountName, role: m.role })),
  });

  app.get('/portal/api/sign-in-options', async () => ({ email: deps.mailsLinks, oidc: deps.oidc !== undefined }));

  app.post('/portal/api/sign-in/email', async (request, reply) => {
    refuseCrossSite(request);
    const { email } = parseBody(emailBody, request.body);
    const client = resolveClientAddress(request.socket.remoteAddress, request.headers['x-forwarded-for'], deps.trustProxy);
    const outcome = await deps.links.request(email, client.text, `${originOf(request, deps.publicBaseUrl)}/portal`);
    if (outcome === 'limited') throw new GatewayError('sign_in_limited', 'Too many sign-in links were asked for. Wait an hour and try again.');
    reply.code(202);
    return { message: 'If this address belongs to a member of an account, a sign-in link is on its way. It works once, for 15 minutes.' };
  });

  app.post('/portal/api/sign-in/link', async (request, reply) => {
    refuseCrossSite(request);
    const { token } = parseBody(linkBody, request.body);
    const email = await deps.links.redeem(token);
    if (email === undefined) throw new GatewayError('invalid_link', 'This sign-in link has been used or has expired. Ask for a new one.');
    const { setCookie, session } = await deps.sessions.start('portal', email, request.headers.cookie);
    reply.header('set-cookie', setCookie);
    return sessionView(session);
  });

  app.get('/portal/api/session', async (request) => {
    const session = await deps.sessions.read('portal', request.headers.cookie);
    if (session === undefined) throw new GatewayError('not_signed_in', 'Sign in to the portal first.');
    return sessionView(session);
  });

  app.post('/portal/api/sign-out', async (request, reply) => {
    const session = await deps.sessions.read('portal', request.headers.cookie);
    checkChange(request, session);
    reply.header('set-cookie', await deps.sessions.end('portal', request.headers.cookie));
    return reply.code(204).send();
  });

  // Always registered (so the API document is one whatever the configuration): without a provider, 404 and a page that says so.
  registerOidcRoutes(app, {
    realm: 'portal', oidc: deps.oidc, sessions: deps.sessions, startPath: '/portal/api/sign-in/oidc', callbackPath: '/portal/auth/oidc/callback',
    appPath: '/portal/', notConfigured: 'Single sign-on is not configured on this gateway.', publicBaseUrl: deps.publicBaseUrl,
    refusal: async (email) => ((await deps.portal.membershipsOf(email)).length === 0
      ? `${email} is not a member of any account. Ask an owner of your account to invite you.`
      : null),
  });
}
