/**
 * Several gateway processes (README "Running several processes"): two child processes on
 * one PostgreSQL database and one Redis prefix share the rpm window, the balance, key
 * limits and key revocations, as one process would.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../emulators/index.ts';
import type { Emulator } from '../emulators/types.ts';
import { openStore } from '../src/store/open-store.ts';
import { writeCatalog } from './fixtures/catalog.ts';
import { chatCatalog } from './helpers/chat.ts';
import { ADMIN_TOKEN, http, type HttpResponse } from './helpers/gateway.ts';
import { createDatabase, type TestDatabase } from './helpers/postgres.ts';
import { startGatewayProcess, type GatewayProcess } from './helpers/process.ts';
import { dropRedisPrefix, REDIS_URL, redisPrefix } from './helpers/redis.ts';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function within(ms: number, check: () => Promise<boolean> | boolean): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms`);
    await sleep(10);
  }
  return Date.now() - start;
}

const prefix = redisPrefix();
let database: TestDatabase;
let openai: Emulator;
let proxyB: TcpProxy;
let a: GatewayProcess;
let b: GatewayProcess;

const admin = (gw: GatewayProcess, method: 'GET' | 'POST', path: string, body?: unknown) =>
  http(gw.url + path, { method, body, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
/** GET /models with a key: counts toward the key's rpm. */
const models = (gw: GatewayProcess, key: string): Promise<HttpResponse> => http(`${gw.url}/api/v1/models?limit=1`, { key });

async function newKey(gw: GatewayProcess, rpm = 600, options: { credits?: number; daily?: number } = {}): Promise<{ keyId: string; key: string; accountId: string }> {
  const account = (await admin(gw, 'POST', '/admin/v1/accounts', { name: 'multi', has_purchase: true })).json;
  if (options.credits !== undefined) await admin(gw, 'POST', `/admin/v1/accounts/${account.id}/credits`, { credits: options.credits, purchase: true });
  const created = await admin(gw, 'POST', `/admin/v1/accounts/${account.id}/keys`, {
    name: 'k', requests_per_minute: rpm, ...(options.daily === undefined ? {} : { daily_limit_credits: options.daily }),
  });
  expect(created.status).toBe(201);
  return { keyId: created.json.id, key: created.json.key, accountId: account.id };
}

/** One chat run (its hold is HOLD credits). */
const chat = (gw: GatewayProcess, key: string): Promise<HttpResponse> =>
  http(`${gw.url}/api/v1/chat/completions`, { key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 100 } });

interface LedgerRow {
  job_id: string | null;
  kind: string;
  credits: number;
}

async function moneyOf(gw: GatewayProcess, accountId: string) {
  const state = (await admin(gw, 'GET', `/admin/v1/accounts/${accountId}`)).json as { balance_credits: number; held_credits: number };
  const ledger = (await admin(gw, 'GET', `/admin/v1/accounts/${accountId}/ledger?limit=all`)).json as LedgerRow[];
  const sum = ledger.reduce((s, e) => s + (e.kind === 'topup' || e.kind === 'grant' ? e.credits : e.kind === 'settle' ? -e.credits : 0), 0);
  return { balance: state.balance_credits, held: state.held_credits, ledger, ledgerBalance: Math.round(sum * 1e6) / 1e6 };
}

/** The hold of one chat() run, in credits: the first run of a probe account. */
let HOLD = 0;

beforeAll(async () => {
  database = await createDatabase();
  openai = await startEmulator('openai');
  proxyB = await startTcpProxy(REDIS_URL);
  const env = {
    DATABASE_URL: database.url, REDIS_PREFIX: prefix, ADMIN_TOKEN,
    CATALOG_FILE: writeCatalog(chatCatalog()), PROVIDER_1_BASE_URL: openai.baseUrl, PROVIDER_1_API_KEY: openai.apiKey,
  };
  // Both at the same instant on an empty database: both migrate (one waits for the other).
  [a, b] = await Promise.all([
    startGatewayProcess({ ...env, REDIS_URL }),
    startGatewayProcess({ ...env, REDIS_URL: proxyB.url }),
  ]);
  const probe = await newKey(a, 600, { credits: 100 });
  expect((await chat(a, probe.key)).status).toBe(200);
  HOLD = (await moneyOf(a, probe.accountId)).ledger.find((e) => e.kind === 'hold')?.credits ?? 0;
  expect(HOLD).toBeGreaterThan(0);
}, 60_000);

afterEach(() => openai.reset());

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await proxyB?.close();
  await openai?.close();
  await database?.drop();
  await dropRedisPrefix(prefix);
});

describe('two processes on one PostgreSQL database', () => {
  it('started at the same instant on an empty database, both come up and see the same data', async () => {
    const { key } = await newKey(a);
    expect((await models(b, key)).status).toBe(200);
    // Each migration ran once.
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const rows = await client.query('select name, count(*)::int as runs from kysely_migration group by name');
      expect(rows.rows.length).toBeGreaterThan(0);
      for (const row of rows.rows) expect(row.runs).toBe(1);
    } finally {
      await client.end();
    }
  });

  it('six stores opened at once on an empty database all migrate (three rounds)', async () => {
    for (let round = 0; round < 3; round++) {
      const fresh = await createDatabase();
      try {
        const results = await Promise.allSettled(Array.from({ length: 6 }, () => openStore(fresh.url)));
        for (const r of results) if (r.status === 'fulfilled') await r.value.close();
        expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
      } finally {
        await fresh.drop();
      }
    }
  });
});

