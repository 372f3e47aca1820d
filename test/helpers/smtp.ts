/** A test SMTP server (smtp-server) that keeps every mail, decoded enough to read links from. */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface CapturedMail {
  to: string;
  /** The raw message with quoted-printable soft breaks and escapes undone. */
  text: string;
}

export interface TestSmtp {
  url: string;
  mails: CapturedMail[];
  /** The newest mail to `to`, waited for (bounded by polls, not by a clock). */
  waitFor(to: string, count?: number): Promise<CapturedMail>;
  close(): Promise<void>;
}

const decodeQuotedPrintable = (raw: string) =>
  raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));

export async function startSmtp(): Promise<TestSmtp> {
  const mails: CapturedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address).join(','), text: decodeQuotedPrintable(raw) });
        callback();
      });
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    async waitFor(to, count = 1) {
      for (let i = 0; i < 400; i++) {
        const found = mails.filter((m) => m.to === to);
        if (found.length >= count) return found[count - 1] as CapturedMail;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`no mail ${count} to ${to}`);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The portal sign-in link in a mail. */
export function linkIn(mail: CapturedMail): string {
  const match = /https?:\/\/\S+?\/portal\/#\/link\/[A-Za-z0-9_-]+/.exec(mail.text);
  if (match === null) throw new Error(`no link in mail:\n${mail.text}`);
  return match[0];
}
