/**
 * Cookie sessions of the portal and of the admin dashboard (DECISIONS.md "Customer portal and
 * payments"): an unguessable id in an HttpOnly, SameSite=Lax cookie (Secure behind https), kept in
 * the store only as its SHA-256 hash, with a CSRF token that every change sends back. A sign-in
 * always mints a new id and ends the one the browser had (no fixation); sign-out ends it.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { parse, serialize } from 'cookie';
import type { PortalStore, SessionRealm, SessionRecord } from '../store/portal.ts';

/** How long a session lives after sign-in. */
export const SESSION_TTL_MS = 7 * 24 * 3_600_000;

const COOKIE: Record<SessionRealm, { name: string; path: string }> = {
  portal: { name: 'mg_portal', path: '/portal' },
  admin: { name: 'mg_admin', path: '/admin' },
};

export const hashSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex');
export const newSecret = (): string => randomBytes(32).toString('base64url');

export interface LiveSession extends SessionRecord {
  idHash: string;
}

export interface SessionOptions {
  store: PortalStore;
  /** Cookies carry Secure when the gateway's public origin is https. */
  secure: boolean;
  now: () => number;
}

export class Sessions {
  constructor(private readonly options: SessionOptions) {}

  /** Starts a session for `email` and answers its Set-Cookie; the session the browser had (if any) ends. */
  async start(realm: SessionRealm, email: string, cookieHeader: string | undefined): Promise<{ setCookie: string; session: LiveSession }> {
    const previous = this.idOf(realm, cookieHeader);
    if (previous !== undefined) await this.options.store.endSession(hashSecret(previous));
    const id = newSecret();
    const now = this.options.now();
    const session: LiveSession = { realm, email, csrfToken: newSecret(), createdAt: now, expiresAt: now + SESSION_TTL_MS, idHash: hashSecret(id) };
    await this.options.store.createSession(session.idHash, session);
    const { name, path } = COOKIE[realm];
    const setCookie = serialize(name, id, {
      httpOnly: true, sameSite: 'lax', secure: this.options.secure, path, maxAge: Math.floor(SESSION_TTL_MS / 1000),
    });
    return { setCookie, session };
  }

  /** The request's live session of `realm`, if any. */
  async read(realm: SessionRealm, cookieHeader: string | undefined): Promise<LiveSession | undefined> {
    const id = this.idOf(realm, cookieHeader);
    if (id === undefined) return undefined;
    const idHash = hashSecret(id);
    const session = await this.options.store.session(idHash, this.options.now());
    return session === undefined || session.realm !== realm ? undefined : { ...session, idHash };
  }

  /** Ends the request's session (if any) and answers the Set-Cookie that clears it. */
  async end(realm: SessionRealm, cookieHeader: string | undefined): Promise<string> {
    const id = this.idOf(realm, cookieHeader);
    if (id !== undefined) await this.options.store.endSession(hashSecret(id));
    const { name, path } = COOKIE[realm];
    return serialize(name, '', { httpOnly: true, sameSite: 'lax', secure: this.options.secure, path, maxAge: 0 });
  }

  private idOf(realm: SessionRealm, cookieHeader: string | undefined): string | undefined {
    if (cookieHeader === undefined) return undefined;
    const value = parse(cookieHeader)[COOKIE[realm].name];
    return value === undefined || value === '' ? undefined : value;
  }
}

/** The CSRF token sent with a change matches the session's (compared in constant time). */
export function csrfMatches(session: SessionRecord, sent: string | string[] | undefined): boolean {
  if (typeof sent !== 'string') return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(session.csrfToken);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * A request another site's page made (a form or fetch from elsewhere): refused on every change,
 * also before sign-in, where no CSRF token exists yet (a login CSRF would sign a person into
 * someone else's account).
 */
export function crossSite(headers: { origin?: string; host?: string; 'sec-fetch-site'?: string | string[] }): boolean {
  const site = headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') return true;
  const origin = headers.origin;
  if (origin === undefined || origin === 'null') return origin === 'null';
  try {
    return new URL(origin).host !== headers.host;
  } catch {
    return true;
  }
}