describe('requests per minute across processes (Redis)', () => {
  it('a 60-rpm key alternating between the two processes gets exactly 60 requests through; then 429 on both', async () => {
    const { key } = await newKey(a, 60);
    const statuses: number[] = [];
    for (let i = 0; i < 70; i++) statuses.push((await models(i % 2 === 0 ? a : b, key)).status);
    expect(statuses.slice(0, 60).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(60).every((s) => s === 429)).toBe(true);
    for (const gw of [a, b]) {
      const refused = await models(gw, key);
      expect(refused.json.error.code).toBe('rate_limit_exceeded');
      expect(refused.headers['x-ratelimit-limit']).toBe('60');
      expect(refused.headers['x-ratelimit-remaining']).toBe('0');
      expect(Number(refused.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(55);
      expect(Number(refused.headers['x-ratelimit-reset'])).toBeLessThanOrEqual(60);
    }
  });

  it('100 concurrent requests spread over both processes on a 60-rpm key: exactly 60 through', async () => {
    const { key } = await newKey(a, 60);
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => models(i % 2 === 0 ? a : b, key)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(60);
    expect(results.filter((r) => r.status === 429)).toHaveLength(40);
  });
});

describe('key revocation across processes (Redis)', () => {
  it("a key revoked through one process's admin API is refused by the other within one second", async () => {
    const { key, keyId } = await newKey(a);
    expect((await models(b, key)).status).toBe(200); // now in B's key cache
    expect((await admin(a, 'POST', `/admin/v1/keys/${keyId}/revoke`)).status).toBe(200);
    const took = await within(1_000, async () => (await models(b, key)).status === 401);
    expect(took).toBeLessThan(1_000);
  });

  it('Redis cut away from one process: it logs it, keeps serving, and still refuses a key revoked through the other; it logs when Redis is back', async () => {
    const { key, keyId } = await newKey(a);
    const other = await newKey(a);
    expect((await models(b, key)).status).toBe(200);
    await proxyB.cut();
    try {
      await within(3_000, () => b.output().includes('Redis unreachable: the key cache is bypassed'));
      expect((await models(b, other.key)).status).toBe(200);
      await admin(a, 'POST', `/admin/v1/keys/${keyId}/revoke`);
      expect((await models(b, key)).status).toBe(401);
      await within(3_000, () => b.output().includes("Redis unreachable: rate-limit windows fall back to this process's own"));
    } finally {
      await proxyB.restore();
    }
    // Logged at start-up and again now; the limiter's return is noticed by the next request after its connection is back.
    await within(5_000, () => b.output().split('Redis reachable: key changes are shared between processes').length === 3);
    await within(5_000, async () => {
      expect((await models(b, other.key)).status).toBe(200);
      return b.output().includes('Redis reachable: rate-limit windows are shared between processes again');
    });
    expect((await models(b, key)).status).toBe(401);
  });
});

describe('money across processes (one PostgreSQL database)', () => {
  it('a balance that covers exactly 10 holds, 50 concurrent runs over both processes: exactly 10 run, 40 are refused 402; balance = ledger', async () => {
    const { key, accountId } = await newKey(a, 6_000, { credits: 10 * HOLD });
    openai.setDefault({ kind: 'text', text: 'slow enough to overlap', usage: { input: 10, output: 5 } }, { delayMs: 500 });
    const asked = openai.requests.length;
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => chat(i % 2 === 0 ? a : b, key)));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(10);
    const refused = answers.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(40);
    for (const r of refused) expect([r.status, r.json.error.code]).toEqual([402, 'insufficient_credits']);
    // Only the 10 admitted reached the provider.
    expect(openai.requests.length - asked).toBe(10);
    const money = await moneyOf(b, accountId);
    expect(money.ledger.filter((e) => e.kind === 'hold')).toHaveLength(10);
    expect(money.ledger.filter((e) => e.kind === 'settle')).toHaveLength(10);
    expect(money.held).toBe(0);
    expect(money.balance).toBe(money.ledgerBalance);
  });

  it('a key daily limit covering 3 holds holds across both processes: of 12 concurrent runs 3 run, 9 are refused 429', async () => {
    const { key, accountId } = await newKey(a, 6_000, { credits: 100, daily: 3 * HOLD });
    openai.setDefault({ kind: 'text', text: 'counted', usage: { input: 10, output: 5 } }, { delayMs: 500 });
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => chat(i % 2 === 0 ? a : b, key)));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(3);
    const refused = answers.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(9);
    for (const r of refused) expect([r.status, r.json.error.code]).toEqual([429, 'api_key_limit_exceeded']);
    expect((await moneyOf(a, accountId)).ledger.filter((e) => e.kind === 'hold')).toHaveLength(3);
  });
});

describe('a key revoked with a run in flight (Redis)', () => {
  it('revoked through A while its run waits on the provider at B: B ends it with 401 within one second and refunds it in full', async () => {
    const { key, keyId, accountId } = await newKey(a, 600, { credits: 10 });
    openai.setDefault({ kind: 'text', text: 'never seen', usage: { input: 10, output: 5 } }, { delayMs: 5_000 });
    const asked = openai.requests.length;
    const pending = chat(b, key);
    await within(3_000, () => openai.requests.length > asked);
    const revokedAt = Date.now();
    expect((await admin(a, 'POST', `/admin/v1/keys/${keyId}/revoke`)).status).toBe(200);
    const answer = await pending;
    expect(Date.now() - revokedAt).toBeLessThan(1_000);
    expect([answer.status, answer.json.error.code]).toEqual([401, 'invalid_api_key']);
    const money = await moneyOf(a, accountId);
    expect(money.ledger.map((e) => e.kind).sort()).toEqual(['hold', 'refund', 'topup']);
    expect(money.ledger.find((e) => e.kind === 'refund')?.credits).toBe(HOLD);
    expect(money).toMatchObject({ balance: 10, held: 0, ledgerBalance: 10 });
  });
});
