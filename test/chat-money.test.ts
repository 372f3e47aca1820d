/** Money under pressure: concurrent holds never spend the same credits; a crash loses nothing. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../emulators/index.ts';
import type { Emulator } from '../emulators/types.ts';
import { chatCatalog, money, startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { writeCatalog } from './fixtures/catalog.ts';
import { ADMIN_TOKEN, http } from './helpers/gateway.ts';

const hi = [{ role: 'user', content: 'Hello there' }];

describe('concurrent holds', () => {
  let h: ChatHarness;
  beforeAll(async () => {
    h = await startChatHarness();
  });
  afterAll(async () => h.close());

  it('a balance covering exactly 10 holds: of 50 concurrent requests 10 run, 40 get 402, never below zero, ledger = balance', async () => {
    const body = { model: 'gpt-test', messages: hi, max_tokens: 1000 };
    // Measure one hold: the provider answers slowly while we look.
    const probe = await h.gw.account({ credits: 100 });
    h.openai.enqueue({ kind: 'text', text: 'x' }, { delayMs: 300 });
    const pending = h.gw.api('/chat/completions', { key: probe.key, body });
    await new Promise((r) => setTimeout(r, 150));
    const hold = (await money(h.gw, probe.accountId)).held;
    await pending;
    expect(hold).toBeGreaterThan(1_000_000);

    const { key, accountId } = await h.gw.account({ credits: (hold * 10) / 1_000_000 });
    expect((await money(h.gw, accountId)).balance).toBe(hold * 10);
    // The provider answers only after every request has been admitted (on a busy machine 50 admissions take over a second),
    // so no settlement frees credits for a late hold.
    h.openai.setDefault({ kind: 'text', text: 'ok', usage: { input: 10, output: 1 } }, { delayMs: 3000 });
    const results = await Promise.all(Array.from({ length: 50 }, () => h.gw.api('/chat/completions', { key, body })));
    h.openai.setDefault(null);
    expect(results.filter((r) => r.status === 200)).toHaveLength(10);
    const refused = results.filter((r) => r.status === 402);
    expect(refused).toHaveLength(40);
    for (const r of refused) expect(r.json.error.code).toBe('insufficient_credits');
    const after = await money(h.gw, accountId);
    expect(after.held).toBe(0);
    expect(after.balance).toBe(hold * 10 - 10 * (10 * 125 + 1000));
    expect(after.balance).toBeGreaterThanOrEqual(0);
    const ledger = (await h.gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger`)).json as { kind: string; credits: number }[];
    const sum = ledger.reduce((s, e) => s + (e.kind === 'topup' || e.kind === 'grant' ? e.credits : e.kind === 'settle' ? -e.credits : 0), 0);
    expect(Math.round(sum * 1_000_000)).toBe(after.balance);
    expect(ledger.filter((e) => e.kind === 'hold')).toHaveLength(10);
  });
});

describe('crash recovery', () => {
  let emulator: Emulator;
  let dir: string;
  beforeAll(async () => {
    emulator = await startEmulator('openai');
    dir = mkdtempSync(join(tmpdir(), 'gw-crash-'));
  });
  afterAll(async () => {
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const env = () => ({
    ...process.env,
    DATABASE_URL: `sqlite:${join(dir, 'gateway.db')}`,
    ADMIN_TOKEN,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    CATALOG_FILE: writeCatalog(chatCatalog()),
    PROVIDER_1_BASE_URL: emulator.baseUrl,
    PROVIDER_1_API_KEY: emulator.apiKey,
  });

  /** Starts `npm start` in a child process and waits for its listen address in the log. */
  function startServer(): Promise<{ child: ChildProcess; url: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      const onData = (data: Buffer) => {
        out += data.toString();
        const match = /Server listening at (http:\/\/[^"\s]+)/.exec(out);
        if (match !== null) {
          child.stdout?.off('data', onData);
          resolve({ child, url: match[1] as string });
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', (data: Buffer) => (out += data.toString()));
      child.on('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
    });
  }

  it('SIGKILL with runs in flight: after restart their holds are refunded and the balance is right', async () => {
    const first = await startServer();
    const admin = (method: 'GET' | 'POST', path: string, body?: unknown) => http(first.url + path, { method, body, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const account = (await admin('POST', '/admin/v1/accounts', { name: 'crash', has_purchase: true })).json;
    await admin('POST', `/admin/v1/accounts/${account.id}/credits`, { credits: 50, purchase: true });
    const key = (await admin('POST', `/admin/v1/accounts/${account.id}/keys`, { name: 'k' })).json.key;
    emulator.setDefault({ kind: 'hang' });
    const inFlight = [1, 2, 3].map(() => http(`${first.url}/api/v1/chat/completions`, { key, body: { model: 'gpt-test', messages: hi } }).catch(() => undefined));
    let held = 0;
    for (let i = 0; i < 100 && held === 0; i++) {
      await new Promise((r) => setTimeout(r, 30));
      const state = (await admin('GET', `/admin/v1/accounts/${account.id}`)).json;
      held = state.held_credits;
      if (emulator.requests.length < 3) held = 0;
    }
    expect(held).toBeGreaterThan(0);
    first.child.kill('SIGKILL');
    await Promise.all(inFlight);
    emulator.setDefault(null);

    const second = await startServer();
    try {
      const state = (await http(`${second.url}/admin/v1/accounts/${account.id}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json;
      expect(state).toMatchObject({ balance_credits: 50, held_credits: 0, available_credits: 50 });
      const ledger = (await http(`${second.url}/admin/v1/accounts/${account.id}/ledger`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json as { kind: string }[];
      expect(ledger.filter((e) => e.kind === 'hold')).toHaveLength(3);
      expect(ledger.filter((e) => e.kind === 'refund')).toHaveLength(3);
      // The restarted gateway serves again.
      const r = await http(`${second.url}/api/v1/chat/completions`, { key, body: { model: 'gpt-test', messages: hi } });
      expect(r.status).toBe(200);
    } finally {
      second.child.kill('SIGTERM');
    }
  }, 120_000); // two gateway processes, each compiling the sources through tsx: slow on a busy machine
});
