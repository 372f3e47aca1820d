/**
 * Weighted deployments of one catalog model (DECISIONS.md "Routing"): requests spread by
 * weight among the deployments of the first priority; a later priority runs only when the
 * first cannot; a deployment that failed 3 times in a row rests 30 s, and with REDIS_URL every
 * gateway process skips it (two processes, one Redis). Requests are counted at the emulators;
 * the spread is bounded by a fixed count and a binomial tolerance, never by time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../emulators/index.ts';
import type { Emulator } from '../emulators/types.ts';
import { chatEntry, writeCatalog } from './fixtures/catalog.ts';
import { chatCatalog, costMicro, money } from './helpers/chat.ts';
import { ADMIN_TOKEN, http, startGateway, type TestGateway } from './helpers/gateway.ts';
import { startGatewayProcess, type GatewayProcess } from './helpers/process.ts';
import { connectTestRedis, dropRedisPrefix, REDIS_URL, redisPrefix } from './helpers/redis.ts';

const hi = [{ role: 'user', content: 'Hello there' }];

/** One model on two providers (the same prices: the catalog model is what is billed). */
const SPLIT = chatEntry('split-model', 'provider_1', {
  provider_model_id: 'split-model-oa',
  deployments: [
    { provider: 'provider_1', provider_model_id: 'split-model-oa', weight: 3 },
    { provider: 'provider_7', provider_model_id: 'split-model-ds', weight: 1 },
  ],
});
/** A first priority on provider_1, a second on provider_7. */
const TIERED = chatEntry('tiered-model', 'provider_1', {
  provider_model_id: 'tiered-oa',
  deployments: [
    { provider: 'provider_1', provider_model_id: 'tiered-oa', priority: 0 },
    { provider: 'provider_7', provider_model_id: 'tiered-ds', priority: 1 },
  ],
});
/** Equal weights, for the rest shared between processes. */
const EVEN = chatEntry('even-model', 'provider_1', {
  provider_model_id: 'even-oa',
  deployments: [
    { provider: 'provider_1', provider_model_id: 'even-oa' },
    { provider: 'provider_7', provider_model_id: 'even-ds' },
  ],
});

let openai: Emulator;
let deepseek: Emulator;
let catalogFile: string;

beforeAll(async () => {
  openai = await startEmulator('openai');
  deepseek = await startEmulator('deepseek');
  catalogFile = writeCatalog(chatCatalog([SPLIT, TIERED, EVEN]));
});
afterAll(async () => {
  await openai.close();
  await deepseek.close();
});

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    CATALOG_FILE: catalogFile,
    PROVIDER_1_BASE_URL: openai.baseUrl,
    PROVIDER_1_API_KEY: openai.apiKey,
    PROVIDER_7_BASE_URL: deepseek.baseUrl,
    PROVIDER_7_API_KEY: deepseek.apiKey,
    UPSTREAM_RETRIES: '2',
    UPSTREAM_BACKOFF_MS: '1',
    ...extra,
  };
}

/** Which deployment each recorded request went to. */
const modelsAsked = (e: Emulator) => e.requests.map((r) => (r.body as { model: string }).model);

describe('weights and priorities', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway(env());
  });
  afterAll(async () => gw.close());

  it('weights 3:1 spread 400 requests within a binomial tolerance (p = 0.75, ±5 standard deviations)', async () => {
    openai.reset();
    deepseek.reset();
    const { key, accountId } = await gw.account({ credits: 1000 });
    const before = await money(gw, accountId);
    const n = 400;
    let billed = 0;
    for (let sent = 0; sent < n; sent += 20) {
      const batch = await Promise.all(Array.from({ length: 20 }, () => gw.api('/chat/completions', { key, body: { model: 'split-model', messages: hi, max_tokens: 16 } })));
      for (const r of batch) {
        expect(r.status).toBe(200);
        expect(r.json.system_fingerprint).toBe('svc-split-model');
        billed += costMicro(r.json.usage.prompt_tokens, r.json.usage.completion_tokens);
      }
    }
    const first = modelsAsked(openai).filter((m) => m === 'split-model-oa').length;
    const second = modelsAsked(deepseek).filter((m) => m === 'split-model-ds').length;
    expect(first + second).toBe(n);
    const mean = n * 0.75;
    const sd = Math.sqrt(n * 0.75 * 0.25);
    expect(Math.abs(first - mean)).toBeLessThanOrEqual(5 * sd);
    // Every run billed once, at the catalog model's prices, wherever it ran.
    expect(await money(gw, accountId)).toEqual({ balance: before.balance - billed, held: 0 });
  });

  it('the first priority takes every request; the second runs when the first fails', async () => {
    openai.reset();
    deepseek.reset();
    const { key } = await gw.account();
    for (let i = 0; i < 10; i++) expect((await gw.api('/chat/completions', { key, body: { model: 'tiered-model', messages: hi } })).status).toBe(200);
    expect(modelsAsked(openai)).toEqual(Array.from({ length: 10 }, () => 'tiered-oa'));
    expect(deepseek.requests).toHaveLength(0);
    openai.failFirst(1, 500);
    const r = await gw.api('/chat/completions', { key, body: { model: 'tiered-model', messages: hi } });
    expect(r.status).toBe(200);
    expect(modelsAsked(deepseek)).toEqual(['tiered-ds']);
  });
});

