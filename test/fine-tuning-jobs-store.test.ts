/**
 * The fine-tuning job store on both dialects: the record beside the money row, listing an
 * account's jobs newest first with `after`, and the crash rule: running jobs WITH a provider
 * job id of gone processes are adopted (once) and left held; every other hold is refunded.
 * PostgreSQL must be reachable, as for test/store-billing.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentPidScope, OrphanRecovery } from '../src/billing/orphan-recovery.ts';
import type { FineTuningJobStore } from '../src/store/fine-tuning-jobs.ts';
import type { Store } from '../src/store/types.ts';
import { account, DIALECTS } from './helpers/stores.ts';

for (const dialect of DIALECTS) {
  describe(`fine-tuning jobs on ${dialect.name}`, () => {
    let store: Store;
    let jobs: FineTuningJobStore;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      ({ store, drop } = await dialect.open());
      jobs = store.fineTuningJobs;
    });
    afterAll(async () => drop());

    async function heldJob(accountId: string, instanceId: string, at: number, kind: 'fine_tuning' | 'chat' = 'fine_tuning'): Promise<string> {
      const jobId = randomUUID();
      const result = await store.money.hold({ jobId, accountId, keyId: null, keyFamilyId: null, kind, model: 'tune-me', amount: 1_000_000, at, instanceId, clientAddress: null, countsTowardKeyLimits: false });
      expect(result.ok).toBe(true);
      if (kind === 'fine_tuning') await jobs.create(jobId, { model: 'tune-me-1' }, at);
      return jobId;
    }

    it('keeps the plan, the provider job id and its last snapshot with the money row; lists newest first with after', async () => {
      const owner = await account(store, { credits: 10_000_000 });
      const other = await account(store, { credits: 10_000_000 });
      const ids = [await heldJob(owner, 'i1', 1000), await heldJob(owner, 'i1', 2000), await heldJob(owner, 'i1', 2000), await heldJob(owner, 'i1', 3000)];
      const others = await heldJob(other, 'i1', 4000);
      const first = ids[0] as string;
      expect(await jobs.get(first)).toMatchObject({ record: { jobId: first, plan: { model: 'tune-me-1' }, providerJobId: null, snapshot: null }, money: { accountId: owner, status: 'processing', held: 1_000_000, cost: null, createdAt: 1000 } });
      await jobs.markStarted(first, 'ftjob-1', { status: 'queued' }, 1500);
      await jobs.saveSnapshot(first, { status: 'running', trainedTokens: 10 }, 1600);
      await store.money.settle(first, { cost: 250_000, usage: { trained_tokens: 100 }, status: 'succeeded', at: 1700 });
      expect(await jobs.get(first)).toMatchObject({ record: { providerJobId: 'ftjob-1', snapshot: { status: 'running', trainedTokens: 10 }, updatedAt: 1600 }, money: { status: 'succeeded', cost: 250_000, finishedAt: 1700 } });
      expect(await jobs.get(randomUUID())).toBeUndefined();

      const order = (page: { jobs: { record: { jobId: string } }[] }) => page.jobs.map((j) => j.record.jobId);
      const all = await jobs.list(owner, { limit: 10 });
      expect(all.hasMore).toBe(false);
      const tied = [ids[1], ids[2]].sort().reverse();
      expect(order(all)).toEqual([ids[3], ...tied, first]);
      const page1 = await jobs.list(owner, { limit: 2 });
      expect(page1.hasMore).toBe(true);
      const page2 = await jobs.list(owner, { limit: 2, after: order(page1).at(-1) as string });
      expect([...order(page1), ...order(page2)]).toEqual(order(all));
      expect(page2.hasMore).toBe(false);
      for (const id of [...ids.slice(1), others]) await store.money.refund(id, { status: 'failed', errorCode: 'upstream_error', at: 5000 });
    });

    it('orphan recovery adopts the jobs the provider has taken (once) and refunds the others', async () => {
      const owner = await account(store, { credits: 10_000_000 });
      const now = Date.now();
      const dead = `dead-${randomUUID()}`;
      await store.instances.renewLease({ id: dead, host: hostname(), pid: 2 ** 22 + 4322, pidScope: currentPidScope() }, 60_000);
      const taken = await heldJob(owner, dead, now);
      await jobs.markStarted(taken, 'ftjob-taken', { status: 'running' }, now);
      const notTaken = await heldJob(owner, dead, now);
      const chat = await heldJob(owner, dead, now, 'chat');
      const me = `me-${randomUUID()}`;
      const adopted: string[] = [];
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
      expect(await jobs.adopt([dead], 'someone-else')).toEqual([]);
      const again = await jobs.adopt([dead], me);
      expect(again.map((j) => [j.record.jobId, j.money.held, j.record.providerJobId])).toEqual([[taken, 1_000_000, 'ftjob-taken']]);

      // With the lease condition, a job whose owner's lease lives is not moved, even when asked outright.
      const live = `live-${randomUUID()}`;
      const { now: dbNow } = await store.instances.renewLease({ id: live, host: 'other-host', pid: 1, pidScope: null }, 60_000);
      const running = await heldJob(owner, live, now);
      await jobs.markStarted(running, 'ftjob-live', { status: 'running' }, now);
      expect(await jobs.adopt([live], 'thief', dbNow)).toEqual([]);
      expect(await store.jobs.getJob(running)).toMatchObject({ status: 'processing' });
      expect((await jobs.adopt([live], 'heir')).map((j) => j.record.jobId)).toEqual([running]);
    });
  });
}
