/**
 * Forward migrations: a database made by the first release (migrations 001 and 002),
 * with an open hold and finished jobs in it, opens with today's store and keeps every
 * balance, hold, job and ledger row, on SQLite and PostgreSQL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startOfUtcDay } from '../src/shared/time.ts';
import { openStore } from '../src/store/open-store.ts';
import { migrationProvider } from '../src/store/sql/migrations/index.ts';
import type { Store } from '../src/store/types.ts';
import { createV1Database } from './fixtures/store-v1.ts';
import { account, hold, ledgerMoney, postgresSchema } from './helpers/stores.ts';

const DAY = 86_400_000;
const now = Date.now();
const today = startOfUtcDay(now);

/** Rows as the first release wrote them. */
async function fillV1(db: Kysely<unknown>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  const exec = (text: string, ...values: unknown[]) => {
    let n = 0;
    return db.executeQuery(CompiledQuery.raw(dialect === 'sqlite' ? text : text.replace(/\?/g, () => `$${++n}`), values));
  };
  const account = `insert into accounts (id, name, email, created_at, has_purchase, billing_emails, monthly_spending_limit, balance, held) values (?, ?, ?, ?, ?, 1, ?, ?, ?)`;
  await exec(account, 'acc-a', 'Payer', 'a@example.test', now - 30 * DAY, 1, 3_000_000, 9_650_000, 2_000_000);
  await exec(account, 'acc-b', 'Trial', null, now - 3 * DAY, 0, null, 5_000_000 - 10, 0);
  const apiKey = `insert into api_keys (id, account_id, family_id, hash, prefix, name, scopes, requests_per_minute, ip_allowlist, daily_limit,
    monthly_limit, expires_at, warning_threshold, email_alerts, created_at, revoked_at) values (?, 'acc-a', 'key-1', ?, 'svc_live_ab', 'k', 'chat', 600, '[]', 2500000, null, null, 0.8, 0, ?, ?)`;
  await exec(apiKey, 'key-1', 'hash-1', now - 10 * DAY, now - DAY);
  await exec(apiKey, 'key-2', 'hash-2', now - DAY, null);
  const job = `insert into jobs (id, account_id, key_id, key_family_id, kind, model, status, held, cost, prompt_tokens, completion_tokens, error_code,
    instance_id, created_at, finished_at) values (?, ?, ?, ?, 'chat', 'gpt-test', ?, ?, ?, ?, ?, ?, 'old-proc', ?, ?)`;
  await exec(job, 'j-settled', 'acc-a', 'key-1', 'key-1', 'succeeded', 1_000_000, 250_000, 100, 50, null, today, today + 10);
  await exec(job, 'j-open', 'acc-a', 'key-2', 'key-1', 'running', 2_000_000, null, null, null, null, today + 1, null);
  await exec(job, 'j-closed', 'acc-a', 'key-2', 'key-1', 'client_closed', 500_000, 100_000, 20, 7, null, today + 2, today + 12);
  await exec(job, 'j-failed', 'acc-a', 'key-2', 'key-1', 'failed', 300_000, null, null, null, 'upstream_error', today + 3, today + 13);
  await exec(job, 'j-aborted', 'acc-a', 'key-2', 'key-1', 'failed', 300_000, null, null, null, 'client_closed_request', today + 4, today + 14);
  await exec(job, 'b-1', 'acc-b', null, null, 'succeeded', 1_000, 10, 1, 1, null, now - 3000, now - 2900);
  await exec(job, 'b-2', 'acc-b', null, null, 'failed', 1_000, null, null, null, 'upstream_error', now - 2000, now - 1900);
  await exec(job, 'b-3', 'acc-b', null, null, 'failed', 1_000, null, null, null, 'provider_timeout', now - 1000, now - 900);
  const ledger = 'insert into ledger (account_id, key_id, key_family_id, job_id, kind, amount, created_at) values (?, ?, ?, ?, ?, ?, ?)';
  await exec(ledger, 'acc-a', null, null, null, 'topup', 10_000_000, now - 20 * DAY);
  for (const [id, held, end, amount] of [['j-settled', 1_000_000, 'settle', 250_000], ['j-open', 2_000_000, null, 0], ['j-closed', 500_000, 'settle', 100_000],
    ['j-failed', 300_000, 'refund', 300_000], ['j-aborted', 300_000, 'refund', 300_000]] as const) {
    await exec(ledger, 'acc-a', 'key-2', 'key-1', id, 'hold', held, today);
    if (end !== null) await exec(ledger, 'acc-a', 'key-2', 'key-1', id, end, amount, today + 20);
  }
  await exec(ledger, 'acc-b', null, null, null, 'grant', 5_000_000, now - 3 * DAY);
  await exec(ledger, 'acc-b', null, null, 'b-1', 'settle', 10, now - 2900);
  // The process that holds j-open, as the first release registered it (a heartbeat, no lease).
  await exec('insert into gateway_instances (id, host, pid, heartbeat_at) values (?, ?, ?, ?)', 'old-proc', 'old-host', 4242, now);
}

