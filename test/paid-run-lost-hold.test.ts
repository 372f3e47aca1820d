/**
 * A hold whose answer is lost (the connection broke around its commit): the route answers an
 * error and no run follows, but the hold may have committed. The core refunds it if it exists,
 * so the credits are not held until the process ends; if it never committed, nothing moves.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InFlightRuns } from '../src/billing/in-flight.ts';
import { PaidRuns } from '../src/billing/paid-run.ts';
import type { MoneyStore } from '../src/store/money-contract.ts';
import type { Store } from '../src/store/types.ts';
import { account, DIALECTS, ledgerMoney, storesFor } from './helpers/stores.ts';

const silent = { error() {}, warn() {}, info() {}, debug() {}, trace() {}, fatal() {}, child() { return silent; }, level: 'silent' } as never;
const lost = () => new Error('Connection terminated unexpectedly');

function runsOver(store: Store, hold: MoneyStore['hold']): PaidRuns {
  const money: MoneyStore = { hold, settle: (id, s) => store.money.settle(id, s), refund: (id, r) => store.money.refund(id, r) };
  return new PaidRuns({ money, inFlight: new InFlightRuns({ subscribe() {} } as never), instanceId: 'i1', providerTimeoutMs: 60_000, logger: silent, now: Date.now });
}

const admission = (accountId: string, jobId: string) => ({
  jobId, key: { id: randomUUID(), familyId: accountId, accountId, expiresAt: null }, kind: 'chat' as const, model: 'm', quote: 2_000_000, clientAddress: null,
  refusal: { spendingLimit: 'spending_limit_reached' as const, holdMadeOf: 'the quote', lowerBy: 'ask for less' },
});

describe.each(DIALECTS)('a hold whose answer is lost, on $name', (dialect) => {
  const ctx = storesFor(dialect);

  it('committed: the caller gets the failure, and the hold is refunded in full about a second later, once', async () => {
    const { store } = ctx;
    const accountId = await account(store, { credits: 5_000_000 });
    const jobId = randomUUID();
    const runs = runsOver(store, async (h) => {
      await store.money.hold(h);
      throw lost();
    });
    await expect(runs.admit(admission(accountId, jobId))).rejects.toThrow('Connection terminated unexpectedly');
    expect(await store.accounts.getAccount(accountId)).toMatchObject({ balance: 5_000_000, held: 2_000_000 });

    for (const end = Date.now() + 5_000; (await store.jobs.getJob(jobId))?.status === 'processing' && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
    expect(await store.jobs.getJob(jobId)).toMatchObject({ status: 'failed', errorCode: 'internal_error' });
    expect(await store.accounts.getAccount(accountId)).toMatchObject({ balance: 5_000_000, held: 0 });
    expect(await ledgerMoney(store, accountId)).toEqual({ balance: 5_000_000, held: 0 });
    expect((await store.accounts.listLedger(accountId, 100)).filter((r) => r.jobId === jobId).map((r) => r.kind).sort()).toEqual(['hold', 'refund']);
  });

  it('never committed: nothing moves', async () => {
    const { store } = ctx;
    const accountId = await account(store, { credits: 5_000_000 });
    const jobId = randomUUID();
    const runs = runsOver(store, async () => {
      throw lost();
    });
    await expect(runs.admit(admission(accountId, jobId))).rejects.toThrow('Connection terminated unexpectedly');
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await store.jobs.getJob(jobId)).toBeUndefined();
    expect(await store.accounts.getAccount(accountId)).toMatchObject({ balance: 5_000_000, held: 0 });
    expect((await store.accounts.listLedger(accountId, 100)).filter((r) => r.jobId === jobId)).toEqual([]);
  });
});
