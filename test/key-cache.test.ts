/** A key lookup performs no database query once cached; a change drops the entry at once (SQLite and PostgreSQL). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyCache } from '../src/gate/key-cache.ts';
import { LocalKeyEvents } from '../src/keys/key-events.ts';
import { hashKeySecret } from '../src/keys/key-secret.ts';
import type { ApiKeyRecord, Store } from '../src/store/types.ts';
import { startGateway, type TestGateway } from './helpers/gateway.ts';
import { DIALECTS, type TestStore } from './helpers/stores.ts';

for (const dialect of DIALECTS) {
  describe(`on ${dialect.name}`, () => {
    let gw: TestGateway;
    let store: Store;
    let opened: TestStore;
    beforeAll(async () => {
      opened = await dialect.open();
      store = opened.store;
      gw = await startGateway({}, { store });
    });
    afterAll(async () => {
      await gw.close();
      await opened.drop();
    });

    describe('key cache', () => {
      it('second and later requests with a key run no query for the key', async () => {
        const { key, keyId } = await gw.account();
        await gw.api('/jobs/x', { key }); // first use: one lookup
        const before = store.queryCount;
        for (let i = 0; i < 20; i++) await gw.api('/fine_tuning/jobs', { key, method: 'GET' });
        expect(store.queryCount).toBe(before);
        // A change invalidates: the next request reads the key again, once.
        await gw.admin('PATCH', `/admin/v1/keys/${keyId}`, { name: 'changed' });
        const afterPatch = store.queryCount;
        await gw.api('/fine_tuning/jobs', { key, method: 'GET' });
        await gw.api('/fine_tuning/jobs', { key, method: 'GET' });
        expect(store.queryCount).toBe(afterPatch + 1);
      });

      it('unknown keys are remembered too', async () => {
        const unknown = 'svc_live_' + 'd'.repeat(64);
        await gw.api('/fine_tuning/jobs', { key: unknown, method: 'GET' });
        const before = store.queryCount;
        for (let i = 0; i < 10; i++) expect((await gw.api('/fine_tuning/jobs', { key: unknown, method: 'GET' })).status).toBe(401);
        expect(store.queryCount).toBe(before);
      });
    });
  });
}

/**
 * Key events from other processes arrive when the channel carries them, possibly after this
 * process has read the key itself: a late announcement of a key's creation must not drop it
 * (under a full parallel run, redis-shared.test.ts saw B read a key again for this reason).
 */
describe('key cache and announcements that arrive late', () => {
  const secret = `svc_live_${'a'.repeat(64)}`;
  const hash = hashKeySecret(secret);
  const record = { id: 'k1', hash, ipAllowlist: [] } as unknown as ApiKeyRecord;

  function setUp(find: () => Promise<ApiKeyRecord | undefined>) {
    const events = new LocalKeyEvents();
    let reads = 0;
    const cache = new KeyCache({ findKeyByHash: () => { reads++; return find(); } }, events);
    return { events, cache, reads: () => reads };
  }

  it("a key's creation announced after this process cached the key leaves it cached: no second read", async () => {
    const { events, cache, reads } = setUp(() => Promise.resolve(record));
    expect((await cache.resolve(secret))?.record).toBe(record);
    events.deliver({ keyId: 'k1', hash, kind: 'created' });
    expect((await cache.resolve(secret))?.record).toBe(record);
    expect(reads()).toBe(1);
  });

  it('a creation announced while the first read was under way: the key is found, never remembered as unknown', async () => {
    let exists = false;
    const { events, cache } = setUp(async () => {
      const found = exists ? record : undefined;
      // The key is created (and announced) while this read is on its way back.
      exists = true;
      events.deliver({ keyId: 'k1', hash, kind: 'created' });
      return found;
    });
    expect((await cache.resolve(secret))?.record).toBe(record);
    expect((await cache.resolve(secret))?.record).toBe(record);
  });

  it('a secret no key has is remembered as unknown until a key with it is announced', async () => {
    let exists = false;
    const { events, cache, reads } = setUp(() => Promise.resolve(exists ? record : undefined));
    expect(await cache.resolve(secret)).toBeUndefined();
    expect(await cache.resolve(secret)).toBeUndefined();
    expect(reads()).toBe(1);
    exists = true;
    events.deliver({ keyId: 'k1', hash, kind: 'created' });
    expect((await cache.resolve(secret))?.record).toBe(record);
  });

  it('a revocation or an edit still drops the cached key at once: the next lookup reads it again', async () => {
    const { events, cache, reads } = setUp(() => Promise.resolve(record));
    await cache.resolve(secret);
    events.deliver({ keyId: 'k1', hash, kind: 'revoked' });
    await cache.resolve(secret);
    expect(reads()).toBe(2);
    events.deliver({ keyId: 'k1', hash, kind: 'updated' });
    await cache.resolve(secret);
    expect(reads()).toBe(3);
  });
});