async function checkCarried(store: Store): Promise<void> {
  expect(await store.accounts.getAccount('acc-a')).toMatchObject({ balance: 9_650_000, held: 2_000_000, monthlySpendingLimit: 3_000_000, hasPurchase: true });
  expect(await store.jobs.getJob('j-open')).toMatchObject({ status: 'processing', held: 2_000_000, cost: null, usage: null });
  expect(await store.jobs.getJob('j-settled')).toMatchObject({ status: 'succeeded', cost: 250_000, usage: { prompt_tokens: 100, completion_tokens: 50 } });
  expect(await store.jobs.getJob('j-closed')).toMatchObject({ status: 'canceled', cost: 100_000, usage: { prompt_tokens: 20, completion_tokens: 7 }, errorCode: null });
  expect(await store.jobs.getJob('j-failed')).toMatchObject({ status: 'failed', cost: 0, errorCode: 'upstream_error' });
  expect(await store.jobs.getJob('j-aborted')).toMatchObject({ status: 'canceled', cost: 0, errorCode: 'client_closed_request' });
  expect((await store.accounts.listLedger('acc-a', 100)).map((e) => e.kind).sort()).toEqual(['hold', 'hold', 'hold', 'hold', 'hold', 'refund', 'refund', 'settle', 'settle', 'topup']);
  expect(await store.accounts.accountSpentSince('acc-a', today)).toBe(350_000);
  // The dashboard's totals, rolled up from the carried ledger: the account's day, and one key's.
  const usage = store.usage;
  const overview = await usage?.usage({ from: today, to: today + DAY, bucket: 'day', accountId: 'acc-a' });
  expect(overview?.series).toEqual([{ t: today, requests: 4, errors: 2, credits: 350_000, promptTokens: 120, completionTokens: 57, cacheReadTokens: 0, cacheWriteTokens: 0 }]);
  expect(overview?.errorsByCode.map((c) => c.code).sort()).toEqual(['client_closed_request', 'upstream_error']);
  expect(overview?.topModels).toEqual([{ model: 'gpt-test', requests: 4, credits: 350_000 }]);
  expect((await usage?.usage({ from: today, to: today + DAY, bucket: 'day', keyId: 'key-2' }))?.topKeys)
    .toEqual([{ keyId: 'key-2', keyName: 'k', accountId: 'acc-a', requests: 3, credits: 100_000 }]);

  // Key usage per family, from the carried jobs: settled at cost, the open hold at its amount, refunds at 0.
  expect(await store.keys.keyFamilyUsage('key-1', now)).toEqual({ day: 2_350_000, month: 2_350_000 });
  // The key limit (2.5 credits a day) and the spending limit (3 credits a month) see the carried usage.
  const key = await store.keys.getKey('key-2');
  expect(key?.familyId).toBe('key-1');
  expect(await hold(store, 'acc-a', 150_001, { key, at: now })).toEqual({ ok: false, reason: 'key_limit', period: 'daily', limit: 2_500_000, used: 2_350_000 });
  expect(await hold(store, 'acc-a', 650_001, { at: now })).toEqual({ ok: false, reason: 'spending_limit', limit: 3_000_000, spent: 2_350_000 });

  // The open hold of the old process is still refunded by crash recovery: its heartbeat counts as a lease of that
  // release's 30 s (a rolling upgrade), so not while it lives, and once, after.
  expect(await store.instances.runningJobOwners()).toEqual(['old-proc']);
  expect(await store.instances.listInstances()).toEqual([{ id: 'old-proc', host: 'old-host', pid: 4242, pidScope: null, leaseUntil: now + 30_000 }]);
  expect(await store.instances.refundJobsOf(['old-proc'], now, now + 29_999)).toBe(0);
  expect(await store.instances.refundJobsOf(['old-proc'], now, now + 30_000)).toBe(1);
  expect(await store.instances.refundJobsOf(['old-proc'], now, now + 30_000)).toBe(0);
  expect(await store.accounts.getAccount('acc-a')).toMatchObject({ balance: 9_650_000, held: 0 });
  expect(await store.keys.keyFamilyUsage('key-1', now)).toEqual({ day: 350_000, month: 350_000 });
  expect((await hold(store, 'acc-a', 150_000, { key, at: now })).ok).toBe(true);

  // The trial account carries its two failures in a row: one more, and the next run is refused.
  const failing = 'b-4';
  expect((await hold(store, 'acc-b', 1_000, { jobId: failing, at: now })).ok).toBe(true);
  await store.money.refund(failing, { status: 'failed', errorCode: 'upstream_error', at: now });
  expect(await hold(store, 'acc-b', 1_000, { at: now })).toEqual({ ok: false, reason: 'trial', rule: 'failures_in_a_row' });

  // Migration 006: the upgraded store keeps voice-sample bytes, and deletes them once expired.
  const uploads = store.uploads;
  const bytes = Buffer.from([0x52, 0x49, 0x46, 0x46, 0x00, 0xff, 0x10]);
  await uploads.create({ id: 'u-1', secret: 's', accountId: 'acc-a', keyId: 'key-2', contentType: 'audio/wav', bytes, durationSeconds: 1.5, createdAt: now, expiresAt: now + 1000 });
  expect(await uploads.get('u-1')).toMatchObject({ accountId: 'acc-a', contentType: 'audio/wav', durationSeconds: 1.5, expiresAt: now + 1000 });
  expect((await uploads.get('u-1'))?.bytes.equals(bytes)).toBe(true);
  expect(await uploads.deleteExpired(now + 1000)).toBe(1);
  expect(await uploads.get('u-1')).toBeUndefined();
}

