/**
 * The e-mail outbox as the mail sender sees it: rows written by the store in the same
 * step as the notification (deduplicated there by key family, alert, limit and period,
 * and capped at 10 per account in 24 hours), claimed with a lease so two processes
 * never send the same mail, then marked sent or retried later.
 */
export interface OutboxMail {
  id: string;
  to: string;
  subject: string;
  text: string;
}

export interface MailOutbox {
  /** Claims up to `limit` mails due at `now`; a claim lasts `leaseMs`, after which another process may take it. */
  claimMail(limit: number, leaseMs: number, now: number, claimer: string): Promise<OutboxMail[]>;
  markMailSent(id: string, at: number): Promise<void>;
  /** The mail is tried again at `retryAt`. */
  markMailFailed(id: string, retryAt: number, error: string): Promise<void>;
}
