/**
 * Sign-in through any OpenID Connect provider (OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET), with
 * openid-client: the authorization code flow with PKCE, state and nonce. What the browser must bring
 * back (state, verifier, nonce) travels in a short-lived HttpOnly cookie of its own; the person is
 * their verified e-mail address.
 */
import { parse, serialize } from 'cookie';
import type * as Oidc from 'openid-client';

/** openid-client, loaded at the first sign-in: a gateway without OIDC never loads it. */
const client = () => import('openid-client');

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

/** The flow's secrets, held by the browser between the redirect and the callback. */
interface Flow {
  state: string;
  verifier: string;
  nonce: string;
}

const FLOW_COOKIE = 'mg_oidc';
const FLOW_TTL_S = 600;

export class OidcSignInError extends Error {}

export class OidcSignIn {
  private discovered: Promise<Oidc.Configuration> | undefined;

  constructor(private readonly settings: OidcSettings, private readonly secure: boolean) {}

  /** The provider's authorization URL, and the Set-Cookie that keeps the flow for `callbackUrl`'s path. */
  async start(callbackUrl: string): Promise<{ url: string; setCookie: string }> {
    const config = await this.configuration();
    const oidc = await client();
    const flow: Flow = { state: oidc.randomState(), verifier: oidc.randomPKCECodeVerifier(), nonce: oidc.randomNonce() };
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: callbackUrl,
      scope: 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(flow.verifier),
      code_challenge_method: 'S256',
      state: flow.state,
      nonce: flow.nonce,
    });
    const setCookie = serialize(FLOW_COOKIE, Buffer.from(JSON.stringify(flow)).toString('base64url'), {
      httpOnly: true, sameSite: 'lax', secure: this.secure, path: new URL(callbackUrl).pathname, maxAge: FLOW_TTL_S,
    });
    return { url: url.href, setCookie };
  }

  /** The verified e-mail address of the person the provider sent back to `currentUrl` (the callback with its query). */
  async finish(currentUrl: URL, cookieHeader: string | undefined): Promise<string> {
    const flow = readFlow(cookieHeader);
    if (flow === undefined) throw new OidcSignInError('The sign-in took too long or was started in another browser. Start again.');
    const config = await this.configuration();
    const oidc = await client();
    let tokens: Awaited<ReturnType<typeof Oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(config, currentUrl, { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce });
    } catch (error) {
      throw new OidcSignInError(`The identity provider's answer was refused: ${error instanceof Error ? error.message : String(error)}`);
    }
    const claims = tokens.claims();
    let email = claims?.email;
    let verified = claims?.email_verified;
    // Providers that keep the e-mail out of the ID token answer it at their userinfo endpoint.
    if (typeof email !== 'string' && claims !== undefined) {
      const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
      email = info.email;
      verified = info.email_verified;
    }
    if (typeof email !== 'string' || verified !== true) throw new OidcSignInError('The identity provider did not give a verified e-mail address.');
    return email.trim().toLowerCase();
  }

  /** Clears the flow cookie once used. */
  clearFlow(callbackUrl: string): string {
    return serialize(FLOW_COOKIE, '', { httpOnly: true, sameSite: 'lax', secure: this.secure, path: new URL(callbackUrl).pathname, maxAge: 0 });
  }

  private configuration(): Promise<Oidc.Configuration> {
    const { issuer, clientId, clientSecret } = this.settings;
    this.discovered ??= client().then((oidc) => {
      // An http issuer is the operator's choice (a provider on loopback in tests); openid-client refuses it unless told.
      const insecure = new URL(issuer).protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : undefined;
      return oidc.discovery(new URL(issuer), clientId, clientSecret, undefined, insecure);
    }).catch((error: unknown) => {
      // A provider down at the first sign-in is asked again at the next.
      this.discovered = undefined;
      throw new OidcSignInError(`The identity provider could not be reached: ${error instanceof Error ? error.message : String(error)}`);
    });
    return this.discovered;
  }
}

function readFlow(cookieHeader: string | undefined): Flow | undefined {
  const raw = cookieHeader === undefined ? undefined : parse(cookieHeader)[FLOW_COOKIE];
  if (raw === undefined || raw === '') return undefined;
  try {
    const flow = JSON.parse(Buffer.from(raw, 'base64url').toString()) as Partial<Flow>;
    return typeof flow.state === 'string' && typeof flow.verifier === 'string' && typeof flow.nonce === 'string'
      ? { state: flow.state, verifier: flow.verifier, nonce: flow.nonce }
      : undefined;
  } catch {
    return undefined;
  }
}
