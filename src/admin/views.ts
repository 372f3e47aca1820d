/** JSON shapes of the admin API (DECISIONS.md): decimal credits, ISO times. */
import { microToCredits } from '../billing/money.ts';
import { iso } from '../shared/time.ts';
import { HOLD_LIMITS, type HoldLimit } from '../store/limits.ts';
import type { AccountRecord, ApiKeyRecord, LedgerEntry, NotificationRecord } from '../store/types.ts';
import { limitView } from './limit-fields.ts';

/** `limits`: the limit table whose settings the answer shows (src/store/limits.ts). */
export function accountView(account: AccountRecord, monthSpent: number, limits: readonly HoldLimit[] = HOLD_LIMITS) {
  return {
    id: account.id,
    name: account.name,
    email: account.email,
    created_at: iso(account.createdAt),
    has_purchase: account.hasPurchase,
    billing_emails: account.billingEmails,
    balance_credits: microToCredits(account.balance),
    held_credits: microToCredits(account.held),
    available_credits: microToCredits(account.balance - account.held),
    ...limitView(limits, 'account', account),
    month_spent_credits: microToCredits(monthSpent),
  };
}

export function keyView(key: ApiKeyRecord, now: number, limits: readonly HoldLimit[] = HOLD_LIMITS) {
  return {
    id: key.id,
    account_id: key.accountId,
    name: key.name,
    key_prefix: key.prefix,
    scopes: key.scopes,
    requests_per_minute: key.requestsPerMinute,
    ip_allowlist: key.ipAllowlist,
    ...limitView(limits, 'key', key),
    expires_at: key.expiresAt === null ? null : iso(key.expiresAt),
    warning_threshold: key.warningThreshold,
    email_alerts: key.emailAlerts,
    created_at: iso(key.createdAt),
    revoked_at: key.revokedAt === null ? null : iso(key.revokedAt),
    status: key.revokedAt !== null ? 'revoked' : key.expiresAt !== null && key.expiresAt <= now ? 'expired' : 'active',
  };
}

/** The one answer that carries the full secret (creation and rotation). */
export function issuedKeyView(key: ApiKeyRecord, secret: string, now: number, limits: readonly HoldLimit[] = HOLD_LIMITS) {
  const { id, ...rest } = keyView(key, now, limits);
  return { id, key: secret, ...rest };
}

export function ledgerView(entry: LedgerEntry) {
  return {
    id: entry.id,
    job_id: entry.jobId,
    key_id: entry.keyId,
    kind: entry.kind,
    // DECISIONS.md: a Stripe refund is a payment_refund row with negative credits.
    credits: microToCredits(entry.kind === 'payment_refund' ? -entry.amount : entry.amount),
    created_at: iso(entry.createdAt),
  };
}

/** DECISIONS.md: `emailed` is true once the e-mail went out. */
export function notificationView(n: NotificationRecord) {
  return {
    kind: n.kind,
    key_id: n.keyId,
    limit: n.limit,
    threshold: n.threshold,
    created_at: iso(n.createdAt),
    emailed: n.mail === 'sent',
  };
}
