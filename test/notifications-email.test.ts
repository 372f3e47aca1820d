/**
 * Limit notifications and their e-mail (spec "Other notifications"), against a real SMTP
 * server started here (smtp-server): one mail per key, alert and period; none when the
 * key's e-mail switch or the account's billing e-mails are off; at most 10 per account in
 * 24 hours; the in-product notification always; a request never slowed by a hanging SMTP.
 */
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from './helpers/chat.ts';

const body = { model: 'gpt-test', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 1000 };
const big = { ...body, max_tokens: 4000 };

interface Mail {
  to: string;
  text: string;
}

async function smtpServer(): Promise<{ url: string; mails: Mail[]; close(): Promise<void> }> {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      let text = '';
      stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address).join(','), text });
        callback();
      });
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  const port = (server.server.address() as AddressInfo).port;
  return { url: `smtp://127.0.0.1:${port}`, mails, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

async function until(check: () => boolean, ms = 8_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
}

// Concurrent: each test has accounts and addresses of its own, and most of its time is the wait
// that shows no further mail comes.
describe.concurrent('limit notifications and e-mail', () => {
  let smtp: Awaited<ReturnType<typeof smtpServer>>;
  let h: ChatHarness;
  let hold: number;

  beforeAll(async () => {
    smtp = await smtpServer();
    h = await startChatHarness({ SMTP_URL: smtp.url, MAIL_FROM: 'gateway@acme.test' });
    h.openai.setDefault({ kind: 'text', text: 'ok', usage: { input: 10, output: 1 } });
    const probe = await h.gw.account({ credits: 100 });
    expect((await h.gw.api('/chat/completions', { key: probe.key, body })).status).toBe(200);
    const ledger = (await h.gw.admin('GET', `/admin/v1/accounts/${probe.accountId}/ledger`)).json as { kind: string; credits: number }[];
    hold = Math.round((ledger.find((e) => e.kind === 'hold')?.credits ?? 0) * 1_000_000);
  });
  afterAll(async () => {
    await h.close();
    await smtp.close();
  });

  /** An account with an address and one key whose daily limit is 1.2 holds (one hold crosses 80 %). */
  async function alertingKey(options: { emailAlerts?: boolean; billingEmails?: boolean; email?: string } = {}) {
    const email = options.email ?? `ops-${Math.random().toString(36).slice(2)}@acme.test`;
    const created = await h.gw.admin('POST', '/admin/v1/accounts', { name: 'Acme', email, has_purchase: true, billing_emails: options.billingEmails ?? true });
    const accountId = created.json.id as string;
    await h.gw.admin('POST', `/admin/v1/accounts/${accountId}/credits`, { credits: 100, purchase: true });
    const key = await h.gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { name: 'server', daily_limit_credits: (1.2 * hold) / 1_000_000, email_alerts: options.emailAlerts ?? true });
    return { accountId, email, key: key.json.key as string, keyId: key.json.id as string };
  }

  const mailsTo = (email: string) => smtp.mails.filter((m) => m.to === email);

  it('crossing the warning threshold and reaching the limit: one mail each per key, alert and day, and the notifications', async () => {
    const k = await alertingKey();
    for (let i = 0; i < 3; i++) expect((await h.gw.api('/chat/completions', { key: k.key, body })).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await h.gw.api('/chat/completions', { key: k.key, body: big })).status).toBe(429);
    await until(() => mailsTo(k.email).length >= 2);
    await new Promise((r) => setTimeout(r, 2_500));
    const mails = mailsTo(k.email);
    expect(mails).toHaveLength(2);
    expect(mails.some((m) => /80%/.test(m.text) && /daily/.test(m.text))).toBe(true);
    expect(mails.some((m) => /was refused \(429 api_key_limit_exceeded\)/.test(m.text))).toBe(true);
    const notifications = (await h.gw.admin('GET', `/admin/v1/accounts/${k.accountId}/notifications`)).json as { kind: string; key_id: string; limit: string; emailed: boolean }[];
    expect(notifications.map((n) => n.kind).sort()).toEqual(['limit_reached', 'warning']);
    for (const n of notifications) expect(n).toMatchObject({ key_id: k.keyId, limit: 'daily', emailed: true });
  });

  it('no mail when the key\'s e-mail switch or the account\'s billing e-mails are off; the notification is still there', async () => {
    const quietKey = await alertingKey({ emailAlerts: false });
    const quietAccount = await alertingKey({ billingEmails: false });
    for (const k of [quietKey, quietAccount]) {
      expect((await h.gw.api('/chat/completions', { key: k.key, body })).status).toBe(200);
      expect((await h.gw.api('/chat/completions', { key: k.key, body: big })).status).toBe(429);
    }
    await new Promise((r) => setTimeout(r, 2_500));
    for (const k of [quietKey, quietAccount]) {
      expect(mailsTo(k.email)).toHaveLength(0);
      const notifications = (await h.gw.admin('GET', `/admin/v1/accounts/${k.accountId}/notifications`)).json as { kind: string; emailed: boolean }[];
      expect(notifications.map((n) => n.kind).sort()).toEqual(['limit_reached', 'warning']);
      for (const n of notifications) expect(n.emailed).toBe(false);
    }
  });

  it('at most 10 mails per account in 24 hours, however many alerts', async () => {
    const email = `busy-${Math.random().toString(36).slice(2)}@acme.test`;
    const created = await h.gw.admin('POST', '/admin/v1/accounts', { name: 'Busy', email, has_purchase: true });
    const accountId = created.json.id as string;
    await h.gw.admin('POST', `/admin/v1/accounts/${accountId}/credits`, { credits: 100, purchase: true });
    for (let i = 0; i < 12; i++) {
      const key = (await h.gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { name: `k${i}`, daily_limit_credits: 0.000001, email_alerts: true })).json.key as string;
      expect((await h.gw.api('/chat/completions', { key, body })).status).toBe(429);
    }
    await until(() => mailsTo(email).length >= 10);
    await new Promise((r) => setTimeout(r, 2_500));
    expect(mailsTo(email)).toHaveLength(10);
    const notifications = (await h.gw.admin('GET', `/admin/v1/accounts/${accountId}/notifications`)).json as unknown[];
    expect(notifications).toHaveLength(12);
  });
});