describe('upgrading a first-release database in place', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  it('SQLite: balances, the open hold, jobs (running → processing, tokens → usage) and the ledger are carried', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-upgrade-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'gateway.db');
    const old = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new BetterSqlite3(file) }) });
    await createV1Database(old, 'sqlite');
    await fillV1(old, 'sqlite');
    await old.destroy();
    const store = await openStore(`sqlite:${file}`);
    try {
      await checkCarried(store);
    } finally {
      await store.close();
    }
  });

  it('PostgreSQL: the same', async () => {
    const schema = await postgresSchema();
    cleanups.push(schema.drop);
    const name = /\?schema=(\w+)/.exec(schema.url)?.[1] as string;
    const pool = new pg.Pool({ connectionString: schema.url.replace(/\?schema=\w+/, ''), options: `-c search_path=${name}` });
    const old = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
    await createV1Database(old, 'postgres', name);
    await fillV1(old, 'postgres');
    await old.destroy();
    const store = await openStore(schema.url);
    try {
      await checkCarried(store);
    } finally {
      await store.close();
    }
  });

  it('PostgreSQL: a fresh schema migrates while another schema of the same database already has the tables', async () => {
    const first = await postgresSchema();
    const second = await postgresSchema();
    cleanups.push(first.drop, second.drop);
    const a = await openStore(first.url);
    try {
      const b = await openStore(second.url);
      expect(await b.accounts.getAccount('none')).toBeUndefined();
      await b.close();
    } finally {
      await a.close();
    }
  });
});

/** The migrations of main as of 2026-11-22: every later one must sort after them, or Kysely refuses to migrate. */
const EARLIER_MAIN = new Set(['001_foundation', '002_jobs', '003_money_limits', '004_media_jobs', '090_dashboard_usage']);

