/**
 * The two routes of an OpenID Connect sign-in, for the portal and for the dashboard alike:
 * `GET <start>` answers `{url}` for the browser to open (404 without a provider), and the callback
 * finishes the flow, admits the verified address or says why not (400 page), and starts a session.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../shared/errors.ts';
import type { SessionRealm } from '../store/portal.ts';
import { landingPage } from './landing-page.ts';
import { OidcSignInError, type OidcSignIn } from './oidc-sign-in.ts';
import type { Sessions } from './sessions.ts';

export interface OidcRoutes {
  realm: SessionRealm;
  /** Undefined: not configured (the routes answer so). */
  oidc: OidcSignIn | undefined;
  sessions: Sessions | undefined;
  startPath: string;
  callbackPath: string;
  /** Where a signed-in person goes, and where a refused one is sent back to. */
  appPath: string;
  notConfigured: string;
  publicBaseUrl: string | undefined;
  /** Why this verified address may not sign in, or null when it may. */
  refusal: (email: string) => Promise<string | null>;
}

export function registerOidcRoutes(app: FastifyInstance, r: OidcRoutes): void {
  const callbackOf = (request: FastifyRequest) => `${r.publicBaseUrl ?? `${request.protocol}://${request.host}`}${r.callbackPath}`;

  app.get(r.startPath, async (request, reply) => {
    if (r.oidc === undefined) throw new GatewayError('not_found', r.notConfigured);
    try {
      const { url, setCookie } = await r.oidc.start(callbackOf(request));
      reply.header('set-cookie', setCookie);
      return { url };
    } catch (error) {
      if (error instanceof OidcSignInError) throw new GatewayError('upstream_error', error.message);
      throw error;
    }
  });

  app.get(r.callbackPath, async (request, reply) => {
    const refuse = (message: string) => reply.code(400).type('text/html; charset=utf-8')
      .send(landingPage({ title: 'Sign-in failed', message, next: r.appPath, moveOn: false }));
    const { oidc, sessions } = r;
    if (oidc === undefined || sessions === undefined) return refuse(r.notConfigured);
    const callback = callbackOf(request);
    reply.header('set-cookie', oidc.clearFlow(callback));
    let email: string;
    try {
      email = await oidc.finish(new URL(request.url, callback), request.headers.cookie);
    } catch (error) {
      if (error instanceof OidcSignInError) return refuse(error.message);
      throw error;
    }
    const refusal = await r.refusal(email);
    if (refusal !== null) return refuse(refusal);
    const { setCookie } = await sessions.start(r.realm, email, request.headers.cookie);
    // Fastify adds this Set-Cookie beside the flow's clearing one.
    return reply.header('set-cookie', setCookie).type('text/html; charset=utf-8')
      .send(landingPage({ title: 'Signed in', message: `Signed in as ${email}.`, next: r.appPath, moveOn: true }));
  });
}
