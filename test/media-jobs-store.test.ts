/**
 * The media job store on both dialects, and the crash rule with orphan recovery: running
 * jobs WITH prediction ids of gone processes are adopted (once, by one process) and left
 * held for it to resume; every other hold of a gone process is refunded.
 * PostgreSQL must be reachable, as for test/store-billing.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentPidScope, OrphanRecovery } from '../src/billing/orphan-recovery.ts';
import type { MediaJobStore } from '../src/store/media-jobs.ts';
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
  describe(`media jobs on ${dialect.name}`, () => {
    let store: Store;
    let jobs: MediaJobStore;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      ({ store, drop } = await dialect.open());
      jobs = store.mediaJobs;
    });
    afterAll(async () => drop());

    async function heldJob(accountId: string, instanceId: string, amount = 1_000_000): Promise<string> {
      const jobId = randomUUID();
      const result = await store.money.hold({ jobId, accountId, keyId: null, keyFamilyId: null, kind: 'video', model: 'clip', amount, at: Date.now(), instanceId, clientAddress: null, countsTowardKeyLimits: true });
      expect(result.ok).toBe(true);
      return jobId;
    }

    it('keeps a plan, the prediction ids and the outcome', async () => {
      const account = await store.accounts.createAccount({ name: 'a', email: null, createdAt: Date.now(), hasPurchase: true, billingEmails: true });
      await store.accounts.addCredits(account.id, 10_000_000, 'topup', Date.now());
      const jobId = await heldJob(account.id, 'i1');
      await jobs.create(jobId, { kind: 'video', terms: { unit: 'per_video' } }, 1000);
      expect(await jobs.get(jobId)).toMatchObject({ jobId, plan: { kind: 'video' }, predictionIds: [], outputs: null, usage: null, createdAt: 1000 });
      await jobs.markProcessing(jobId, ['p1', 'p2'], 2000);
      await jobs.recordOutcome(jobId, { outputs: ['https://h/a.mp4'], usage: { videos: 1 }, errorCode: null, errorMessage: null }, 3000);
      expect(await jobs.get(jobId)).toMatchObject({ predictionIds: ['p1', 'p2'], outputs: ['https://h/a.mp4'], usage: { videos: 1 }, updatedAt: 3000 });
      expect(await jobs.get(randomUUID())).toBeUndefined();
      await store.money.refund(jobId, { status: 'failed', errorCode: 'upstream_error', at: 4000 });
    });

    it('orphan recovery adopts the jobs the host has taken (once) and refunds the others', async () => {
      const account = await store.accounts.createAccount({ name: 'a', email: null, createdAt: Date.now(), hasPurchase: true, billingEmails: true });
      await store.accounts.addCredits(account.id, 10_000_000, 'topup', Date.now());
      const now = Date.now();
      const dead = `dead-${randomUUID()}`;
      await store.instances.renewLease({ id: dead, host: hostname(), pid: 2 ** 22 + 4321, pidScope: currentPidScope() }, 60_000);
      const taken = await heldJob(account.id, dead);
      await jobs.create(taken, { kind: 'video' }, now);
      await jobs.markProcessing(taken, ['pred-1'], now);
      const notTaken = await heldJob(account.id, dead);
      await jobs.create(notTaken, { kind: 'video' }, now);
      const chat = await heldJob(account.id, dead);

      const adopted: string[] = [];
      const me = `me-${randomUUID()}`;
      const recovery = new OrphanRecovery(store.instances, me, {
        adopt: async (gone, expiredAt) => {
          for (const job of await jobs.adopt(gone, me, expiredAt)) adopted.push(job.record.jobId);
        },
      });
      // At start-up, the dead pid in this pid namespace ends its process's lease at once.
      expect(await recovery.sweep()).toBe(2);
      expect(adopted).toEqual([taken]);
      expect(await store.jobs.getJob(taken)).toMatchObject({ status: 'processing' });
      expect(await store.jobs.getJob(notTaken)).toMatchObject({ status: 'failed' });
      expect(await store.jobs.getJob(chat)).toMatchObject({ status: 'failed' });
      expect((await store.accounts.getAccount(account.id))?.held).toBe(1_000_000);
      // Adopted once: nobody else gets it, and the adopter's own sweep refunds nothing of it.
      expect(await jobs.adopt([dead], 'someone-else')).toEqual([]);
      expect(await recovery.sweep()).toBe(0);
      const again = await jobs.adopt([dead, 'other'], me);
      expect(again.map((j) => [j.record.jobId, j.held])).toEqual([[taken, 1_000_000]]);
      // It settles once, like any run.
      expect(await store.money.settle(taken, { cost: 400_000, usage: { videos: 1 }, status: 'succeeded', at: now })).toBe(400_000);
      expect(await store.money.settle(taken, { cost: 400_000, usage: { videos: 1 }, status: 'succeeded', at: now })).toBe(0);
      expect(await jobs.adopt([me], 'later')).toEqual([]);

      // With the lease condition, a job whose owner's lease lives is not moved, even when asked outright.
      const live = `live-${randomUUID()}`;
      const { now: dbNow } = await store.instances.renewLease({ id: live, host: 'other-host', pid: 1, pidScope: null }, 60_000);
      const running = await heldJob(account.id, live);
      await jobs.create(running, { kind: 'video' }, now);
      await jobs.markProcessing(running, ['pred-2'], now);
      expect(await jobs.adopt([live], 'thief', dbNow)).toEqual([]);
      expect(await store.jobs.getJob(running)).toMatchObject({ status: 'processing' });
      expect((await jobs.adopt([live], 'heir')).map((j) => j.record.jobId)).toEqual([running]);
    });
  });
}