async function migrateAsEarlierMain(db: Kysely<unknown>, dialect: 'sqlite' | 'postgres', schema?: string, ran: (name: string) => boolean = (name) => EARLIER_MAIN.has(name)): Promise<void> {
  const all = migrationProvider(dialect);
  const provider = { getMigrations: async () => Object.fromEntries(Object.entries(await all.getMigrations()).filter(([name]) => ran(name))) };
  const { error } = await new Migrator({ db, provider, ...(schema === undefined ? {} : { migrationTableSchema: schema }) }).migrateToLatest();
  if (error !== undefined) throw error;
}

async function checkUsable(store: Store): Promise<void> {
  const id = await account(store, { credits: 5_000_000 });
  const held = await hold(store, id, 1_000_000, { jobId: 'after-upgrade' });
  expect(held.ok).toBe(true);
  await store.money.settle('after-upgrade', { cost: 400_000, usage: { prompt_tokens: 10, completion_tokens: 5 }, status: 'succeeded', at: Date.now() });
  expect(await store.accounts.getAccount(id)).toMatchObject({ balance: 4_600_000, held: 0 });
  expect(await ledgerMoney(store, id)).toEqual({ balance: 4_600_000, held: 0 });
  // The dashboard counts the settlement once: migration 095 dropped the ledger trigger that rolled it up before the roller.
  const usage = store.usage;
  if (usage === undefined) throw new Error('not a SQL store');
  const report = await usage.usage({ from: Date.now() - 3_600_000, to: Date.now() + 3_600_000, bucket: 'hour', accountId: id });
  expect(report.series).toHaveLength(1);
  expect(report.series[0]).toMatchObject({ requests: 1, errors: 0, credits: 400_000, promptTokens: 10, completionTokens: 5 });
}

/**
 * A database migrated as an earlier main did (`ran`: the migrations it had), filled as that release wrote it,
 * then opened with today's store (every newer migration runs) and checked.
 */
async function upgradeInPlace<T>(dialect: 'sqlite' | 'postgres', ran: (name: string) => boolean, fill: (db: Kysely<unknown>) => Promise<T>, check: (store: Store, filled: T) => Promise<void>): Promise<void> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'gw-upgrade-main-'));
    const file = join(dir, 'gateway.db');
    try {
      const old = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new BetterSqlite3(file) }) });
      await migrateAsEarlierMain(old, 'sqlite', undefined, ran);
      const filled = await fill(old);
      await old.destroy();
      const store = await openStore(`sqlite:${file}`);
      try {
        await check(store, filled);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return;
  }
  const schema = await postgresSchema();
  try {
    const name = /\?schema=(\w+)/.exec(schema.url)?.[1] as string;
    const pool = new pg.Pool({ connectionString: schema.url.replace(/\?schema=\w+/, ''), options: `-c search_path=${name}` });
    const old = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
    await migrateAsEarlierMain(old, 'postgres', name, ran);
    const filled = await fill(old);
    await old.destroy();
    const store = await openStore(schema.url);
    try {
      await check(store, filled);
    } finally {
      await store.close();
    }
  } finally {
    await schema.drop();
  }
}

describe('upgrading a database of main as of 2026-11-22 (migrations through 090) in place', () => {
  const through090 = (name: string) => EARLIER_MAIN.has(name);
  it('SQLite: every newer migration runs after 090 and the store works', async () => {
    await upgradeInPlace('sqlite', through090, async () => undefined, checkUsable);
  });

  it('PostgreSQL: the same', async () => {
    await upgradeInPlace('postgres', through090, async () => undefined, checkUsable);
  });
});

/** The migrations of main as of 2026-11-26, before the cache token columns (096). */
const THROUGH_095 = (name: string) => name < '096';

/**
 * A database of main as of 2026-11-26: an hour already rolled up and a closed job still pending for the
 * roller, both from runs that reported no cache counts (written as that release wrote them).
 */
