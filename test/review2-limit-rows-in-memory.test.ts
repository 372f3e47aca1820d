/**
 * Review of issue 29 (helper review2): limits as a table and runs reserved in memory. A limit row
 * whose usage counts runs in flight but does not say what it counts of the in-memory reservations
 * (`Reading.reserved`) is checked against rows that do not hold those runs: the in-memory admission
 * would pass runs the durable hold refuses. Such a table must send the runs to the durable hold,
 * where the row is exact.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { HOLD_LIMITS, type HoldLimit } from '../src/store/limits.ts';
import { RECORD_AFTER_MS, type HoldResult } from '../src/store/money-contract.ts';
import { openStore } from '../src/store/open-store.ts';
import type { Store } from '../src/store/types.ts';
import { account, key } from './helpers/stores.ts';

/** A test-only account row: at most 1,500 micro-credits held at once (open holds, as the credits row counts them), without `reserved`. */
const heldCap: HoldLimit = {
  name: 'held_cap',
  owner: 'account',
  period: null,
  ceilingDoc: '1,500 micro-credits',
  counts: "the account's open holds",
  ceiling: { sql: '1500', ts: () => 1500 },
  used: { sql: 'a.held', ts: (f) => f.account.held },
  adds: 'amount',
  code: 'insufficient_credits',
  answer: ({ ceiling, used }) => ({ reason: 'insufficient_credits', available: ceiling - used }),
  matches: (r) => r.reason === 'insufficient_credits',
  figures: () => ({ ceiling: 0, used: 0 }),
  message: () => 'Too much held at once.',
};
const WITH_CAP: readonly HoldLimit[] = [HOLD_LIMITS[0] as HoldLimit, heldCap, ...HOLD_LIMITS.slice(1)];

let store: Store | undefined;
afterEach(async () => store?.close());

describe('a limit row without what it counts of in-memory runs', () => {
  it('runs that end with their request are not admitted past it (1,500 held at most: one run of 1,000, not two)', async () => {
    store = await openStore('sqlite::memory:', { limits: WITH_CAP });
    const accountId = await account(store, { credits: 100_000 });
    const k = await key(store, accountId);
    const admit = (): Promise<HoldResult> => (store as Store).money.hold({
      jobId: randomUUID(), accountId, keyId: k.id, keyFamilyId: k.familyId, kind: 'chat', model: 'm', amount: 1_000,
      at: Date.now(), instanceId: 'i1', clientAddress: null, countsTowardKeyLimits: true, recordAfterMs: RECORD_AFTER_MS,
    });
    const results = await Promise.all([admit(), admit()]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    // The same table on the durable hold refuses the second too (the row is right; only the in-memory path missed it).
    expect((await store.accounts.getAccount(accountId))?.held).toBe(1_000);
  });
});
