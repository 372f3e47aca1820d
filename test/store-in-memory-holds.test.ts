/**
 * Runs reserved in memory on SQLite (issue 29, docs/money-path.md "In memory, on SQLite"): the
 * decision counts every reservation, durable holds count the in-memory ones and the other way
 * round, a close writes the whole run at once, a run in flight is recorded after 250 ms or when
 * its account is read, and GET /jobs/{id} sees an unrecorded run.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RECORD_AFTER_MS, type HoldResult, type JobKind } from '../src/store/money-contract.ts';
import { openStore } from '../src/store/open-store.ts';
import type { ApiKeyRecord, Store } from '../src/store/types.ts';
import { account, key, ledgerMoney } from './helpers/stores.ts';

let store: Store;
beforeEach(async () => {
  store = await openStore('sqlite::memory:');
});
afterEach(async () => store.close());

/** A hold as the paid-run core asks for it (recordAfterMs for runs that end with their request). */
function admit(accountId: string, amount: number, options: { key?: ApiKeyRecord; kind?: JobKind; jobId?: string } = {}): Promise<HoldResult> {
  const kind = options.kind ?? 'chat';
  return store.money.hold({
    jobId: options.jobId ?? randomUUID(), accountId, keyId: options.key?.id ?? null, keyFamilyId: options.key?.familyId ?? null, kind, model: 'm', amount,
    at: Date.now(), instanceId: 'i1', clientAddress: null, countsTowardKeyLimits: true,
    ...(kind === 'chat' || kind === 'embeddings' ? { recordAfterMs: RECORD_AFTER_MS } : {}),
  });
}

/** Rows of the ledger (no account read: that would record the runs). */
const ledgerRows = async (accountId: string) => (await store.accounts.listLedger(accountId, 1000)).map((r) => r.kind);