async function fillThrough095(db: Kysely<unknown>, dialect: 'sqlite' | 'postgres'): Promise<{ hour: number }> {
  const exec = (text: string, ...values: unknown[]) => {
    let n = 0;
    return db.executeQuery(CompiledQuery.raw(dialect === 'sqlite' ? text : text.replace(/\?/g, () => `$${++n}`), values));
  };
  const hour = Math.floor(now / 3_600_000) * 3_600_000 - 2 * 3_600_000;
  await exec('insert into accounts (id, name, created_at, has_purchase, billing_emails, balance, held) values (?, ?, ?, 1, 1, 0, 0)', 'acc-c', 'Cached', now - DAY);
  for (const [table, bucket] of [['usage_rollups', hour], ['usage_key_hours', hour], ['usage_key_days', startOfUtcDay(hour)]] as const) {
    const model = table === 'usage_rollups' ? ', model, code' : '';
    const modelValues = table === 'usage_rollups' ? ", 'gpt-test', ''" : '';
    const errors = table === 'usage_rollups' ? '' : ', errors';
    await exec(`insert into ${table} (${table === 'usage_key_days' ? 'day' : 'hour'}, account_id, key_id${model}, requests${errors}, credits, prompt_tokens, completion_tokens)
      values (?, 'acc-c', ''${modelValues}, 2${errors === '' ? '' : ', 0'}, 300000, 2000, 40)`, bucket);
  }
  await exec(`insert into jobs (id, account_id, kind, model, status, held, cost, usage, instance_id, created_at, finished_at)
    values ('j-pending', 'acc-c', 'chat', 'gpt-test', 'succeeded', 500000, 100000, '{"prompt_tokens":700,"completion_tokens":9}', 'old-proc', ?, ?)`, hour + 60_000, hour + 61_000);
  await exec(`insert into usage_pending (job_id, kind, amount) values ('j-pending', 'settle', 100000)`);
  return { hour };
}

async function checkCacheColumns(store: Store, hour: number): Promise<void> {
  const usage = store.usage;
  if (usage === undefined) throw new Error('not a SQL store');
  // What was rolled up and what was pending carry over, with no cache counts.
  const before = await usage.usage({ from: hour, to: hour + 3_600_000, bucket: 'hour', accountId: 'acc-c' });
  expect(before.series).toEqual([{ t: hour, requests: 3, errors: 0, credits: 400_000, promptTokens: 2_700, completionTokens: 49, cacheReadTokens: 0, cacheWriteTokens: 0 }]);
  // A run of this release counts its cache reads and its writes of both lifetimes, in the hourly and daily totals.
  const at = hour + 120_000;
  const fresh = await account(store, { credits: 10_000_000 });
  expect((await hold(store, fresh, 1_000_000, { jobId: 'j-cached', at })).ok).toBe(true);
  const cached = { prompt_tokens: 5_000, completion_tokens: 10, cache_read_tokens: 3_000, cache_write_tokens: 1_200, cache_write_1h_tokens: 300 };
  await store.money.settle('j-cached', { cost: 200_000, usage: cached, status: 'succeeded', at: at + 1 });
  const want = { requests: 4, errors: 0, credits: 600_000, promptTokens: 7_700, completionTokens: 59, cacheReadTokens: 3_000, cacheWriteTokens: 1_500 };
  expect((await usage.usage({ from: hour, to: hour + 3_600_000, bucket: 'hour' })).series).toEqual([{ t: hour, ...want }]);
  const day = startOfUtcDay(hour);
  expect((await usage.usage({ from: day, to: day + DAY, bucket: 'day' })).series).toEqual([{ t: day, ...want }]);
  expect((await usage.jobLog({ limit: 10 })).map((r) => [r.id, r.cacheReadTokens, r.cacheWriteTokens])).toEqual([['j-cached', 3_000, 1_500], ['j-pending', null, null]]);
}

describe('upgrading a database of main as of 2026-11-26 (migrations through 095) in place: the cache token columns (096)', () => {
  it('SQLite: rolled-up and pending usage carry over; cache reads and writes are counted from then on', async () => {
    await upgradeInPlace('sqlite', THROUGH_095, (db) => fillThrough095(db, 'sqlite'), (store, { hour }) => checkCacheColumns(store, hour));
  });

  it('PostgreSQL: the same', async () => {
    await upgradeInPlace('postgres', THROUGH_095, (db) => fillThrough095(db, 'postgres'), (store, { hour }) => checkCacheColumns(store, hour));
  });
});

