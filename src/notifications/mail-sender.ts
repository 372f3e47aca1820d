/**
 * Sends the notification outbox in the background through SMTP (nodemailer), so a
 * notification never delays or fails the request that caused it. The store wrote the
 * outbox row in the hold's own step, deduplicated by key family, alert, limit and period
 * and capped at 10 per account in 24 hours; here a row is claimed with a lease (two
 * processes never send the same mail), sent, and marked, or retried with backoff.
 */
import type { FastifyBaseLogger } from 'fastify';
import nodemailer, { type Transporter } from 'nodemailer';
import { iso } from '../shared/time.ts';
import { PERIODS, periodCalled } from '../store/limits.ts';
import type { ClaimedMail, KeyStore, NotificationStore } from '../store/types.ts';

/** The outbox's rows, and the key a mail names. */
export interface MailOutbox {
  notifications: Pick<NotificationStore, 'claimMail' | 'markMailSent' | 'markMailFailed'>;
  keys: Pick<KeyStore, 'getKey'>;
}

export interface MailSenderOptions {
  smtpUrl: string;
  from: string;
  outbox: MailOutbox;
  logger: FastifyBaseLogger;
  /** Who claims (the gateway process id). */
  claimer: string;
  /** How often the outbox is read (ms). */
  intervalMs?: number;
  /** How long one SMTP conversation may take before it is given up (ms). */
  timeoutMs?: number;
  now?: () => number;
}

/** Retry after 1, 2, 4 … minutes, at most an hour; given up after 12 attempts (counted by the claims). */
const MAX_ATTEMPTS = 12;
function retryDelay(attempt: number): number {
  return Math.min(60 * 60_000, 60_000 * 2 ** Math.min(Math.max(attempt - 1, 0), 6));
}

/** The mail's subject and text, in words. */
export function mailText(mail: ClaimedMail, keyName: string): { subject: string; text: string } {
  const n = mail.notification;
  // The key limit's period, by the name its row gives it (src/store/limits.ts).
  const limitPeriod = periodCalled(n.limit) ?? PERIODS.month;
  const period = limitPeriod.adjective;
  const resets = limitPeriod.next(n.periodStart);
  const subject = n.kind === 'warning'
    ? `Model Gateway: API key "${keyName}" has used ${Math.round(n.threshold * 100)}% of its ${period} credit limit`
    : `Model Gateway: API key "${keyName}" reached its ${period} credit limit`;
  const text = [
    `Account: ${mail.accountName}`,
    `API key: ${keyName}${n.keyId === null ? '' : ` (${n.keyId})`}`,
    n.kind === 'warning'
      ? `The key has used ${Math.round(n.threshold * 100)}% of its ${period} credit limit.`
      : `A request with this key was refused (429 api_key_limit_exceeded): it would have passed the key's ${period} credit limit.`,
    `The limit frees up at ${iso(resets)}.`,
    'You receive at most one such e-mail per key, alert and period. Limits are changed in the admin API or dashboard.',
  ].join('\n');
  return { subject, text };
}

/** A nodemailer transport for SMTP_URL (`smtp://` or `smtps://`, with user and password when given). */
export function smtpTransport(smtpUrl: string, timeoutMs: number): Transporter {
  const url = new URL(smtpUrl);
  return nodemailer.createTransport({
    host: url.hostname,
    port: url.port === '' ? (url.protocol === 'smtps:' ? 465 : 587) : Number(url.port),
    secure: url.protocol === 'smtps:',
    auth: url.username === '' ? undefined : { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) },
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
}

export class MailSender {
  private readonly transport: Transporter;
  private readonly timer: NodeJS.Timeout;
  private running: Promise<void> | undefined;
  private readonly now: () => number;
  private readonly timeoutMs: number;

  constructor(private readonly options: MailSenderOptions) {
    this.now = options.now ?? Date.now;
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.transport = smtpTransport(options.smtpUrl, this.timeoutMs);
    this.timer = setInterval(() => void this.drain(), options.intervalMs ?? 1_000);
    this.timer.unref();
  }

  /** Sends what is due now; one drain at a time. Resolves when this pass is done. */
  drain(): Promise<void> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async pass(): Promise<void> {
    const { outbox, logger, claimer } = this.options;
    let mails: ClaimedMail[];
    try {
      mails = await outbox.notifications.claimMail(claimer, this.now(), { limit: 20, leaseMs: this.timeoutMs * 3 });
    } catch (err) {
      logger.error({ err }, 'reading the mail outbox failed');
      return;
    }
    for (const mail of mails) {
      try {
        if (mail.to === null) {
          await outbox.notifications.markMailFailed(mail.id, claimer, 'the account has no e-mail address', null);
          continue;
        }
        const key = mail.notification.keyId === null ? undefined : await outbox.keys.getKey(mail.notification.keyId);
        const { subject, text } = mailText(mail, key?.name ?? 'unknown key');
        await this.transport.sendMail({ from: this.options.from, to: mail.to, subject, text });
        await outbox.notifications.markMailSent(mail.id, claimer, this.now());
      } catch (err) {
        const attempt = mail.attempts;
        logger.warn({ err, mailId: mail.id, attempt }, 'sending a notification e-mail failed; it will be retried');
        const retryAt = attempt >= MAX_ATTEMPTS ? null : this.now() + retryDelay(attempt);
        await outbox.notifications.markMailFailed(mail.id, claimer, err instanceof Error ? err.message : String(err), retryAt).catch(() => undefined);
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
    this.transport.close();
  }
}
