/**
 * A settle or refund that fails once (a dropped connection, a deadlock past its retries) on a live
 * process: the caller gets what the close will apply (the charge capped at the hold; a refund), so the
 * run's answer is still given, and the close is tried again in the background until it applies,
 * exactly once, so the credits are not held until the process ends.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InFlightRuns } from '../src/billing/in-flight.ts';
import { PaidRuns } from '../src/billing/paid-run.ts';
import type { MoneyStore } from '../src/store/money-contract.ts';
import { account, DIALECTS, hold, ledgerMoney, storesFor } from './helpers/stores.ts';

const silent = { error() {}, warn() {}, info() {}, debug() {}, trace() {}, fatal() {}, child() { return silent; }, level: 'silent' } as never;

async function until(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !(await check()); ) {
    if (Date.now() > end) throw new Error('not closed in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(DIALECTS)('a close that fails once, on $name', (dialect) => {
  const ctx = storesFor(dialect);

  for (const closing of ['refund', 'settle'] as const) {
    it(`${closing}: the caller gets what the close will apply; the hold is closed on a later attempt, once`, async () => {
      const { store } = ctx;
      const accountId = await account(store, { credits: 5_000_000 });
      const jobId = randomUUID();
      expect((await hold(store, accountId, 4_000_000, { jobId })).ok).toBe(true);
      let failures = 1;
      const fail = () => failures-- > 0;
      const money: MoneyStore = {
        hold: (h) => store.money.hold(h),
        settle: (id, s) => (fail() ? Promise.reject(new Error('Connection terminated unexpectedly')) : store.money.settle(id, s)),
        refund: (id, r) => (fail() ? Promise.reject(new Error('Connection terminated unexpectedly')) : store.money.refund(id, r)),
      };
      const runs = new PaidRuns({ money, inFlight: new InFlightRuns({ subscribe() {} } as never), instanceId: 'i1', providerTimeoutMs: 60_000, logger: silent, now: Date.now });
      const run = runs.resume(jobId, 4_000_000);
      let answered: unknown;
      const work = closing === 'refund'
        ? async () => { throw new Error('provider failed'); }
        : async () => { answered = await run.settle(1_500_000, { prompt_tokens: 3 }); };
      await runs.execute(run, work);
      if (closing === 'settle') expect(answered).toBe(1_500_000);

      await until(async () => (await store.jobs.getJob(jobId))?.status !== 'processing');
      const charged = closing === 'settle' ? 1_500_000 : 0;
      expect(await store.accounts.getAccount(accountId)).toMatchObject({ balance: 5_000_000 - charged, held: 0 });
      expect(await ledgerMoney(store, accountId)).toEqual({ balance: 5_000_000 - charged, held: 0 });
      const rows = (await store.accounts.listLedger(accountId, 100)).filter((r) => r.jobId === jobId).map((r) => r.kind).sort();
      expect(rows).toEqual(['hold', closing]);
    });
  }

  it('a process waits for closes being retried, up to its bound: true once they applied, false while the store still fails', async () => {
    const { store } = ctx;
    const accountId = await account(store, { credits: 5_000_000 });
    const jobs = [randomUUID(), randomUUID()];
    for (const jobId of jobs) expect((await hold(store, accountId, 1_000_000, { jobId })).ok).toBe(true);
    let failing = true;
    const money: MoneyStore = {
      hold: (h) => store.money.hold(h),
      settle: (id, s) => (failing ? Promise.reject(new Error('Connection terminated unexpectedly')) : store.money.settle(id, s)),
      refund: (id, r) => store.money.refund(id, r),
    };
    const runs = new PaidRuns({ money, inFlight: new InFlightRuns({ subscribe() {} } as never), instanceId: 'i1', providerTimeoutMs: 60_000, logger: silent, now: Date.now });
    expect(await runs.retriedClosesApplied(10)).toBe(true);
    for (const jobId of jobs) {
      const run = runs.resume(jobId, 1_000_000);
      await runs.execute(run, async () => { await run.settle(400_000, { prompt_tokens: 1 }); });
    }
    expect(await runs.retriedClosesApplied(300)).toBe(false);
    failing = false;
    expect(await runs.retriedClosesApplied(5_000)).toBe(true);
    expect(await store.accounts.getAccount(accountId)).toMatchObject({ balance: 5_000_000 - 800_000, held: 0 });
  });
});

