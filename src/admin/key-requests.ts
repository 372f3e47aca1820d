/**
 * Key creation and edits from a JSON body (DECISIONS.md "Admin API"), shared by the admin API
 * and the customer portal: the same fields, defaults, checks and answers through either door.
 */
import { z } from 'zod';
import { creditsToMicro } from '../billing/money.ts';
import { parseAddressList } from '../gate/address-match.ts';
import { type KeyService, parseExpiry } from '../keys/key-service.ts';
import { GatewayError } from '../shared/errors.ts';
import { DEFAULT_SCOPES, SCOPES } from '../shared/scopes.ts';
import type { ApiKeyRecord } from '../store/types.ts';
import { issuedKeyView, keyView } from './views.ts';

const credits = z.number().finite().nonnegative().max(1e12);
export const limitCredits = credits.nullable().optional();

export const newKeyBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  scopes: z.array(z.enum(SCOPES)).min(1).default([...DEFAULT_SCOPES]),
  requests_per_minute: z.number().int().min(60).max(6000).default(600),
  ip_allowlist: z
    .array(z.string())
    .max(50)
    .default([])
    .superRefine((entries, ctx) => {
      const parsed = parseAddressList(entries);
      if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.error });
    }),
  daily_limit_credits: limitCredits,
  monthly_limit_credits: limitCredits,
  expires: z.string().default('never'),
  warning_threshold: z.number().min(0).max(1).default(0.8),
  email_alerts: z.boolean().default(false),
});

export const patchKeyBody = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  daily_limit_credits: limitCredits,
  monthly_limit_credits: limitCredits,
  warning_threshold: z.number().min(0).max(1).optional(),
  email_alerts: z.boolean().optional(),
});

/** Fields fixed at creation: a clear 400 instead of zod's generic "unrecognized key". */
const FIXED_KEY_FIELDS = ['scopes', 'requests_per_minute', 'ip_allowlist', 'expires'] as const;

/** A body checked against its schema, or 400 validation_failed naming every bad field. */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const flat = z.flattenError(result.error);
  const fields = Object.entries(flat.fieldErrors as Record<string, string[]>).map(([field, messages]) => `${field}: ${messages.join('; ')}`);
  const message = [...flat.formErrors, ...fields].join('; ') || 'Invalid request body.';
  throw new GatewayError('validation_failed', message, {
    details: { formErrors: flat.formErrors, fieldErrors: flat.fieldErrors as Record<string, string[]> },
  });
}

/** Decimal credits → micro-credits, keeping undefined (not sent) and null (no limit) apart. */
export const microOrNull = (value: number | null | undefined) => (value === undefined ? undefined : value === null ? null : creditsToMicro(value));

/** Creates a key of `accountId` from a request body; the answer carries the secret, once. */
export async function createKeyFromBody(keys: KeyService, accountId: string, rawBody: unknown, now: number) {
  const body = parseBody(newKeyBody, rawBody);
  const expiry = parseExpiry(body.expires, now);
  if (!expiry.ok) {
    throw new GatewayError('validation_failed', `expires: ${expiry.error}`, {
      details: { formErrors: [], fieldErrors: { expires: [expiry.error] } },
    });
  }
  const issued = await keys.create(accountId, {
    name: body.name,
    scopes: [...new Set(body.scopes)],
    requestsPerMinute: body.requests_per_minute,
    ipAllowlist: body.ip_allowlist.map((e) => e.trim()),
    dailyLimit: microOrNull(body.daily_limit_credits) ?? null,
    monthlyLimit: microOrNull(body.monthly_limit_credits) ?? null,
    expiresAt: expiry.expiresAt,
    warningThreshold: body.warning_threshold,
    emailAlerts: body.email_alerts,
  });
  return issuedKeyView(issued.record, issued.secret, now);
}

/** Edits a key's name, limits, threshold and alerts; scopes, rate and allowlist are fixed at creation (400). */
export async function patchKeyFromBody(keys: KeyService, keyId: string, rawBody: unknown, now: number) {
  const raw = (rawBody ?? {}) as Record<string, unknown>;
  const fixed = FIXED_KEY_FIELDS.filter((f) => typeof raw === 'object' && raw !== null && f in raw);
  if (fixed.length > 0) {
    const message = `${fixed.join(', ')} ${fixed.length === 1 ? 'is' : 'are'} fixed at creation and cannot be changed`;
    throw new GatewayError('validation_failed', message, {
      details: { formErrors: [], fieldErrors: Object.fromEntries(fixed.map((f) => [f, ['fixed at creation']])) },
    });
  }
  const body = parseBody(patchKeyBody, rawBody);
  const updated: ApiKeyRecord = await keys.update(keyId, {
    name: body.name,
    dailyLimit: microOrNull(body.daily_limit_credits),
    monthlyLimit: microOrNull(body.monthly_limit_credits),
    warningThreshold: body.warning_threshold,
    emailAlerts: body.email_alerts,
  });
  return keyView(updated, now);
}
