/** The mail sender against a real SMTP server (smtp-server): sends what is due once, retries a failure, never blocks. */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { SMTPServer } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { MailSender } from './mail-sender.ts';
import type { MailOutbox, OutboxMail } from './outbox.ts';

class MemoryOutbox implements MailOutbox {
  readonly sent: string[] = [];
  readonly failed: string[] = [];
  private readonly due = new Map<string, { mail: OutboxMail; at: number }>();

  add(mail: OutboxMail): void {
    this.due.set(mail.id, { mail, at: 0 });
  }

  async claimMail(limit: number, leaseMs: number, now: number): Promise<OutboxMail[]> {
    const out: OutboxMail[] = [];
    for (const entry of this.due.values()) {
      if (out.length >= limit || entry.at > now) continue;
      entry.at = now + leaseMs;
      out.push(entry.mail);
    }
    return out;
  }

  async markMailSent(id: string): Promise<void> {
    this.due.delete(id);
    this.sent.push(id);
  }

  async markMailFailed(id: string, retryAt: number): Promise<void> {
    const entry = this.due.get(id);
    if (entry !== undefined) entry.at = retryAt;
    this.failed.push(id);
  }
}

async function smtp(onData: (text: string) => void, options: { reject?: boolean } = {}) {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      let text = '';
      stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
      stream.on('end', () => {
        if (options.reject === true) return callback(new Error('mailbox unavailable'));
        onData(text);
        callback();
      });
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  const port = (server.server.address() as AddressInfo).port;
  return { url: `smtp://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const logger = pino({ level: 'silent' });
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe('mail sender', () => {
  it('sends each due mail once and marks it sent', async () => {
    const received: string[] = [];
    const server = await smtp((text) => received.push(text));
    closers.push(server.close);
    const outbox = new MemoryOutbox();
    outbox.add({ id: 'm1', to: 'ops@acme.test', subject: 'Key "server" used 80% of its daily limit', text: 'Hello' });
    const sender = new MailSender({ smtpUrl: server.url, from: 'gateway@acme.test', outbox, logger, claimer: 'p1', intervalMs: 60_000 });
    closers.push(() => sender.close());
    await sender.drain();
    await sender.drain();
    expect(outbox.sent).toEqual(['m1']);
    expect(received).toHaveLength(1);
    expect(received[0]).toMatch(/Subject: (.|\r\n )*daily(.|\r\n )*limit/);
    expect(received[0]).toContain('To: ops@acme.test');
  });

  it('a refused mail is retried later, not lost', async () => {
    const server = await smtp(() => undefined, { reject: true });
    closers.push(server.close);
    const outbox = new MemoryOutbox();
    outbox.add({ id: 'm2', to: 'ops@acme.test', subject: 's', text: 't' });
    let now = 1_000_000;
    const sender = new MailSender({ smtpUrl: server.url, from: 'gateway@acme.test', outbox, logger, claimer: 'p1', intervalMs: 60_000, now: () => now });
    closers.push(() => sender.close());
    await sender.drain();
    expect(outbox.failed).toEqual(['m2']);
    await sender.drain();
    expect(outbox.failed).toEqual(['m2']);
    now += 61_000;
    await sender.drain();
    expect(outbox.failed).toEqual(['m2', 'm2']);
    expect(outbox.sent).toEqual([]);
  });
});
