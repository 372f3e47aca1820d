/** A key lookup performs no database query once cached; a change drops the entry at once (SQLite and PostgreSQL). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../src/store/types.ts';
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
