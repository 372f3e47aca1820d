/**
 * GET /api/v1/key (beyond the spec): the calling key's own settings and usage, so a client
 * can budget itself: name, scopes, requests per minute, credit limits, today's and this
 * month's usage (per key family, as the limits count it) and when they reset. Any valid
 * key, whatever its scopes; never another key's data, never a secret. The request counts
 * toward the key's requests-per-minute window and carries its rate-limit headers.
 */
import type { FastifyInstance } from 'fastify';
import { microToCredits } from '../billing/money.ts';
import { rateLimitHeaders, type AccessGate } from '../gate/access-gate.ts';
import type { KeyService } from '../keys/key-service.ts';
import { invalidApiKey } from '../shared/errors.ts';
import { SCOPES } from '../shared/scopes.ts';
import { iso } from '../shared/time.ts';
import { HOLD_LIMITS, type HoldLimit } from '../store/limits.ts';
import { limitView } from '../admin/limit-fields.ts';

export interface KeyInfoRouteDeps {
  gate: AccessGate;
  keys: KeyService;
  /** The limit table whose key settings the answer shows (default the shipped one: src/store/limits.ts). */
  limits?: readonly HoldLimit[];
}

export function registerKeyInfoRoute(app: FastifyInstance, deps: KeyInfoRouteDeps): void {
  app.get('/api/v1/key', {
    config: { access: { scope: 'route', auth: 'required', rateHeaders: 'route' } },
  }, async (request, reply) => {
    const keyPass = request.keyPass;
    if (keyPass === undefined) throw invalidApiKey();
    // Every scope reaches its own key's data.
    const pass = await deps.gate.admit(keyPass, 'read', SCOPES);
    reply.headers(rateLimitHeaders(pass.rate));
    const key = pass.key.record;
    const usage = await deps.keys.usage(key.id);
    return {
      object: 'api_key',
      id: key.id,
      name: key.name,
      key_prefix: key.prefix,
      scopes: key.scopes,
      requests_per_minute: key.requestsPerMinute,
      ip_allowlist: key.ipAllowlist,
      ...limitView(deps.limits ?? HOLD_LIMITS, 'key', key),
      warning_threshold: key.warningThreshold,
      expires_at: key.expiresAt === null ? null : iso(key.expiresAt),
      created_at: iso(key.createdAt),
      usage: {
        day_credits: microToCredits(usage.day),
        month_credits: microToCredits(usage.month),
        day_resets_at: iso(usage.dayResetsAt),
        month_resets_at: iso(usage.monthResetsAt),
      },
    };
  });
}
