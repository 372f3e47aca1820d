/**
 * Holds, settlement, refunds and crash recovery at the storage layer, on both
 * implementations. PostgreSQL must be reachable (127.0.0.1:5432, database `test`):
 * these tests fail, never skip, without it.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { describe, expect, it, vi } from 'vitest';
import { currentPidScope, holdsUnderLease, OrphanRecovery } from '../src/billing/orphan-recovery.ts';
import type { Store } from '../src/store/types.ts';
import { DIALECTS, account, hold, ledgerMoney, storesFor } from './helpers/stores.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const dialect of DIALECTS) {
  describe(`billing store on ${dialect.name}`, () => {
    const ctx = storesFor(dialect);

    it('50 concurrent holds (from three processes on PostgreSQL) on a balance that covers exactly 10: 10 pass, 40 refused, never below zero', async () => {
      const accountId = await account(ctx.store, { credits: 10 * 1_234_567 });
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => hold(ctx.stores[i % 3] as Store, accountId, 1_234_567)));
      expect(results.filter((r) => r.ok)).toHaveLength(10);
      const refused = results.filter((r) => !r.ok);
      expect(refused).toHaveLength(40);
      for (const r of refused) expect(r).toMatchObject({ reason: 'insufficient_credits', available: 0 });
      const state = await ctx.store.accounts.getAccount(accountId);
      expect(state).toMatchObject({ balance: 12_345_670, held: 12_345_670 });
      expect(await ledgerMoney(ctx.store, accountId)).toEqual({ balance: 12_345_670, held: 12_345_670 });
    });

    it('a refused hold says what is available', async () => {
      const accountId = await account(ctx.store, { credits: 1_000 });
      expect(await hold(ctx.store, accountId, 1_001)).toEqual({ ok: false, reason: 'insufficient_credits', available: 1_000 });
      expect(await hold(ctx.store, 'no-such-account', 1)).toEqual({ ok: false, reason: 'insufficient_credits', available: 0 });
    });

    it('settle charges the cost (capped at the hold) and releases the rest; settle and refund happen once', async () => {
      const accountId = await account(ctx.store, { credits: 5_000_000 });
      const jobId = randomUUID();
      await hold(ctx.store, accountId, 2_000_000, { jobId });
      expect(await ctx.store.accounts.getAccount(accountId)).toMatchObject({ balance: 5_000_000, held: 2_000_000 });
      expect(await ctx.store.jobs.getJob(jobId)).toMatchObject({ status: 'processing', held: 2_000_000, cost: null, finishedAt: null });
      const charged = await ctx.store.money.settle(jobId, { cost: 123_457, usage: { prompt_tokens: 10, completion_tokens: 20 }, status: 'succeeded', at: Date.now(), output: { count: 1 } });
      expect(charged).toBe(123_457);
      expect(await ctx.store.accounts.getAccount(accountId)).toMatchObject({ balance: 4_876_543, held: 0 });
      expect(await ctx.store.money.settle(jobId, { cost: 5, usage: {}, status: 'succeeded', at: Date.now() })).toBe(0);
      expect(await ctx.store.money.refund(jobId, { status: 'failed', errorCode: 'upstream_error', at: Date.now() })).toBe(false);
      expect(await ctx.store.jobs.getJob(jobId)).toMatchObject({
        status: 'succeeded', cost: 123_457, usage: { prompt_tokens: 10, completion_tokens: 20 }, output: { count: 1 }, errorCode: null,
      });

      const big = randomUUID();
      await hold(ctx.store, accountId, 1_000, { jobId: big });
      expect(await ctx.store.money.settle(big, { cost: 9_999, usage: { images: 2 }, status: 'canceled', at: Date.now() })).toBe(1_000);
      expect(await ctx.store.jobs.getJob(big)).toMatchObject({ status: 'canceled', cost: 1_000, usage: { images: 2 } });
      expect(await ledgerMoney(ctx.store, accountId)).toEqual({ balance: 4_875_543, held: 0 });
      expect((await ctx.store.accounts.getAccount(accountId))?.balance).toBe(4_875_543);
      expect(await ctx.store.accounts.accountSpentSince(accountId, 0)).toBe(124_457);
    });

    it('refund releases the whole hold; the ledger records hold then refund', async () => {
      const accountId = await account(ctx.store, { credits: 1_000_000 });
      const jobId = randomUUID();
      await hold(ctx.store, accountId, 600_000, { jobId });
      expect((await hold(ctx.store, accountId, 600_000)).ok).toBe(false);
      expect(await ctx.store.money.refund(jobId, { status: 'failed', errorCode: 'upstream_error', at: Date.now() })).toBe(true);
      expect(await ctx.store.accounts.getAccount(accountId)).toMatchObject({ balance: 1_000_000, held: 0 });
      const kinds = (await ctx.store.accounts.listLedger(accountId, 10)).filter((r) => r.jobId === jobId).map((r) => r.kind);
      expect(kinds).toEqual(['refund', 'hold']);
      expect(await ctx.store.jobs.getJob(jobId)).toMatchObject({ status: 'failed', errorCode: 'upstream_error', cost: 0 });
      expect((await ctx.store.jobs.listJobs(accountId, { limit: 10 })).map((j) => j.id)).toEqual([jobId]);
    });

    it('a hold is idempotent by job id: the same hold again (a retry after a lost commit) answers ok and reserves nothing more', async () => {
      const accountId = await account(ctx.store, { credits: 1_000_000 });
      const jobId = randomUUID();
      expect(await hold(ctx.store, accountId, 400_000, { jobId })).toEqual({ ok: true });
      expect(await hold(ctx.store, accountId, 400_000, { jobId })).toEqual({ ok: true });
      expect(await ctx.store.accounts.getAccount(accountId)).toMatchObject({ held: 400_000 });
      await expect(hold(ctx.store, accountId, 300_000, { jobId })).rejects.toThrow();
      expect(await ledgerMoney(ctx.store, accountId)).toEqual({ balance: 1_000_000, held: 400_000 });
    });

    it('holds of processes whose lease ran out are refunded; a live lease keeps its holds; at start-up a dead pid in this pid namespace ends its lease at once', async () => {
      const accountId = await account(ctx.store, { credits: 4_000_000 });
      const elsewhere = { host: 'other-host', pid: 1, pidScope: 'other-boot/pid:[4026531836]' };
      await ctx.store.instances.renewLease({ id: 'expired-elsewhere', ...elsewhere }, 1);
      await ctx.store.instances.renewLease({ id: 'alive-elsewhere', ...elsewhere }, 60_000);
      await ctx.store.instances.renewLease({ id: 'dead-here', host: hostname(), pid: 2 ** 22 + 12345, pidScope: currentPidScope() }, 60_000);
      await sleep(20);
      expect((await hold(ctx.store, accountId, 1_000_000, { instanceId: 'expired-elsewhere' })).ok).toBe(true);
      expect((await hold(ctx.store, accountId, 1_000_000, { instanceId: 'alive-elsewhere' })).ok).toBe(true);
      expect((await hold(ctx.store, accountId, 500_000, { instanceId: 'dead-here' })).ok).toBe(true);
      expect((await hold(ctx.store, accountId, 250_000, { instanceId: 'never-registered' })).ok).toBe(true);
      const me = new OrphanRecovery(ctx.store.instances, 'me', { leaseMs: 60_000 });
      const refunded = await me.sweep();
      expect(refunded).toBeGreaterThanOrEqual(3); // earlier tests' open holds (instance i1, never registered) go too
      expect(await ctx.store.accounts.getAccount(accountId)).toMatchObject({ balance: 4_000_000, held: 1_000_000 });
      expect((await ctx.store.instances.listInstances()).map((i) => i.id).sort()).toEqual(['alive-elsewhere', 'me']);
      expect(await me.sweep()).toBe(0);

      // After start-up, leases alone decide: a dead pid with a live lease keeps its holds until the lease runs out.
      await ctx.store.instances.renewLease({ id: 'dead-later', host: hostname(), pid: 2 ** 22 + 12346, pidScope: currentPidScope() }, 300);
      expect((await hold(ctx.store, accountId, 1_000_000, { instanceId: 'dead-later' })).ok).toBe(true);
      expect(await me.sweep()).toBe(0);
      expect(await ctx.store.accounts.getAccount(accountId)).toMatchObject({ held: 2_000_000 });
      await sleep(350);
      expect(await me.sweep()).toBe(1);
      expect(await ctx.store.accounts.getAccount(accountId)).toMatchObject({ balance: 4_000_000, held: 1_000_000 });
      expect(await ledgerMoney(ctx.store, accountId)).toEqual({ balance: 4_000_000, held: 1_000_000 });
    });

    it('two processes sweeping at once refund each hold of a process whose lease ran out exactly once, and never a hold of a live lease', async () => {
      const accountId = await account(ctx.store, { credits: 100_000_000 });
      const crashed = `crashed-${randomUUID()}`;
      const live = `live-${randomUUID()}`;
      const elsewhere = { host: 'other-host', pid: 1, pidScope: null };
      await ctx.store.instances.renewLease({ id: crashed, ...elsewhere }, 1);
      const liveLease = await ctx.store.instances.renewLease({ id: live, ...elsewhere }, 60_000);
      await sleep(20);
      const crashedJobs = await Promise.all(Array.from({ length: 20 }, async () => {
        const jobId = randomUUID();
        expect((await hold(ctx.store, accountId, 1_000_000, { jobId, instanceId: crashed })).ok).toBe(true);
        return jobId;
      }));
      const liveJobs = await Promise.all(Array.from({ length: 5 }, async () => {
        const jobId = randomUUID();
        expect((await hold(ctx.store, accountId, 2_000_000, { jobId, instanceId: live })).ok).toBe(true);
        return jobId;
      }));
      // The refund is conditional in itself: asked outright for the live process's jobs, it refunds none.
      expect(await ctx.store.instances.refundJobsOf([live], liveLease.now, liveLease.now + 1_000)).toBe(0);

      const survivors = [new OrphanRecovery((ctx.stores[1] as Store).instances, 'survivor-1'), new OrphanRecovery((ctx.stores[2] as Store).instances, 'survivor-2')];
      const counts = await Promise.all([...survivors, ...survivors].map((s) => s.sweep()));
      expect(counts.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(20);
      const ledger = await ctx.store.accounts.listLedger(accountId, 1_000);
      for (const jobId of crashedJobs) {
        expect(ledger.filter((r) => r.jobId === jobId).map((r) => r.kind).sort()).toEqual(['hold', 'refund']);
        expect(await ctx.store.jobs.getJob(jobId)).toMatchObject({ status: 'failed', errorCode: 'internal_error', cost: 0 });
      }
      for (const jobId of liveJobs) expect(await ctx.store.jobs.getJob(jobId)).toMatchObject({ status: 'processing' });
      expect(await ctx.store.accounts.getAccount(accountId)).toMatchObject({ balance: 100_000_000, held: 10_000_000 });
      expect(await ledgerMoney(ctx.store, accountId)).toEqual({ balance: 100_000_000, held: 10_000_000 });
      // The live process settles its own runs normally.
      for (const jobId of liveJobs) expect(await ctx.store.money.settle(jobId, { cost: 1_500_000, usage: {}, status: 'succeeded', at: Date.now() })).toBe(1_500_000);
      expect(await ledgerMoney(ctx.store, accountId)).toEqual({ balance: 92_500_000, held: 0 });
    });

    it('a hold renews the lease first when its last renewal is older than half a lease (a process that was paused holds only under a live lease)', async () => {
      const accountId = await account(ctx.store, { credits: 1_000_000 });
      const me = new OrphanRecovery(ctx.store.instances, `holder-${randomUUID()}`, { leaseMs: 400 });
      const renewals = vi.spyOn(ctx.store.instances, 'renewLease');
      try {
        const money = holdsUnderLease(ctx.store.money, me);
        const held = (instanceId: string) => money.hold({
          jobId: randomUUID(), accountId, keyId: null, keyFamilyId: null, kind: 'chat', model: 'm', amount: 1_000, at: Date.now(), instanceId,
          clientAddress: null, countsTowardKeyLimits: true,
        });
        expect((await held(me.self.id)).ok).toBe(true); // never renewed: renews
        expect((await held(me.self.id)).ok).toBe(true); // just renewed: does not
        expect(renewals).toHaveBeenCalledTimes(1);
        await sleep(250);
        expect((await held(me.self.id)).ok).toBe(true);
        expect(renewals).toHaveBeenCalledTimes(2);
        const [instance] = (await ctx.store.instances.listInstances()).filter((i) => i.id === me.self.id);
        expect(instance?.leaseUntil).toBeGreaterThan(Date.now() + 200);
      } finally {
        renewals.mockRestore();
      }
    });

    it('a renewal says when the lease had run out before it (the process was paused or cut off)', async () => {
      const me = { id: `paused-${randomUUID()}`, host: hostname(), pid: process.pid, pidScope: null };
      expect((await ctx.store.instances.renewLease(me, 1)).lapsed).toBe(false);
      await sleep(20);
      expect((await ctx.store.instances.renewLease(me, 60_000)).lapsed).toBe(true);
      expect((await ctx.store.instances.renewLease(me, 60_000)).lapsed).toBe(false);
    });
  });
}
