/**
 * Two gateways in this test process sharing one database and one Redis (each through a
 * proxy the test can cut): key changes reach the other gateway at once, rpm windows are
 * one window, and with Redis gone a revoked key is still refused. On SQLite (one store for
 * both) and on PostgreSQL (a store each, as two processes would have).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator } from '../emulators/index.ts';
import type { Emulator } from '../emulators/types.ts';
import { writeCatalog } from './fixtures/catalog.ts';
import { chatCatalog, money } from './helpers/chat.ts';
import { startGateway, type TestGateway } from './helpers/gateway.ts';
import { dropRedisPrefix, REDIS_URL, redisPrefix } from './helpers/redis.ts';
import { DIALECTS, type TestStore } from './helpers/stores.ts';
import { closedPort, startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const hi = [{ role: 'user', content: 'Hello there' }];

/** Polls until `check` holds; returns the milliseconds it took. */
async function within(ms: number, check: () => Promise<boolean> | boolean): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms`);
    await sleep(10);
  }
  return Date.now() - start;
}

for (const dialect of DIALECTS) {
  describe(`on ${dialect.name}`, () => {
    const prefix = redisPrefix();
    let opened: TestStore;
    let openai: Emulator;
    let proxyA: TcpProxy;
    let proxyB: TcpProxy;
    let a: TestGateway;
    let b: TestGateway;

    /** Key reads from the database by either gateway (heartbeats and the like do not count). */
    let keyReads: () => number;

    beforeAll(async () => {
      // On PostgreSQL each gateway has its own store, as two processes would; one SQLite database has one store.
      opened = await dialect.open();
      const stores = [opened.store, await opened.another()] as const;
      const spies = [...new Set(stores)].map((store) => vi.spyOn(store.keys, 'findKeyByHash'));
      keyReads = () => spies.reduce((n, spy) => n + spy.mock.calls.length, 0);
      openai = await startEmulator('openai');
      proxyA = await startTcpProxy(REDIS_URL);
      proxyB = await startTcpProxy(REDIS_URL);
      const env = {
        REDIS_PREFIX: prefix,
        CATALOG_FILE: writeCatalog(chatCatalog()),
        PROVIDER_1_BASE_URL: openai.baseUrl,
        PROVIDER_1_API_KEY: openai.apiKey,
      };
      a = await startGateway({ ...env, REDIS_URL: proxyA.url }, { store: stores[0] });
      b = await startGateway({ ...env, REDIS_URL: proxyB.url }, { store: stores[1] });
    });

    afterAll(async () => {
      await a?.close();
      await b?.close();
      await proxyA?.close();
      await proxyB?.close();
      await openai?.close();
      await opened?.drop();
      await dropRedisPrefix(prefix);
    });

    /** GET /models with a key: counts toward rpm, sends no rate headers unless refused. */
    const models = (gw: TestGateway, key: string) => gw.api('/models?limit=1', { key });

    /** Whether both gateways count in the shared window now: a request on A, then one on B, leaves 58 of 60. */
    async function windowsShared(): Promise<boolean> {
      const { key } = await a.account({ key: { requests_per_minute: 60 } });
      await a.api('/chat/completions', { key, body: {} });
      return (await b.api('/chat/completions', { key, body: {} })).headers['x-ratelimit-remaining'] === '58';
    }

    describe('key changes between gateways (Redis pub/sub)', () => {
      it('a key revoked through A is refused by B within one second, although B had it cached', async () => {
        const { key, keyId } = await a.account();
        expect((await models(b, key)).status).toBe(200);
        const queries = keyReads();
        expect((await models(b, key)).status).toBe(200);
        expect(keyReads()).toBe(queries); // B answers from its cache
        await a.admin('POST', `/admin/v1/keys/${keyId}/revoke`);
        const took = await within(1_000, async () => (await models(b, key)).status === 401);
        expect(took).toBeLessThan(1_000);
        const refused = await models(b, key);
        expect(refused.json.error.code).toBe('invalid_api_key');
      });

      it("a key's creation reaching B after B read the key (B's Redis 30 ms away) leaves it in B's cache", async () => {
        proxyB.delay(30);
        try {
          const { key } = await a.account();
          expect((await models(b, key)).status).toBe(200);
          const queries = keyReads();
          // By now the announcement of the key's creation has reached B, after B read the key.
          await sleep(100);
          expect((await models(b, key)).status).toBe(200);
          expect(keyReads()).toBe(queries);
        } finally {
          proxyB.delay(0);
        }
      });

      it('a key rotated through B: A refuses the old secret at once and takes the new one', async () => {
        const { key, keyId } = await a.account();
        expect((await models(a, key)).status).toBe(200);
        const rotated = await b.admin('POST', `/admin/v1/keys/${keyId}/rotate`);
        expect(rotated.status).toBe(201);
        await within(1_000, async () => (await models(a, key)).status === 401);
        expect((await models(a, rotated.json.key)).status).toBe(200);
      });

      it('an edit through A evicts the key from B’s cache: B reads it again, once', async () => {
        const { key, keyId } = await a.account();
        await models(b, key);
        await a.admin('PATCH', `/admin/v1/keys/${keyId}`, { name: 'edited' });
        await sleep(200);
        const before = keyReads();
        await models(b, key);
        await models(b, key);
        expect(keyReads()).toBe(before + 1);
      });

      it('a run in flight on B ends with 401 invalid_api_key when its key is revoked through A, nothing charged', async () => {
        const { key, keyId, accountId } = await a.account();
        const before = await money(a, accountId);
        openai.enqueue({ kind: 'text', text: 'never seen' }, { delayMs: 3_000 });
        const started = openai.requests.length;
        const pending = b.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi } });
        await within(2_000, () => openai.requests.length > started);
        const revokedAt = Date.now();
        await a.admin('POST', `/admin/v1/keys/${keyId}/revoke`);
        const answer = await pending;
        expect(Date.now() - revokedAt).toBeLessThan(1_000);
        expect(answer.status).toBe(401);
        expect(answer.json.error.code).toBe('invalid_api_key');
        expect(await money(a, accountId)).toEqual(before);
      });
    });

    describe('rpm windows shared through Redis', () => {
      it('a 60-rpm key alternating between A and B: 60 pass, the 61st is 429 on either', async () => {
        const { key } = await a.account({ key: { requests_per_minute: 60 } });
        const first = Date.now();
        for (let i = 0; i < 60; i++) expect((await models(i % 2 === 0 ? a : b, key)).status).toBe(200);
        for (const gw of [a, b]) {
          const refused = await models(gw, key);
          expect(refused.status).toBe(429);
          expect(refused.headers['x-ratelimit-limit']).toBe('60');
          expect(refused.headers['x-ratelimit-remaining']).toBe('0');
          // The window frees up 60 s after the first request (rounded up to whole seconds), however long the 60 took.
          const reset = Number(refused.headers['x-ratelimit-reset']);
          expect(reset).toBeLessThanOrEqual(60);
          expect(reset).toBeGreaterThanOrEqual(Math.floor(60 - (Date.now() - first) / 1000));
        }
      });

      it('chat headers count both gateways’ requests: remaining goes 59, 58, 57 across A, B, A', async () => {
        const { key } = await a.account({ key: { requests_per_minute: 60 } });
        const seen = [];
        for (const gw of [a, b, a]) seen.push((await gw.api('/chat/completions', { key, body: {} })).headers['x-ratelimit-remaining']);
        expect(seen).toEqual(['59', '58', '57']);
      });
    });

    describe('Redis unreachable after start', () => {
      it('B keeps serving on its own window and bypasses its key cache: a key revoked through A is still refused; a change made on B reaches A when B is back', async () => {
        const revokedHere = await a.account({ key: { requests_per_minute: 60 } });
        const revokedOnB = await a.account();
        // Both keys are in both caches.
        for (const gw of [a, b]) for (const k of [revokedHere.key, revokedOnB.key]) expect((await models(gw, k)).status).toBe(200);

        await proxyB.cut();
        await within(1_000, () => !b.gateway.keyEvents.live);
        // B serves on: every key read from the database, rpm in B's own window.
        const queries = keyReads();
        expect((await models(b, revokedHere.key)).status).toBe(200);
        expect(keyReads()).toBeGreaterThan(queries);
        // Revoked through A (which reaches Redis): B, deaf to the channel, refuses it anyway.
        await a.admin('POST', `/admin/v1/keys/${revokedHere.keyId}/revoke`);
        expect((await models(b, revokedHere.key)).status).toBe(401);
        expect((await models(a, revokedHere.key)).status).toBe(401);

        // Revoked through B while B cannot publish: A has the key cached until B is back.
        await b.admin('POST', `/admin/v1/keys/${revokedOnB.keyId}/revoke`);
        expect((await models(b, revokedOnB.key)).status).toBe(401);
        await proxyB.restore();
        await within(5_000, () => b.gateway.keyEvents.live);
        // B's own connections come back one by one (each on its own retry schedule).
        await within(5_000, async () => (await models(a, revokedOnB.key)).status === 401);

        // Back to normal: B caches keys again. The new key's 'created' change reaches B through Redis
        // some time after A answers; a lookup it overlaps caches nothing (by design), so wait for it first.
        const reachedB: string[] = [];
        const stopListening = b.gateway.keyEvents.subscribe((change) => reachedB.push(change.keyId));
        const fresh = await a.account();
        await within(5_000, () => reachedB.includes(fresh.keyId));
        stopListening();
        await models(b, fresh.key);
        const cached = keyReads();
        await models(b, fresh.key);
        expect(keyReads()).toBe(cached);
      });

      it('the rpm window of a key falls back to each gateway’s own while Redis is away, and is shared again after', async () => {
        const { key } = await a.account({ key: { requests_per_minute: 60 } });
        await proxyA.cut();
        await proxyB.cut();
        try {
          // Each gateway counts on its own: 60 on A and 60 on B.
          for (let i = 0; i < 60; i++) expect((await models(a, key)).status).toBe(200);
          expect((await models(a, key)).status).toBe(429);
          for (let i = 0; i < 60; i++) expect((await models(b, key)).status).toBe(200);
          expect((await models(b, key)).status).toBe(429);
        } finally {
          await proxyA.restore();
          await proxyB.restore();
        }
        await within(5_000, () => a.gateway.keyEvents.live && b.gateway.keyEvents.live);
        await within(5_000, windowsShared);
        // The shared window had none of those: a fresh key alternates to exactly 60 again.
        const other = await a.account({ key: { requests_per_minute: 60 } });
        let passed = 0;
        for (let i = 0; i < 61; i++) if ((await models(i % 2 === 0 ? a : b, other.key)).status === 200) passed++;
        expect(passed).toBe(60);
      });
    });

    describe('Redis unreachable at start-up', () => {
      it('the gateway refuses to start, with a message naming REDIS_URL', async () => {
        const port = await closedPort();
        await expect(startGateway({ REDIS_URL: `redis://:secret@127.0.0.1:${port}`, REDIS_PREFIX: prefix })).rejects.toThrow(
          new RegExp(`^REDIS_URL: cannot reach Redis at redis://:\\*\\*\\*@127\\.0\\.0\\.1:${port}`),
        );
      });
    });
  });
}
