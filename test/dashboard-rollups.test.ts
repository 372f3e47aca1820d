/**
 * The dashboard's hourly rollups on both databases: the ledger trigger (migration 090) adds each
 * settled or refunded job once, with its tokens read from the job's usage JSON; the job log reads
 * the same JSON.
 */
import { describe, expect, it } from 'vitest';
import { usageStoreFor } from '../src/store/sql/usage-rollups.ts';
import { account, DIALECTS, hold, key, storesFor } from './helpers/stores.ts';

const HOUR = 3_600_000;

describe.each(DIALECTS)('usage rollups on $name', (dialect) => {
  const ctx = storesFor(dialect);

  it('settled and refunded jobs are rolled up once, tokens from usage, a refund at 0 credits', async () => {
    const { store } = ctx;
    const usage = usageStoreFor(store);
    if (usage === undefined) throw new Error('not a SQL store');
    const accountId = await account(store, { credits: 10_000_000 });
    const k = await key(store, accountId);
    const at = Date.now();
    const jobs = ['settled', 'canceled', 'refunded', 'open'].map((name) => `${name}-${accountId}`);
    for (const jobId of jobs) expect((await hold(store, accountId, 1_000_000, { key: k, at, jobId })).ok).toBe(true);
    const [settled = '', canceled = '', refunded = ''] = jobs;
    await store.settle(settled, { cost: 250_000, usage: { prompt_tokens: 100, completion_tokens: 50 }, status: 'succeeded', at: at + 5 });
    await store.settle(canceled, { cost: 20_000, usage: { prompt_tokens: 7, completion_tokens: 3 }, status: 'canceled', at: at + 6 });
    await store.refund(refunded, { status: 'failed', errorCode: 'upstream_error', at: at + 7 });
    // Closing again changes nothing (only a processing job closes, so no second ledger row).
    await store.refund(settled, { status: 'failed', errorCode: 'upstream_error', at: at + 8 });

    const report = await usage.usage({ from: at - HOUR, to: at + HOUR, bucket: 'hour', accountId });
    expect(report.series).toHaveLength(1);
    expect(report.series[0]).toMatchObject({ requests: 3, errors: 1, credits: 270_000, promptTokens: 107, completionTokens: 53 });
    expect(report.errorsByCode).toEqual([{ code: 'upstream_error', requests: 1 }]);
    expect(report.topKeys).toEqual([{ keyId: k.id, keyName: 'k', accountId, requests: 3, credits: 270_000 }]);

    const log = await usage.jobLog({ accountId, limit: 10 });
    const byId = new Map(log.map((row) => [row.id, row]));
    expect(byId.get(settled)).toMatchObject({ status: 'succeeded', promptTokens: 100, completionTokens: 50, cost: 250_000 });
    expect(byId.get(refunded)).toMatchObject({ status: 'failed', errorCode: 'upstream_error', promptTokens: null, cost: 0 });
    expect(byId.get(jobs[3] ?? '')).toMatchObject({ status: 'processing', cost: null });
    expect((await usage.jobLog({ accountId, status: 'processing', limit: 10 })).map((row) => row.id)).toEqual([jobs[3]]);
  });
});