describe('a hanging SMTP server', () => {
  let h: ChatHarness;
  let hanging: Server;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    // Accepts connections and never says a word.
    hanging = createServer((socket) => sockets.push(socket));
    hanging.listen(0, '127.0.0.1');
    await once(hanging, 'listening');
    const port = (hanging.address() as AddressInfo).port;
    h = await startChatHarness({ SMTP_URL: `smtp://127.0.0.1:${port}` });
    h.openai.setDefault({ kind: 'text', text: 'ok', usage: { input: 10, output: 1 } });
  });
  afterAll(async () => {
    await h.close();
    for (const s of sockets) s.destroy();
    hanging.close();
  });

  it('does not slow a request whose hold queued a mail', async () => {
    const created = await h.gw.admin('POST', '/admin/v1/accounts', { name: 'Acme', email: 'ops@acme.test', has_purchase: true });
    const accountId = created.json.id as string;
    await h.gw.admin('POST', `/admin/v1/accounts/${accountId}/credits`, { credits: 100, purchase: true });
    const key = (await h.gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { name: 'k', daily_limit_credits: 0.000001, email_alerts: true })).json.key as string;
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      expect((await h.gw.api('/chat/completions', { key, body })).status).toBe(429);
      times.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, 300));
    }
    await until(() => sockets.length > 0, 3_000);
    expect(sockets.length).toBeGreaterThan(0);
    expect(Math.max(...times)).toBeLessThan(1_000);
    const notifications = (await h.gw.admin('GET', `/admin/v1/accounts/${accountId}/notifications`)).json as { emailed: boolean }[];
    expect(notifications).toHaveLength(1);
    expect(notifications[0]?.emailed).toBe(false);
  });
});
