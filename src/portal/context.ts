/**
 * What every portal route receives, and the guard of the account routes: a live portal session,
 * the CSRF token on every change, and a membership of the account named in the URL (another
 * account answers exactly as an account that does not exist: 404 account_not_found).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SignInLinks } from '../auth/sign-in-links.ts';
import type { OidcSignIn } from '../auth/oidc-sign-in.ts';
import { csrfMatches, crossSite, type LiveSession, type Sessions } from '../auth/sessions.ts';
import type { AddressMatcher } from '../gate/address-match.ts';
import type { KeyService } from '../keys/key-service.ts';
import { GatewayError } from '../shared/errors.ts';
import type { MemberRecord, PortalStore } from '../store/portal.ts';
import type { Store } from '../store/types.ts';
import type { UsageStore } from '../store/usage.ts';

export interface PortalDeps {
  store: Store;
  portal: PortalStore;
  keys: KeyService;
  usage: UsageStore | undefined;
  sessions: Sessions;
  links: SignInLinks;
  /** Undefined without OIDC_ISSUER. */
  oidc: OidcSignIn | undefined;
  /** Whether sign-in links can be mailed (SMTP_URL). */
  mailsLinks: boolean;
  /** Sends an invitation e-mail (undefined without SMTP_URL). */
  mail: ((to: string, subject: string, text: string) => Promise<void>) | undefined;
  publicBaseUrl: string | undefined;
  trustProxy: AddressMatcher | undefined;
  /** Where the built portal lives (default dist/portal). */
  portalDir?: string;
  now: () => number;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Portal account routes only an owner may call. */
    ownerOnly?: boolean;
  }
  interface FastifyRequest {
    /** The signed-in member of the account in the URL (portal account routes). */
    member: { session: LiveSession; record: MemberRecord } | undefined;
  }
}

/** The origin links and redirects are made of: PUBLIC_BASE_URL, or the request's own. */
export function originOf(request: FastifyRequest, publicBaseUrl: string | undefined): string {
  return publicBaseUrl ?? `${request.protocol}://${request.host}`;
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A change (not GET) from another site, or without the session's CSRF token: 403 csrf_failed. */
export function checkChange(request: FastifyRequest, session: LiveSession | undefined): void {
  if (SAFE.has(request.method)) return;
  if (crossSite(request.headers) || (session !== undefined && !csrfMatches(session, request.headers['x-csrf-token']))) {
    throw new GatewayError('csrf_failed', 'This change was refused: it did not come from the portal page (CSRF token missing or wrong). Reload the page and try again.');
  }
}

export async function requireSession(deps: PortalDeps, request: FastifyRequest): Promise<LiveSession> {
  const session = await deps.sessions.read('portal', request.headers.cookie);
  if (session === undefined) throw new GatewayError('not_signed_in', 'Sign in to the portal first.');
  return session;
}

/** The account guard (a preHandler of every /portal/api/accounts/:accountId route). */
export function memberGuard(deps: PortalDeps) {
  return async (request: FastifyRequest<{ Params: { accountId?: string } }>, _reply: FastifyReply): Promise<void> => {
    const session = await requireSession(deps, request);
    checkChange(request, session);
    const accountId = request.params.accountId ?? '';
    const record = await deps.portal.membership(accountId, session.email);
    if (record === undefined) throw new GatewayError('account_not_found', `No account with id ${accountId}.`);
    if (request.routeOptions.config.ownerOnly === true && record.role !== 'owner') {
      throw new GatewayError('owner_only', "Only the account's owners may do this.");
    }
    request.member = { session, record };
  };
}

/** The member a guarded route runs for. */
export function memberOf(request: FastifyRequest): { session: LiveSession; record: MemberRecord } {
  if (request.member === undefined) throw new Error('portal route without its member guard');
  return request.member;
}
