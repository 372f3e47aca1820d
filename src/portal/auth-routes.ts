/**
 * Signing in and out of the portal: an e-mail link (asked for on the sign-in page, redeemed by the
 * page the link opens), an OpenID Connect provider when configured, the session's own answer (who,
 * which accounts, the CSRF token), and sign-out.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { landingPage } from '../auth/landing-page.ts';
import { z } from 'zod';
import { OidcSignInError } from '../auth/oidc-sign-in.ts';
import { crossSite, type LiveSession } from '../auth/sessions.ts';
import { resolveClientAddress } from '../gate/client-address.ts';
import { parseBody } from '../admin/key-requests.ts';
import { GatewayError } from '../shared/errors.ts';
import { checkChange, originOf, type PortalDeps } from './context.ts';

const emailBody = z.strictObject({ email: z.email().max(320) });
const linkBody = z.strictObject({ token: z.string().min(20).max(200) });

const CALLBACK = '/portal/auth/oidc/callback';

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
  const { oidc } = deps;
  app.get('/portal/api/sign-in/oidc', async (request, reply) => {
    if (oidc === undefined) throw new GatewayError('not_found', 'Single sign-on is not configured on this gateway.');
    try {
      const { url, setCookie } = await oidc.start(`${originOf(request, deps.publicBaseUrl)}${CALLBACK}`);
      reply.header('set-cookie', setCookie);
      return { url };
    } catch (error) {
      if (error instanceof OidcSignInError) throw new GatewayError('upstream_error', error.message);
      throw error;
    }
  });

  app.get(CALLBACK, async (request, reply) => {
    const refuse = (message: string) => reply.code(400).type('text/html; charset=utf-8')
      .send(landingPage({ title: 'Sign-in failed', message, next: '/portal/#/sign-in', moveOn: false }));
    if (oidc === undefined) return refuse('Single sign-on is not configured on this gateway.');
    const callback = `${originOf(request, deps.publicBaseUrl)}${CALLBACK}`;
    reply.header('set-cookie', oidc.clearFlow(callback));
    let email: string;
    try {
      email = await oidc.finish(new URL(request.url, callback), request.headers.cookie);
    } catch (error) {
      if (error instanceof OidcSignInError) return refuse(error.message);
      throw error;
    }
    if ((await deps.portal.membershipsOf(email)).length === 0) {
      return refuse(`${email} is not a member of any account. Ask an owner of your account to invite you.`);
    }
    const { setCookie } = await deps.sessions.start('portal', email, request.headers.cookie);
    // Fastify adds a second Set-Cookie beside the flow's clearing one.
    return reply.header('set-cookie', setCookie).type('text/html; charset=utf-8')
      .send(landingPage({ title: 'Signed in', message: `Signed in as ${email}.`, next: '/portal/', moveOn: true }));
  });
}
