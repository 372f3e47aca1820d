/**
 * The dashboard's hourly rollups on both databases: the ledger trigger (migration 090) adds each
 * settled or refunded job once, with its tokens read from the job's usage JSON; the job log reads
 * the same JSON.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { account, DIALECTS, hold, key, storesFor } from './helpers/stores.ts';

const HOUR = 3_600_000;

describe.each(DIALECTS)('usage rollups on $name', (dialect) => {
  const ctx = storesFor(dialect);

  it('settled and refunded jobs are rolled up once, tokens from usage, a refund at 0 credits', async () => {
    const { store } = ctx;
    const usage = store.usage;
    if (usage === undefined) throw new Error('not a SQL store');
    const accountId = await account(store, { credits: 10_000_000 });
    const k = await key(store, accountId);
    const at = Date.now();
    const jobs = ['settled', 'canceled', 'refunded', 'open'].map((name) => `${name}-${accountId}`);
    for (const jobId of jobs) expect((await hold(store, accountId, 1_000_000, { key: k, at, jobId })).ok).toBe(true);
    const [settled = '', canceled = '', refunded = ''] = jobs;
    await store.money.settle(settled, { cost: 250_000, usage: { prompt_tokens: 100, completion_tokens: 50 }, status: 'succeeded', at: at + 5 });
    await store.money.settle(canceled, { cost: 20_000, usage: { prompt_tokens: 7, completion_tokens: 3 }, status: 'canceled', at: at + 6 });
    await store.money.refund(refunded, { status: 'failed', errorCode: 'upstream_error', at: at + 7 });
    // Closing again changes nothing (only a processing job closes, so no second ledger row).
    await store.money.refund(settled, { status: 'failed', errorCode: 'upstream_error', at: at + 8 });

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
    expect((await usage.jobLog({ accountId, status: 'canceled', limit: 10 })).map((row) => row.id)).toEqual([canceled]);
    expect((await usage.jobLog({ accountId, status: 'failed', limit: 10 })).map((row) => row.id)).toEqual([refunded]);
    expect((await usage.jobLog({ accountId, status: 'succeeded', limit: 10 })).map((row) => row.id)).toEqual([settled]);
  });
});

/** Jobs across day and hour edges: every overview read (whole days, the hours at the ends, one account, one key) agrees with the jobs. */
describe.each(DIALECTS)('usage totals on $name', (dialect) => {
  const ctx = storesFor(dialect);
  const DAY = 24 * HOUR;
  // Days of their own: other tests' jobs are of today.
  const d0 = Date.UTC(2021, 2, 10);

  it('every range and filter reads the same figures as the jobs themselves', async () => {
    const { store } = ctx;
    const usage = store.usage;
    if (usage === undefined) throw new Error('not a SQL store');
    const [a, b] = [await account(store, { credits: 1e12 }), await account(store, { credits: 1e12 })] as [string, string];
    const [k1, k2, k3] = [await key(store, a), await key(store, a), await key(store, b)];
    type Job = { account: string; key: typeof k1 | undefined; model: string; at: number; cost: number; code?: string; prompt: number };
    const jobs: Job[] = [
      { account: a, key: k1, model: 'm1', at: d0 + HOUR, cost: 1_000, prompt: 1 },
      { account: a, key: k2, model: 'm2', at: d0 + 5.5 * HOUR, cost: 2_100, prompt: 2 },
      { account: b, key: k3, model: 'm1', at: d0 + 23 * HOUR, cost: 0, code: 'upstream_error', prompt: 0 },
      { account: a, key: k1, model: 'm2', at: d0 + DAY + 2 * HOUR, cost: 3_200, prompt: 3 },
      { account: b, key: undefined, model: 'm3', at: d0 + DAY + 13 * HOUR, cost: 4_300, prompt: 4 },
      { account: a, key: k2, model: 'm1', at: d0 + 2 * DAY + 600_000, cost: 0, code: 'provider_timeout', prompt: 0 },
      { account: b, key: k3, model: 'm3', at: d0 + 3 * DAY + 9 * HOUR, cost: 5_400, prompt: 5 },
      { account: a, key: k1, model: 'm1', at: d0 + 3 * DAY + 22 * HOUR, cost: 6_500, prompt: 6 },
      { account: b, key: k3, model: 'm2', at: d0 + 5 * DAY + 3 * HOUR, cost: 7_600, prompt: 7 },
    ];
    for (const job of jobs) {
      const jobId = randomUUID();
      const held = await store.money.hold({
        jobId, accountId: job.account, keyId: job.key?.id ?? null, keyFamilyId: job.key?.familyId ?? null, kind: 'chat', model: job.model,
        amount: 10_000, at: job.at, instanceId: 'i1', clientAddress: null, countsTowardKeyLimits: true,
      });
      expect(held.ok).toBe(true);
      if (job.code === undefined) {
        // Cache reads and writes (every lifetime) are counted apart, from the job record's usage.
        const cached = { cache_read_tokens: 3 * job.prompt, cache_write_tokens: job.prompt, cache_write_1h_tokens: job.prompt % 2 };
        await store.money.settle(jobId, { cost: job.cost, usage: { prompt_tokens: 5 * job.prompt, completion_tokens: 1, ...cached }, status: 'succeeded', at: job.at + 1 });
      } else {
        await store.money.refund(jobId, { status: 'failed', errorCode: job.code, at: job.at + 1 });
      }
    }
    const expected = (from: number, to: number, size: number, filter: { accountId?: string; keyId?: string }) => {
      const start = Math.floor(from / HOUR) * HOUR;
      const end = Math.ceil(to / HOUR) * HOUR;
      const picked = jobs.filter((j) => j.at >= start && j.at < end && (filter.accountId === undefined || j.account === filter.accountId)
        && (filter.keyId === undefined || j.key?.id === filter.keyId));
      const sum = <K extends string | number>(by: (j: Job) => K | undefined) => {
        const m = new Map<K, { requests: number; credits: number; errors: number; prompt: number; completion: number; read: number; write: number; account: string }>();
        for (const j of picked) {
          const k = by(j);
          if (k === undefined) continue;
          const t = m.get(k) ?? { requests: 0, credits: 0, errors: 0, prompt: 0, completion: 0, read: 0, write: 0, account: j.account };
          m.set(k, { ...t, requests: t.requests + 1, credits: t.credits + j.cost, errors: t.errors + (j.code === undefined ? 0 : 1),
            prompt: t.prompt + 5 * j.prompt, completion: t.completion + (j.code === undefined ? 1 : 0), read: t.read + 3 * j.prompt, write: t.write + j.prompt + (j.prompt % 2) });
        }
        return [...m.entries()];
      };
      return {
        series: sum((j) => Math.floor(j.at / size) * size).sort(([x], [y]) => Number(x) - Number(y))
          .map(([t, s]) => ({ t, requests: s.requests, errors: s.errors, credits: s.credits, promptTokens: s.prompt, completionTokens: s.completion, cacheReadTokens: s.read, cacheWriteTokens: s.write })),
        errorsByCode: sum((j) => j.code).map(([code, s]) => ({ code, requests: s.requests })),
        topModels: sum((j) => j.model).map(([model, s]) => ({ model, requests: s.requests, credits: s.credits })),
        topKeys: sum((j) => j.key?.id).map(([keyId, s]) => ({ keyId, keyName: 'k', accountId: s.account, requests: s.requests, credits: s.credits })),
      };
    };
    const byName = <T>(rows: T[], name: (r: T) => string) => [...rows].sort((x, y) => name(x).localeCompare(name(y)));
    const cases: [number, number, 'hour' | 'day', { accountId?: string; keyId?: string }][] = [
      [d0 + 5 * HOUR, d0 + 3 * DAY + 10 * HOUR, 'day', {}],
      [d0 + 5 * HOUR + 1, d0 + 3 * DAY + 9 * HOUR + 1, 'day', {}],
      [d0, d0 + 4 * DAY, 'day', {}],
      [d0 + DAY, d0 + 6 * DAY, 'day', {}],
      [d0 + 2 * HOUR, d0 + 23 * HOUR, 'day', {}],
      [d0 + 3 * HOUR, d0 + DAY + 14 * HOUR, 'hour', {}],
      [d0 + 5 * HOUR, d0 + 3 * DAY + 10 * HOUR, 'day', { accountId: a }],
      [d0 + 5 * HOUR, d0 + 4 * DAY, 'hour', { accountId: b }],
      [d0 + 5 * HOUR, d0 + 3 * DAY + 10 * HOUR, 'day', { keyId: k1.id }],
      [d0, d0 + 6 * DAY, 'hour', { keyId: k3.id, accountId: b }],
    ];
    for (const [from, to, bucket, filter] of cases) {
      const report = await usage.usage({ from, to, bucket, ...filter });
      const want = expected(from, to, bucket === 'day' ? DAY : HOUR, filter);
      const label = JSON.stringify({ from: new Date(from), to: new Date(to), bucket, filter });
      expect(report.series, label).toEqual(want.series);
      expect(byName(report.errorsByCode, (r) => r.code), label).toEqual(byName(want.errorsByCode, (r) => r.code));
      expect(byName(report.topModels, (r) => r.model), label).toEqual(byName(want.topModels, (r) => r.model));
      expect(byName(report.topKeys, (r) => r.keyId), label).toEqual(byName(want.topKeys, (r) => r.keyId));
    }
  });
});

