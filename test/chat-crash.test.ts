/**
 * SIGKILL during non-stream runs (issue 10): runs in every phase when the process dies
 * (answered and settled, waiting on the provider, answering slowly with the 200 and
 * keep-alive whitespace already sent). After a restart every hold is settled or refunded
 * exactly once, nothing stays held, the balance equals the ledger, every answer a client
 * received complete was settled.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../emulators/index.ts';
import type { Emulator } from '../emulators/types.ts';
import { writeCatalog } from './fixtures/catalog.ts';
import { chatCatalog } from './helpers/chat.ts';
import { ADMIN_TOKEN, http } from './helpers/gateway.ts';
import { startGatewayProcess, type GatewayProcess } from './helpers/process.ts';

let emulator: Emulator;
let dir: string;
beforeAll(async () => {
  emulator = await startEmulator('openai', { record: false });
  dir = mkdtempSync(join(tmpdir(), 'gw-crash-nonstream-'));
});
afterAll(async () => {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({
  DATABASE_URL: `sqlite:${join(dir, 'gateway.db')}`,
  ADMIN_TOKEN,
  // Slow answers start their 200 and whitespace early, so some runs die mid-answer.
  NONSTREAM_KEEPALIVE_MS: '150',
  CATALOG_FILE: writeCatalog(chatCatalog()),
  PROVIDER_1_BASE_URL: emulator.baseUrl,
  PROVIDER_1_API_KEY: emulator.apiKey,
});

interface Outcome {
  /** The job of a complete 200 chat.completion the client received. */
  answeredJob?: string;
  status?: number;
}

/** One non-stream request; what the client got before the process died. */
async function ask(url: string, key: string, i: number): Promise<Outcome> {
  try {
    const r = await request(`${url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: `run ${i}` }], max_tokens: 100 }),
    });
    const text = await r.body.text();
    const json = JSON.parse(text) as { object?: string; id?: string };
    if (r.statusCode === 200 && json.object === 'chat.completion') return { answeredJob: String(json.id).replace(/^chatcmpl-/, ''), status: 200 };
    return { status: r.statusCode };
  } catch {
    return {};
  }
}

interface Row {
  job_id: string | null;
  kind: string;
  credits: number;
}

async function ledgerOf(gateway: GatewayProcess, accountId: string): Promise<Row[]> {
  return (await http(`${gateway.url}/admin/v1/accounts/${accountId}/ledger?limit=all`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json as Row[];
}

async function accountOf(gateway: GatewayProcess, accountId: string) {
  return (await http(`${gateway.url}/admin/v1/accounts/${accountId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json as { balance_credits: number; held_credits: number; available_credits: number };
}

describe('crash recovery of non-stream runs', () => {
  it('SIGKILL with non-stream runs in every phase: after restart each hold is settled or refunded exactly once, ledger = balance', async () => {
    const first = await startGatewayProcess(env());
    let second: GatewayProcess | undefined;
    try {
      const admin = (method: 'GET' | 'POST', path: string, body?: unknown) => http(first.url + path, { method, body, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      const account = (await admin('POST', '/admin/v1/accounts', { name: 'crash', has_purchase: true })).json as { id: string };
      await admin('POST', `/admin/v1/accounts/${account.id}/credits`, { credits: 500, purchase: true });
      const key = (await admin('POST', `/admin/v1/accounts/${account.id}/keys`, { name: 'k', requests_per_minute: 6000 })).json.key as string;

      // Provider timings: instant answers (settled before the kill), slow ones (200 and whitespace sent, then killed),
      // and ones that never answer (held, waiting on the provider).
      const RUNS = 24;
      for (let i = 0; i < RUNS; i++) {
        if (i % 3 === 0) emulator.enqueue({ kind: 'text', text: `answer ${i}`, usage: { input: 10, output: 5 } });
        else if (i % 3 === 1) emulator.enqueue({ kind: 'text', text: `late ${i}`, usage: { input: 10, output: 5 } }, { delayMs: 60_000 });
        else emulator.enqueue({ kind: 'hang' });
      }
      const outcomes: Promise<Outcome>[] = [];
      for (let i = 0; i < RUNS; i++) {
        outcomes.push(ask(first.url, key, i));
        await new Promise((r) => setTimeout(r, 15));
      }
      // Kill once every run holds credits and the instant ones are settled; the slow ones have sent their 200 and whitespace by then.
      let ledger = await ledgerOf(first, account.id);
      for (let i = 0; i < 400 && (ledger.filter((e) => e.kind === 'hold').length < RUNS || ledger.filter((e) => e.kind === 'settle').length < RUNS / 3); i++) {
        await new Promise((r) => setTimeout(r, 25));
        ledger = await ledgerOf(first, account.id);
      }
      await new Promise((r) => setTimeout(r, 300));
      expect((await accountOf(first, account.id)).held_credits).toBeGreaterThan(0);
      await first.kill();
      const seen = await Promise.all(outcomes);
      const answered = seen.flatMap((o) => (o.answeredJob === undefined ? [] : [o.answeredJob]));
      expect(answered.length).toBe(RUNS / 3);

      second = await startGatewayProcess(env());
      ledger = await ledgerOf(second, account.id);
      const holds = ledger.filter((e) => e.kind === 'hold');
      expect(holds).toHaveLength(RUNS);
      for (const hold of holds) {
        const endings = ledger.filter((e) => e.job_id === hold.job_id && (e.kind === 'settle' || e.kind === 'refund'));
        expect(endings, `job ${hold.job_id}`).toHaveLength(1);
      }
      // Every answer a client received complete was billed; the runs that died were refunded in full.
      const settled = new Set(ledger.filter((e) => e.kind === 'settle').map((e) => e.job_id));
      for (const job of answered) expect(settled.has(job), `answered job ${job}`).toBe(true);
      expect(ledger.filter((e) => e.kind === 'refund').length).toBe(RUNS - settled.size);

      const after = await accountOf(second, account.id);
      const sum = ledger.reduce((s, e) => s + (e.kind === 'topup' || e.kind === 'grant' ? e.credits : e.kind === 'settle' ? -e.credits : 0), 0);
      expect(after.held_credits).toBe(0);
      expect(after.balance_credits).toBeCloseTo(sum, 6);
      expect(after.available_credits).toBe(after.balance_credits);

      // And the restarted gateway serves again.
      emulator.reset();
      const r = await http(`${second.url}/api/v1/chat/completions`, { key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'again' }] } });
      expect(r.status).toBe(200);
    } finally {
      emulator.reset();
      for (const gateway of [first, second]) await gateway?.kill();
    }
  }, 60_000);
});
