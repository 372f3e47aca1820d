/**
 * Sends the outbox in the background through SMTP (nodemailer), so a notification
 * never delays or fails the request that caused it: a hanging server costs a claim's
 * lease and a retry, never a client's time.
 */
import type { FastifyBaseLogger } from 'fastify';
import nodemailer, { type Transporter } from 'nodemailer';
import type { MailOutbox } from './outbox.ts';

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

/** Retry after 1, 2, 4 … minutes, at most an hour. */
function retryDelay(attempt: number): number {
  return Math.min(60 * 60_000, 60_000 * 2 ** Math.min(attempt - 1, 6));
}

export class MailSender {
  private readonly transport: Transporter;
  private readonly timer: NodeJS.Timeout;
  private running: Promise<void> | undefined;
  private readonly failures = new Map<string, number>();
  private readonly now: () => number;
  private readonly timeoutMs: number;

  constructor(private readonly options: MailSenderOptions) {
    this.now = options.now ?? Date.now;
    this.timeoutMs = options.timeoutMs ?? 15_000;
    const url = new URL(options.smtpUrl);
    this.transport = nodemailer.createTransport({
      host: url.hostname,
      port: url.port === '' ? (url.protocol === 'smtps:' ? 465 : 587) : Number(url.port),
      secure: url.protocol === 'smtps:',
      auth: url.username === '' ? undefined : { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) },
      connectionTimeout: this.timeoutMs,
      greetingTimeout: this.timeoutMs,
      socketTimeout: this.timeoutMs,
    });
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
    const { outbox, logger } = this.options;
    let mails;
    try {
      mails = await outbox.claimMail(20, this.timeoutMs * 2, this.now(), this.options.claimer);
    } catch (err) {
      logger.error({ err }, 'reading the mail outbox failed');
      return;
    }
    for (const mail of mails) {
      try {
        await this.transport.sendMail({ from: this.options.from, to: mail.to, subject: mail.subject, text: mail.text });
        this.failures.delete(mail.id);
        await outbox.markMailSent(mail.id, this.now());
      } catch (err) {
        const attempt = (this.failures.get(mail.id) ?? 0) + 1;
        this.failures.set(mail.id, attempt);
        logger.warn({ err, mailId: mail.id, attempt }, 'sending a notification e-mail failed; it will be retried');
        await outbox.markMailFailed(mail.id, this.now() + retryDelay(attempt), err instanceof Error ? err.message : String(err)).catch(() => undefined);
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
    this.transport.close();
  }
}
