/**
 * Holds, settlement, refunds and crash recovery at the storage layer, on both
 * implementations. PostgreSQL must be reachable (127.0.0.1:5432, database `test`):
 * these tests fail, never skip, without it.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostname } from 'node:os';
import { OrphanRecovery } from '../src/billing/orphan-recovery.ts';
import { openStore } from '../src/store/open-store.ts';
import type { Store } from '../src/store/types.ts';

const PG_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function postgresStore(): Promise<{ store: Store; drop: () => Promise<void> }> {
  const schema = `t_${randomUUID().replace(/-/g, '')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  const store = await openStore(`${PG_URL}?schema=${schema}`);
  return {
    store,
    drop: async () => {
      await store.close();
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
    },
  };
}

const DIALECTS = [
  { name: 'sqlite', open: async () => ({ store: await openStore('sqlite::memory:'), drop: async () => {} }) },
  { name: 'postgres', open: postgresStore },
];

for (const dialect of DIALECTS) {
  describe(`billing store on ${dialect.name}`, () => {
    let store: Store;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      ({ store, drop } = await dialect.open());
    });
    afterAll(async () => drop());

    const newAccount = async (micro: number) => {
      const account = await store.createAccount({ name: 'a', email: null, createdAt: Date.now(), hasPurchase: true, billingEmails: true });
      if (micro > 0) await store.addCredits(account.id, micro, 'topup', Date.now());
      return account.id;
    };
    const hold = (accountId: string, amount: number, instanceId = 'i1') =>
      store.hold({ jobId: randomUUID(), accountId, keyId: null, keyFamilyId: 'fam', kind: 'chat', model: 'm', amount, at: Date.now(), instanceId, clientAddress: null, countsTowardKeyLimits: true });

    const ledgerBalance = async (accountId: string) => {
      const rows = await store.listLedger(accountId, 10_000);
      const credited = rows.filter((r) => r.kind === 'topup' || r.kind === 'grant').reduce((s, r) => s + r.amount, 0);
      const settled = rows.filter((r) => r.kind === 'settle').reduce((s, r) => s + r.amount, 0);
      const closed = new Set(rows.filter((r) => r.kind === 'settle' || r.kind === 'refund').map((r) => r.jobId));
      const open = rows.filter((r) => r.kind === 'hold' && !closed.has(r.jobId)).reduce((s, r) => s + r.amount, 0);
      return { balance: credited - settled, held: open };
    };

    it('50 concurrent holds on a balance that covers exactly 10: 10 pass, 40 refused, never below zero', async () => {
      const accountId = await newAccount(10 * 1_234_567);
      const results = await Promise.all(Array.from({ length: 50 }, () => hold(accountId, 1_234_567)));
      expect(results.filter((r) => r.ok)).toHaveLength(10);
      expect(results.filter((r) => !r.ok)).toHaveLength(40);
      const account = await store.getAccount(accountId);
      expect(account).toMatchObject({ balance: 12_345_670, held: 12_345_670 });
      expect(await ledgerBalance(accountId)).toEqual({ balance: 12_345_670, held: 12_345_670 });
    });

    it('settle charges the cost (capped at the hold) and releases the rest; settle and refund happen once', async () => {
      const accountId = await newAccount(5_000_000);
      const jobId = randomUUID();
      await store.hold({ jobId, accountId, keyId: null, keyFamilyId: 'fam', kind: 'chat', model: 'm', amount: 2_000_000, at: Date.now(), instanceId: 'i1', clientAddress: null, countsTowardKeyLimits: true });
      expect(await store.getAccount(accountId)).toMatchObject({ balance: 5_000_000, held: 2_000_000 });
      const charged = await store.settle(jobId, { cost: 123_457, usage: { prompt_tokens: 10, completion_tokens: 20 }, status: 'succeeded', at: Date.now() });
      expect(charged).toBe(123_457);
      expect(await store.getAccount(accountId)).toMatchObject({ balance: 4_876_543, held: 0 });
      expect(await store.settle(jobId, { cost: 5, usage: { prompt_tokens: 1, completion_tokens: 1 }, status: 'succeeded', at: Date.now() })).toBe(0);
      expect(await store.refund(jobId, { status: 'failed', errorCode: 'upstream_error', at: Date.now() })).toBe(false);
      expect(await store.getJob(jobId)).toMatchObject({ status: 'succeeded', cost: 123_457, usage: { prompt_tokens: 10, completion_tokens: 20 } });

      const big = randomUUID();
      await store.hold({ jobId: big, accountId, keyId: null, keyFamilyId: 'fam', kind: 'chat', model: 'm', amount: 1_000, at: Date.now(), instanceId: 'i1', clientAddress: null, countsTowardKeyLimits: true });
      expect(await store.settle(big, { cost: 9_999, usage: { prompt_tokens: 1, completion_tokens: 1 }, status: 'succeeded', at: Date.now() })).toBe(1_000);
      expect(await ledgerBalance(accountId)).toEqual({ balance: 4_875_543, held: 0 });
      expect((await store.getAccount(accountId))?.balance).toBe(4_875_543);
    });

    it('refund releases the whole hold; the ledger records hold then refund', async () => {
      const accountId = await newAccount(1_000_000);
      const jobId = randomUUID();
      await store.hold({ jobId, accountId, keyId: null, keyFamilyId: 'fam', kind: 'chat', model: 'm', amount: 600_000, at: Date.now(), instanceId: 'i1', clientAddress: null, countsTowardKeyLimits: true });
      expect((await hold(accountId, 600_000)).ok).toBe(false);
      expect(await store.refund(jobId, { status: 'failed', errorCode: 'upstream_error', at: Date.now() })).toBe(true);
      expect(await store.getAccount(accountId)).toMatchObject({ balance: 1_000_000, held: 0 });
      const kinds = (await store.listLedger(accountId, 10)).filter((r) => r.jobId === jobId).map((r) => r.kind);
      expect(kinds).toEqual(['refund', 'hold']);
      expect((await store.getJob(jobId))?.errorCode).toBe('upstream_error');
    });

    it('jobs of processes that are gone are refunded; a live process keeps its own', async () => {
      const accountId = await newAccount(3_000_000);
      const now = Date.now();
      await store.heartbeat({ id: 'dead-elsewhere', host: 'other-host', pid: 1 }, now - 120_000);
      await store.heartbeat({ id: 'alive-elsewhere', host: 'other-host', pid: 1 }, now);
      await store.heartbeat({ id: 'dead-here', host: hostname(), pid: 2 ** 22 + 12345 }, now);
      expect((await hold(accountId, 1_000_000, 'dead-elsewhere')).ok).toBe(true);
      expect((await hold(accountId, 1_000_000, 'alive-elsewhere')).ok).toBe(true);
      expect((await hold(accountId, 500_000, 'dead-here')).ok).toBe(true);
      expect((await hold(accountId, 250_000, 'never-registered')).ok).toBe(true);
      const refunded = await new OrphanRecovery(store, 'me').sweep(now);
      expect(refunded).toBeGreaterThanOrEqual(3); // earlier tests' open holds (instance i1, never registered) go too
      expect(await store.getAccount(accountId)).toMatchObject({ balance: 3_000_000, held: 1_000_000 });
      expect((await store.listInstances()).map((i) => i.id).sort()).toEqual(['alive-elsewhere', 'me']);
      expect(await new OrphanRecovery(store, 'me').sweep(now)).toBe(0);
    });
  });
}