/**
 * The usage roller (usage-pending.ts) under load: closes from three processes (one on SQLite) while every process reads the
 * dashboard, which rolls up what is pending before it reads: each close counted exactly once, nothing left pending.
 */
describe.each(DIALECTS)('usage roller on $name', (dialect) => {
  const ctx = storesFor(dialect);

  it('closes and roll-ups from three processes at once: every close counted once', { timeout: 60_000 }, async () => {
    const { stores } = ctx;
    const owner = stores[0] as (typeof stores)[number];
    const accountId = await account(owner, { credits: 1e12 });
    const k = await key(owner, accountId);
    const at = Date.UTC(2022, 5, 1, 12);
    const jobIds = Array.from({ length: 90 }, () => randomUUID());
    for (const jobId of jobIds) expect((await hold(owner, accountId, 100_000, { key: k, at, jobId })).ok).toBe(true);
    const readers = stores.map((s) => s.usage);
    let closing = true;
    const reading = readers.map(async (reader) => {
      while (closing) {
        await reader?.usage({ from: at - HOUR, to: at + HOUR, bucket: 'hour', accountId });
        // On SQLite a read settles without any I/O: let the money path's turn come.
        await new Promise((resolve) => setImmediate(resolve));
      }
    });
    await Promise.all(jobIds.map((jobId, i) => {
      const store = stores[i % stores.length] as (typeof stores)[number];
      return i % 3 === 0
        ? store.money.refund(jobId, { status: 'failed', errorCode: 'upstream_error', at: at + 1 })
        : store.money.settle(jobId, { cost: 1_000 + i, usage: { prompt_tokens: i, completion_tokens: 1, cache_read_tokens: i, cache_write_1h_tokens: 1 }, status: 'succeeded', at: at + 1 });
    }));
    closing = false;
    await Promise.all(reading);
    const settled = jobIds.map((_, i) => i).filter((i) => i % 3 !== 0);
    for (const reader of readers) {
      const report = await reader?.usage({ from: at - HOUR, to: at + HOUR, bucket: 'hour', accountId });
      expect(report?.series).toEqual([{
        t: at, requests: 90, errors: 30, credits: settled.reduce((s, i) => s + 1_000 + i, 0),
        promptTokens: settled.reduce((s, i) => s + i, 0), completionTokens: settled.length,
        cacheReadTokens: settled.reduce((s, i) => s + i, 0), cacheWriteTokens: settled.length,
      }]);
      expect(report?.errorsByCode).toEqual([{ code: 'upstream_error', requests: 30 }]);
    }
  });
});
