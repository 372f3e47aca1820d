/**
 * The dashboard's queries and the indexes that serve them: seeds a database as bench:dashboard
 * does (default 50,000 jobs), runs every dashboard read of the store with its statements
 * captured, and prints each statement's plan on SQLite (EXPLAIN QUERY PLAN) and PostgreSQL
 * (EXPLAIN, costs off) as markdown. docs/dashboard-queries.md keeps its output.
 *
 *   npx tsx bench/dashboard-explain.ts [--jobs 50000] [--db sqlite,postgres]
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { type CompiledQuery, Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { startOfUtcMonth } from '../src/shared/time.ts';
import { openStore } from '../src/store/open-store.ts';
import type { Database } from '../src/store/sql/tables.ts';
import { SqlUsageStore } from '../src/store/sql/usage-rollups.ts';
import { SEEDED, seedPostgres, seedSqlite } from './dashboard-seed.ts';

const PG_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? undefined : process.argv[i + 1];
};
const JOBS = Number(arg('jobs') ?? 50_000);
const DATABASES = (arg('db') ?? 'sqlite,postgres').split(',');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Every read the dashboard's pages make of the usage store, by the name docs/dashboard-queries.md gives it. */
async function reads(usage: SqlUsageStore, now: number, jobId: string): Promise<[string, () => Promise<unknown>][]> {
  const to = Math.ceil(now / HOUR) * HOUR;
  const { accountId, keyId } = SEEDED;
  return [
    ['overview, 24 hours (hourly)', () => usage.usage({ from: to - DAY, to, bucket: 'hour' })],
    ['overview, 30 days (daily)', () => usage.usage({ from: to - 30 * DAY, to, bucket: 'day' })],
    ['overview of one key, 30 days', () => usage.usage({ from: to - 30 * DAY, to, bucket: 'day', keyId })],
    ['stacked by model, 7 days (hourly)', () => usage.usageStacks({ from: to - 7 * DAY, to, bucket: 'hour' }, 'model', ['gpt-test', 'claude-test'])],
    ['stacked by key, 30 days (daily)', () => usage.usageStacks({ from: to - 30 * DAY, to, bucket: 'day' }, 'key', [keyId, `${accountId}-key-0`])],
    ['request log, newest', () => usage.jobLog({ limit: 51 })],
    ['request log, one account, a time range', () => usage.jobLog({ accountId, from: now - 20 * DAY, to: now - 10 * DAY, limit: 51 })],
    ['request log, one key, last 24 hours', () => usage.jobLog({ keyId, from: now - DAY, limit: 51 })],
    ['request log, one model', () => usage.jobLog({ model: 'claude-test', limit: 51 })],
    ['request log, one error code', () => usage.jobLog({ code: 'provider_timeout', limit: 51 })],
    ['request log, failed', () => usage.jobLog({ status: 'failed', limit: 51 })],
    ['request detail', () => usage.job(jobId)],
    ['statement', () => usage.statement(accountId, 0, 20)],
    ['statement, an older page', () => usage.statement(accountId, 0, 20, 1000)],
    ['accounts with month spend and last activity', () => usage.searchAccounts('', 50, startOfUtcMonth(now))],
    ["keys' last use", () => usage.lastUsed([keyId, `${accountId}-key-0`])],
  ];
}

interface Plan { name: string; statements: { sql: string; plan: string }[] }

async function explainAll(db: Kysely<Database>, captured: CompiledQuery[], explain: (q: CompiledQuery) => Promise<string>, now: number): Promise<Plan[]> {
  const usage = new SqlUsageStore(db);
  const job = (await usage.jobLog({ before: { createdAt: now - 15 * DAY, id: '~' }, limit: 1 }))[0]?.id ?? '';
  const plans: Plan[] = [];
  for (const [name, read] of await reads(usage, now, job)) {
    captured.length = 0;
    await read();
    const statements = [];
    for (const q of [...captured]) statements.push({ sql: q.sql.replace(/\s+/g, ' ').trim(), plan: await explain(q) });
    plans.push({ name, statements });
  }
  return plans;
}

function print(label: string, plans: Plan[]): void {
  console.log(`\n## ${label} (${JOBS.toLocaleString('en-US')} jobs)\n`);
  for (const p of plans) {
    console.log(`### ${p.name}\n`);
    for (const s of p.statements) console.log('```sql\n' + s.sql + '\n```\n```\n' + s.plan + '\n```\n');
  }
}

async function onSqlite(now: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-dash-explain-'));
  const file = join(dir, 'gateway.db');
  try {
    await (await openStore(`sqlite:${file}`)).close();
    seedSqlite(file, JOBS, now);
    const database = new BetterSqlite3(file);
    const captured: CompiledQuery[] = [];
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }), log: (e) => void captured.push(e.query) });
    const explain = async (q: CompiledQuery) =>
      (database.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...(q.parameters as unknown[])) as { detail: string }[]).map((r) => r.detail).join('\n');
    print('SQLite', await explainAll(db, captured, explain, now));
    await db.destroy();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function onPostgres(now: number): Promise<void> {
  const schema = `bench_explain_${randomUUID().replace(/-/g, '')}`;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`create schema ${schema}`);
    await (await openStore(`${PG_URL}?schema=${schema}`)).close();
    await client.query(`set search_path = ${schema}`);
    await seedPostgres(client, JOBS, now);
    const captured: CompiledQuery[] = [];
    const pool = new pg.Pool({ connectionString: PG_URL, options: `-c search_path=${schema}` });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: (e) => void captured.push(e.query) });
    const explain = async (q: CompiledQuery) =>
      (await client.query(`EXPLAIN (COSTS OFF) ${q.sql}`, q.parameters as unknown[])).rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
    print('PostgreSQL', await explainAll(db, captured, explain, now));
    await db.destroy();
  } finally {
    await client.query(`drop schema ${schema} cascade`);
    await client.end();
  }
}

const now = Date.now();
if (DATABASES.includes('sqlite')) await onSqlite(now);
if (DATABASES.includes('postgres')) await onPostgres(now);