describe('in-memory reservations on SQLite', () => {
  it('a balance for exactly 3 runs: 10 concurrent admissions, 3 pass, nothing written until the closes; the close writes job, ledger and balance', async () => {
    const accountId = await account(store, { credits: 3_000 });
    const k = await key(store, accountId);
    const ids = Array.from({ length: 10 }, () => randomUUID());
    const results = await Promise.all(ids.map((jobId) => admit(accountId, 1_000, { key: k, jobId })));
    expect(results.filter((r) => r.ok)).toHaveLength(3);
    for (const r of results.filter((r) => !r.ok)) expect(r).toEqual({ ok: false, reason: 'insufficient_credits', available: 0 });
    const admitted = ids.filter((_, i) => results[i]?.ok === true);
    // Unrecorded: GET /jobs/{id} answers processing from the registry; no job row yet.
    expect(await store.jobs.getJob(admitted[0] as string)).toMatchObject({ status: 'processing', held: 1_000, cost: null });
    expect(await store.jobs.listJobs(accountId, { limit: 10 })).toHaveLength(0);

    expect(await store.money.settle(admitted[0] as string, { cost: 400, usage: { input_tokens: 3 }, status: 'succeeded', at: Date.now() })).toBe(400);
    expect(await store.money.refund(admitted[1] as string, { status: 'failed', errorCode: 'upstream_error', at: Date.now() })).toBe(true);
    // A close happens once.
    expect(await store.money.settle(admitted[0] as string, { cost: 400, usage: {}, status: 'succeeded', at: Date.now() })).toBe(0);
    expect(await store.jobs.getJob(admitted[0] as string)).toMatchObject({ status: 'succeeded', cost: 400, usage: { input_tokens: 3 } });
    expect(await store.jobs.getJob(admitted[1] as string)).toMatchObject({ status: 'failed', cost: 0, errorCode: 'upstream_error' });
    expect(await store.keys.keyFamilyUsage(k.familyId, Date.now())).toEqual({ day: 400, month: 400 });

    await store.money.settle(admitted[2] as string, { cost: 5_000, usage: {}, status: 'succeeded', at: Date.now() });
    expect(await store.accounts.getAccount(accountId)).toMatchObject({ balance: 3_000 - 400 - 1_000, held: 0 });
    expect(await ledgerMoney(store, accountId)).toEqual({ balance: 1_600, held: 0 });
    expect((await ledgerRows(accountId)).filter((kind) => kind === 'hold')).toHaveLength(3);
  });

  it('durable holds count the in-memory reservations, and in-memory ones count the durable holds', async () => {
    const accountId = await account(store, { credits: 3_000 });
    expect(await admit(accountId, 1_000)).toEqual({ ok: true });
    // An image job takes the durable hold; it sees the 1,000 reserved in memory.
    expect(await admit(accountId, 1_500, { kind: 'image' })).toEqual({ ok: true });
    expect(await admit(accountId, 1_000, { kind: 'image' })).toEqual({ ok: false, reason: 'insufficient_credits', available: 500 });
    expect(await admit(accountId, 600)).toEqual({ ok: false, reason: 'insufficient_credits', available: 500 });
    expect(await admit(accountId, 500)).toEqual({ ok: true });
  });

  it('a key given a daily limit while its runs are in memory: the next (durable) hold counts them', async () => {
    const accountId = await account(store, { credits: 100_000 });
    const k = await key(store, accountId);
    for (let i = 0; i < 3; i++) expect(await admit(accountId, 1_000, { key: k })).toEqual({ ok: true });
    await store.keys.updateKey(k.id, { dailyLimit: 3_500 });
    expect(await admit(accountId, 1_000, { key: k })).toEqual({ ok: false, reason: 'key_limit', period: 'daily', limit: 3_500, used: 3_000 });
    expect(await admit(accountId, 500, { key: k })).toEqual({ ok: true });
  });

  it('a run in flight is recorded as a durable hold after 250 ms, or at once when its account is read; it then closes as a durable hold', async () => {
    const accountId = await account(store, { credits: 10_000 });
    const late = randomUUID();
    const read = randomUUID();
    expect(await admit(accountId, 1_000, { jobId: late })).toEqual({ ok: true });
    await new Promise((r) => setTimeout(r, RECORD_AFTER_MS + 300));
    expect((await store.jobs.listJobs(accountId, { limit: 10 })).map((j) => [j.id, j.status])).toEqual([[late, 'processing']]);
    expect(await admit(accountId, 2_000, { jobId: read })).toEqual({ ok: true });
    // The account read records the second run first: held shows both, durable.
    expect(await store.accounts.getAccount(accountId)).toMatchObject({ balance: 10_000, held: 3_000 });
    expect(await ledgerRows(accountId)).toEqual(expect.arrayContaining(['hold', 'hold']));
    expect(await store.money.settle(late, { cost: 700, usage: {}, status: 'succeeded', at: Date.now() })).toBe(700);
    expect(await store.money.refund(read, { status: 'canceled', errorCode: 'client_closed_request', at: Date.now() })).toBe(true);
    expect(await store.accounts.getAccount(accountId)).toMatchObject({ balance: 9_300, held: 0 });
    expect(await ledgerMoney(store, accountId)).toEqual({ balance: 9_300, held: 0 });
  });

  it('accounts without a purchase and keys with credit limits take the durable hold (a job row at once)', async () => {
    const trial = await account(store, { credits: 1_000_000, purchase: false });
    const trialJob = randomUUID();
    expect(await admit(trial, 1_000, { jobId: trialJob })).toEqual({ ok: true });
    expect((await store.jobs.listJobs(trial, { limit: 10 })).map((j) => j.id)).toEqual([trialJob]);
    const paying = await account(store, { credits: 100_000 });
    const limited = await key(store, paying, { monthlyLimit: 50_000 });
    const limitedJob = randomUUID();
    expect(await admit(paying, 1_000, { key: limited, jobId: limitedJob })).toEqual({ ok: true });
    expect((await store.jobs.listJobs(paying, { limit: 10 })).map((j) => j.id)).toEqual([limitedJob]);
  });
});