describe('a deployment that failed 3 times in a row rests, in every process (Redis)', () => {
  const prefix = redisPrefix();
  let a: GatewayProcess;
  let b: GatewayProcess;
  const admin = (p: GatewayProcess) => (method: 'GET' | 'POST', path: string, body?: unknown) => http(p.url + path, { method, body, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });

  async function keyOn(p: GatewayProcess): Promise<string> {
    const account = await admin(p)('POST', '/admin/v1/accounts', { name: 'rests', has_purchase: true });
    await admin(p)('POST', `/admin/v1/accounts/${account.json.id as string}/credits`, { credits: 100, purchase: true });
    return (await admin(p)('POST', `/admin/v1/accounts/${account.json.id as string}/keys`, { name: 'k' })).json.key as string;
  }

  beforeAll(async () => {
    // Each process its own database (the rests live in Redis, not there).
    const shared = { ...env(), REDIS_URL, REDIS_PREFIX: prefix, ADMIN_TOKEN, DATABASE_URL: 'sqlite::memory:' };
    [a, b] = await Promise.all([startGatewayProcess(shared), startGatewayProcess(shared)]);
  }, 60_000);
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await dropRedisPrefix(prefix);
  }, 30_000);

  it('process A sees even-oa fail 3 times in a row; process B then sends nothing there', async () => {
    openai.reset();
    deepseek.reset();
    const [keyA, keyB] = await Promise.all([keyOn(a), keyOn(b)]);
    // Every call to the provider_1 deployment fails; the provider_7 one answers.
    openai.setDefault({ kind: 'error', status: 500 });
    for (let i = 0; i < 30 && openai.requests.length < 3; i++) {
      const r = await http(`${a.url}/api/v1/chat/completions`, { key: keyA, body: { model: 'even-model', messages: hi } });
      expect(r.status).toBe(200);
    }
    expect(openai.requests).toHaveLength(3);
    // The rest is in Redis, for processes that start later; running ones heard it on the channel.
    const redis = await connectTestRedis();
    try {
      const rests = await redis.keys(`${prefix}rest:deployment:*`);
      expect(rests).toEqual([`${prefix}rest:deployment:provider_1:even-oa`]);
      expect(await redis.pttl(rests[0] as string)).toBeGreaterThan(20_000);
    } finally {
      redis.disconnect();
    }
    openai.setDefault(null);
    const before = openai.requests.length;
    // Without the shared rest, B would send about half of these to even-oa (all 20 elsewhere by chance: 1 in 2^20).
    for (let i = 0; i < 20; i++) {
      const r = await http(`${b.url}/api/v1/chat/completions`, { key: keyB, body: { model: 'even-model', messages: hi } });
      expect(r.status).toBe(200);
    }
    expect(openai.requests).toHaveLength(before);
    expect(modelsAsked(deepseek).filter((m) => m === 'even-ds').length).toBeGreaterThanOrEqual(20);
  });

  it('a process that starts while the rest runs loads it from Redis', async () => {
    const c = await startGatewayProcess({ ...env(), REDIS_URL, REDIS_PREFIX: prefix, ADMIN_TOKEN, DATABASE_URL: 'sqlite::memory:' });
    try {
      const key = await keyOn(c);
      const before = openai.requests.length;
      for (let i = 0; i < 20; i++) expect((await http(`${c.url}/api/v1/chat/completions`, { key, body: { model: 'even-model', messages: hi } })).status).toBe(200);
      expect(openai.requests).toHaveLength(before);
    } finally {
      await c.stop();
    }
  }, 60_000);
});