/** The migrations of main before routing (through 095). */
const BEFORE_ROUTING = new Set([...EARLIER_MAIN, '091_fine_tuning_jobs', '092_instance_leases', '093_audio_uploads', '094_dashboard_usage_totals', '095_usage_pending']);

async function migrateBeforeRouting(db: Kysely<unknown>, dialect: 'sqlite' | 'postgres', schema?: string): Promise<void> {
  const all = migrationProvider(dialect);
  const provider = { getMigrations: async () => Object.fromEntries(Object.entries(await all.getMigrations()).filter(([name]) => BEFORE_ROUTING.has(name))) };
  const { error } = await new Migrator({ db, provider, ...(schema === undefined ? {} : { migrationTableSchema: schema }) }).migrateToLatest();
  if (error !== undefined) throw error;
}

/** A job closed before migration 115 (written in that schema) keeps no attempts; one closed after keeps them, and the model that answered. */
async function closedBefore(db: Kysely<unknown>): Promise<void> {
  const now = Date.now();
  await db.executeQuery(CompiledQuery.raw(`insert into accounts (id, name, email, created_at, has_purchase, billing_emails, monthly_spending_limit, balance, held)
    values ('acc-old', 'Old', null, ${now - 1000}, 1, 1, null, 9500, 0)`));
  await db.executeQuery(CompiledQuery.raw(`insert into jobs (id, account_id, key_id, key_family_id, kind, model, status, held, cost, usage, instance_id, counts_key, created_at, finished_at)
    values ('closed-before', 'acc-old', null, null, 'chat', 'gpt-test', 'succeeded', 1000, 500, '{"prompt_tokens":1,"completion_tokens":1}', 'old-proc', 1, ${now - 10}, ${now})`));
}

async function checkAttempts(store: Store): Promise<void> {
  const id = await account(store, { credits: 5_000_000 });
  try {
    expect(await store.jobs.getJob('closed-before')).toMatchObject({ model: 'gpt-test', cost: 500, attempts: null });
    expect((await hold(store, id, 1_000_000, { jobId: 'closed-after' })).ok).toBe(true);
    const attempts = [
      { model: 'gpt-test', provider: 'provider_1', deployment: 'gpt-test-id', key: 1, status: 500, code: 'upstream_error', retry: 'fallback', ms: 12 },
      { model: 'claude-test', provider: 'provider_2', deployment: 'claude-test-id', key: 0, status: 200, ms: 40 },
    ];
    await store.money.settle('closed-after', { cost: 200_000, usage: { prompt_tokens: 2, completion_tokens: 2 }, status: 'succeeded', at: Date.now(), route: { model: 'claude-test', attempts } });
    expect(await store.jobs.getJob('closed-after')).toMatchObject({ model: 'claude-test', attempts, cost: 200_000 });
    expect(await store.accounts.getAccount(id)).toMatchObject({ balance: 4_800_000, held: 0 });
    expect(await ledgerMoney(store, id)).toEqual({ balance: 4_800_000, held: 0 });
  } finally {
    await store.close();
  }
}

describe('upgrading a database of main before routing (migrations through 095) in place: 115 adds the jobs\' attempts', () => {
  it('SQLite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-upgrade-095-'));
    const file = join(dir, 'gateway.db');
    try {
      const old = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new BetterSqlite3(file) }) });
      await migrateBeforeRouting(old, 'sqlite');
      await closedBefore(old);
      await old.destroy();
      await checkAttempts(await openStore(`sqlite:${file}`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('PostgreSQL', async () => {
    const schema = await postgresSchema();
    try {
      const name = /\?schema=(\w+)/.exec(schema.url)?.[1] as string;
      const pool = new pg.Pool({ connectionString: schema.url.replace(/\?schema=\w+/, ''), options: `-c search_path=${name}` });
      const old = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
      await migrateBeforeRouting(old, 'postgres', name);
      await closedBefore(old);
      await old.destroy();
      await checkAttempts(await openStore(schema.url));
    } finally {
      await schema.drop();
    }
  });
});
