/**
 * Key creation and edits from a JSON body (DECISIONS.md "Admin API"), shared by the admin API
 * and the customer portal: the same fields, defaults, checks and answers through either door.
 */
import { z } from 'zod';
import { parseAddressList } from '../gate/address-match.ts';
import { type KeyService, parseExpiry } from '../keys/key-service.ts';
import { GatewayError } from '../shared/errors.ts';
import { DEFAULT_SCOPES, SCOPES } from '../shared/scopes.ts';
import { HOLD_LIMITS, perTable, type HoldLimit } from '../store/limits.ts';
import type { ApiKeyRecord } from '../store/types.ts';
import { limitBodyFields, limitPatch } from './limit-fields.ts';
import { issuedKeyView, keyView } from './views.ts';

export { limitCredits, microOrNull } from './limit-fields.ts';

/** The key bodies with the key limits of a limit table (src/store/limits.ts). */
function buildKeyBodies(limits: readonly HoldLimit[]) {
  const limitFields = limitBodyFields(limits, 'key');
  const newKey = z.strictObject({
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
    ...limitFields,
    expires: z.string().default('never'),
    warning_threshold: z.number().min(0).max(1).default(0.8),
    email_alerts: z.boolean().default(false),
  });

  const patchKey = z.strictObject({
    name: z.string().trim().min(1).max(200).optional(),
    ...limitFields,
    warning_threshold: z.number().min(0).max(1).optional(),
    email_alerts: z.boolean().optional(),
  });
  return { newKey, patchKey };
}

/** The bodies of key creation and edits for these limits (built once per table). */
export const keyBodiesFor = perTable(buildKeyBodies);

export const { newKey: newKeyBody, patchKey: patchKeyBody } = keyBodiesFor(HOLD_LIMITS);

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

/** Creates a key of `accountId` from a request body; the answer carries the secret, once. */
export async function createKeyFromBody(keys: KeyService, accountId: string, rawBody: unknown, now: number, limits: readonly HoldLimit[] = HOLD_LIMITS) {
  const body = parseBody(keyBodiesFor(limits).newKey, rawBody);
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
    // A limit not sent is none.
    ...(Object.fromEntries(Object.entries(limitPatch(limits, 'key', body)).map(([field, value]) => [field, value ?? null])) as Pick<ApiKeyRecord, 'dailyLimit' | 'monthlyLimit'>),
    expiresAt: expiry.expiresAt,
    warningThreshold: body.warning_threshold,
    emailAlerts: body.email_alerts,
  });
  return issuedKeyView(issued.record, issued.secret, now, limits);
}

/** Edits a key's name, limits, threshold and alerts; scopes, rate and allowlist are fixed at creation (400). */
export async function patchKeyFromBody(keys: KeyService, keyId: string, rawBody: unknown, now: number, limits: readonly HoldLimit[] = HOLD_LIMITS) {
  const raw = (rawBody ?? {}) as Record<string, unknown>;
  const fixed = FIXED_KEY_FIELDS.filter((f) => typeof raw === 'object' && raw !== null && f in raw);
  if (fixed.length > 0) {
    const message = `${fixed.join(', ')} ${fixed.length === 1 ? 'is' : 'are'} fixed at creation and cannot be changed`;
    throw new GatewayError('validation_failed', message, {
      details: { formErrors: [], fieldErrors: Object.fromEntries(fixed.map((f) => [f, ['fixed at creation']])) },
    });
  }
  const body = parseBody(keyBodiesFor(limits).patchKey, rawBody);
  const updated: ApiKeyRecord = await keys.update(keyId, {
    name: body.name,
    ...limitPatch(limits, 'key', body),
    warningThreshold: body.warning_threshold,
    emailAlerts: body.email_alerts,
  });
  return keyView(updated, now, limits);
}
