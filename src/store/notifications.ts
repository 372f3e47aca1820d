/** Limit notifications and the e-mail outbox. */

export type NotificationKind = 'warning' | 'limit_reached';
/** The alerting key limit's period, as its row names it (src/store/limits.ts): daily, monthly, or a later row's. */
export type LimitPeriod = string;
/** none: no e-mail wanted (switches off, no address); pending: queued or retrying; suppressed: over the account's 10 in 24 hours. */
export type MailState = 'none' | 'pending' | 'sent' | 'failed' | 'suppressed';

export interface NotificationRecord {
  id: number;
  accountId: string;
  keyId: string | null;
  keyFamilyId: string;
  kind: NotificationKind;
  limit: LimitPeriod;
  /** Start of the UTC day or month the alert belongs to. */
  periodStart: number;
  threshold: number;
  createdAt: number;
  mail: MailState;
}

/** An outbox row claimed for sending: the claimer holds its lease until `leaseUntil`. */
export interface ClaimedMail {
  id: number;
  accountId: string;
  /** The account's address now; null when it has none (mark the mail failed). */
  to: string | null;
  accountName: string;
  notification: NotificationRecord;
  attempts: number;
  leaseUntil: number;
}

export interface NotificationStore {
  /** Newest first. */
  listNotifications(accountId: string, limit: number): Promise<NotificationRecord[]>;
  /**
   * Claims up to `limit` due outbox rows with a lease, so two processes never send the same mail; a row whose
   * account already had 10 mails claimed in the last 24 hours is suppressed instead.
   */
  claimMail(owner: string, now: number, options: { limit: number; leaseMs: number }): Promise<ClaimedMail[]>;
  /** False when the lease was lost (another process may have sent it). */
  markMailSent(id: number, owner: string, at: number): Promise<boolean>;
  /** `retryAt` null gives up on the row. */
  markMailFailed(id: number, owner: string, error: string, retryAt: number | null): Promise<boolean>;
}
