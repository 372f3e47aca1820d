/**
 * The access gate every authenticated route passes, in the spec's order:
 * key (401), IP allowlist (403), scope (403), requests-per-minute limit (429).
 * A route whose scope depends on what it is asked (GET /jobs/{id}) gets the first two
 * from `identify` and runs the last two through `admit` once it knows the scope.
 */
import { GatewayError, invalidApiKey } from '../shared/errors.ts';
import { isWellFormedKey } from '../keys/key-secret.ts';
import { hasScope, type Scope } from '../shared/scopes.ts';
import type { AddressMatcher } from './address-match.ts';
import { resolveClientAddress, type ClientAddress } from './client-address.ts';
import type { KeyCache, ResolvedKey } from './key-cache.ts';
import { requestsPerMinute, type RateLimitDecision, type RateLimiter } from './rate-limit/rate-limiter.ts';

export interface GateRequest {
  authorization: string | undefined;
  socketAddress: string | undefined;
  forwardedFor: string | string[] | undefined;
}

/** A key past the key and IP checks; its scope check and request count are still to come. */
export interface KeyPass {
  key: ResolvedKey;
  /** The client address as text (worked out on demand: trial rules need it); null when it cannot be determined. */
  clientAddress(): string | null;
}

/** A request let in: key, IP, scope and the requests-per-minute count all passed. */
export interface GatePass extends KeyPass {
  rate: RateLimitDecision;
}

export class AccessGate {
  constructor(
    private readonly keys: KeyCache,
    private readonly limiter: RateLimiter,
    private readonly trustProxy: AddressMatcher | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether the request carries any credentials (the public catalog is free without them). */
  static hasCredentials(request: GateRequest): boolean {
    return request.authorization !== undefined;
  }

  /**
   * The client address as text for the trial rules, on every paid request: without
   * TRUST_PROXY it is the socket address as Node gives it (already canonical; an
   * IPv4-mapped IPv6 address read as IPv4), without parsing it.
   */
  clientAddressText(request: GateRequest): string | null {
    if (this.trustProxy === undefined) {
      const socket = request.socketAddress;
      if (socket === undefined) return null;
      return socket.startsWith('::ffff:') && socket.includes('.') ? socket.slice(7) : socket;
    }
    return this.clientAddress(request).parsed?.toString() ?? null;
  }

  clientAddress(request: GateRequest): ClientAddress {
    return resolveClientAddress(request.socketAddress, request.forwardedFor, this.trustProxy);
  }

  /**
   * Lets the request in or throws a GatewayError. `rate` on a thrown 403 is the
   * window's state without this request (it is not counted).
   */
  async check(request: GateRequest, scope: Scope): Promise<GatePass> {
    return this.admit(await this.identify(request), scope);
  }

  /** The key and IP checks (401, 403 ip_not_allowed); nothing is counted yet. */
  async identify(request: GateRequest): Promise<KeyPass> {
    const { key, now } = await this.validKey(request);
    const record = key.record;
    // The client address is worked out only for keys with an allowlist (off the hot path otherwise).
    if (key.allowlist !== undefined) {
      const client = this.clientAddress(request);
      if (client.parsed === undefined || !key.allowlist.matches(client.parsed)) {
        throw await this.refuse(record.id, record.requestsPerMinute, now,
          new GatewayError('ip_not_allowed', `Requests from ${client.text ?? 'unknown'} are not allowed for this API key`));
      }
    }
    return { key, clientAddress: () => this.clientAddressText(request) };
  }

  /**
   * The scope check, then the request is counted (429 when the window is full). The key
   * needs `scope` or, where a route allows it, one of `orAnyOf`; a refusal names `scope`
   * and is not counted.
   */
  async admit(pass: KeyPass, scope: Scope, orAnyOf: readonly Scope[] = []): Promise<GatePass> {
    const record = pass.key.record;
    const now = this.now();
    if (!hasScope(record.scopes, scope) && !orAnyOf.some((other) => hasScope(record.scopes, other))) {
      throw await this.refuse(record.id, record.requestsPerMinute, now,
        new GatewayError('insufficient_scope', `This API key lacks the '${scope}' scope`));
    }
    const rate = await this.limiter.hit(requestsPerMinute(record.requestsPerMinute), record.id, now);
    if (!rate.allowed) {
      throw new GatewayError('rate_limit_exceeded', `Rate limit of ${rate.limit} requests per minute exceeded. Retry after ${rate.resetSeconds} seconds.`, {
        headers: rateLimitHeaders(rate),
      });
    }
    return { key: pass.key, rate, clientAddress: pass.clientAddress };
  }

  /** A known key that is neither revoked nor expired, or 401 invalid_api_key. */
  private async validKey(request: GateRequest): Promise<{ key: ResolvedKey; now: number }> {
    const secret = bearerSecret(request.authorization);
    if (secret === undefined) throw invalidApiKey();
    const key = await this.keys.resolve(secret);
    const now = this.now();
    if (key === undefined || key.record.revokedAt !== null || (key.record.expiresAt !== null && now >= key.record.expiresAt)) {
      throw invalidApiKey();
    }
    return { key, now };
  }

  private async refuse(keyId: string, limit: number, now: number, error: GatewayError): Promise<RefusedAfterKey> {
    const rate = await this.limiter.peek(requestsPerMinute(limit), keyId, now);
    return new RefusedAfterKey(error, rate);
  }
}

/** A 403 after the key check, with the key's window state for routes that send rate-limit headers. */
export class RefusedAfterKey extends Error {
  constructor(
    readonly error: GatewayError,
    readonly rate: RateLimitDecision,
  ) {
    super(error.message);
  }
}

export function rateLimitHeaders(rate: RateLimitDecision): Record<string, string> {
  return {
    'x-ratelimit-limit': String(rate.limit),
    'x-ratelimit-remaining': String(rate.remaining),
    'x-ratelimit-reset': String(rate.resetSeconds),
  };
}

/**
 * The credentials of a route that also takes the key in `x-api-key` (the Anthropic SDKs), as an
 * Authorization value: `x-api-key` alone stands for `Bearer <key>`; both present and naming
 * different keys is no key at all (401), never a choice between them.
 */
export function authorizationWithApiKey(authorization: string | undefined, apiKey: string | string[] | undefined): string | undefined {
  if (apiKey === undefined) return authorization;
  const key = Array.isArray(apiKey) ? undefined : apiKey.trim();
  if (key === undefined || key === '') return 'Bearer -';
  if (authorization === undefined) return `Bearer ${key}`;
  return bearerSecret(authorization) === key ? authorization : 'Bearer -';
}

function bearerSecret(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (match === null) return undefined;
  const secret = match[1] as string;
  return isWellFormedKey(secret) ? secret : undefined;
}
