/**
 * Dashboard benchmark: seeds 1,000,000 jobs (their ledger rows, and the rollups the ledger
 * trigger writes) into SQLite and PostgreSQL, then times every API answer the dashboard asks
 * for, through a real gateway. Each must answer under 200 ms (median of 7).
 *
 *   npm run bench:dashboard                  # both databases; results in bench/results/dashboard.json
 *   npm run bench:dashboard -- --jobs 100000 --db sqlite
 * PostgreSQL: TEST_POSTGRES_URL or postgres://postgres@127.0.0.1:5432/test, in a schema of its own.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createGateway } from '../src/gateway.ts';
import { openStore } from '../src/store/open-store.ts';
import { SEEDED, seedPostgres, seedSqlite, type Seeded } from './dashboard-seed.ts';

const TOKEN = 'bench-admin-token-0123456789';
const PG_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? undefined : process.argv[i + 1];
};
const JOBS = Number(arg('jobs') ?? 1_000_000);
const DATABASES = (arg('db') ?? 'sqlite,postgres').split(',');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const BUDGET_MS = 200;

interface Result { name: string; median_ms: number; max_ms: number; bytes: number; ok: boolean }

/** What the dashboard's pages ask for (dashboard/src/pages), plus the API's widest hourly chart. */
function paths(now: number, seeded: Seeded, cursor: string, jobId: string, statementBefore: number): [string, string][] {
  const iso = (ms: number) => new Date(ms).toISOString();
  // The overview asks for whole hours up to the next one (overview.tsx).
  const to = Math.ceil(now / HOUR) * HOUR;
  const usage = (days: number, bucket: string, account?: string) =>
    `/admin/v1/usage?from=${iso(to - days * DAY)}&to=${iso(to)}&bucket=${bucket}${account === undefined ? '' : `&account_id=${account}`}`;
  const date = (ms: number) => iso(ms).slice(0, 10);
  const { accountId, keyId } = seeded;
  return [
    ['sign-in check (accounts, limit 1)', '/admin/v1/accounts?limit=1'],
    ['overview, last 24 hours', usage(1, 'hour')],
    ['overview, last 7 days (hourly)', usage(7, 'hour')],
    ['overview, last 30 days (daily)', usage(30, 'day')],
    ['overview, chosen dates (20 days, daily)', `/admin/v1/usage?from=${date(now - 22 * DAY)}&to=${date(now - 2 * DAY)}&bucket=day`],
    ['overview, 17 days cut mid-day (API)', `/admin/v1/usage?from=${iso(now - 20 * DAY + 7 * HOUR)}&to=${iso(now - 3 * DAY - 5 * HOUR)}&bucket=day`],
    ['overview, last 30 days hourly (API)', usage(30, 'hour')],
    ['one account, last 24 hours', usage(1, 'hour', accountId)],
    ['one account, last 7 days (hourly)', usage(7, 'hour', accountId)],
    ['one account, last 30 days (daily)', usage(30, 'day', accountId)],
    ['one key, last 30 days (daily, API)', `/admin/v1/usage?from=${iso(to - 30 * DAY)}&to=${iso(to)}&bucket=day&key_id=${keyId}`],
    ['overview, last 24 hours, stacked by model', `${usage(1, 'hour')}&stack=model`],
    ['overview, last 7 days (hourly), stacked by model', `${usage(7, 'hour')}&stack=model`],
    ['overview, last 7 days (hourly), stacked by key', `${usage(7, 'hour')}&stack=key`],
    ['overview, last 30 days (daily), stacked by model', `${usage(30, 'day')}&stack=model`],
    ['overview, last 30 days (daily), stacked by key', `${usage(30, 'day')}&stack=key`],
    ['one account, last 7 days (hourly), stacked by model', `${usage(7, 'hour', accountId)}&stack=model`],
    ['one key, last 30 days (daily), stacked by model', `/admin/v1/usage?from=${iso(to - 30 * DAY)}&to=${iso(to)}&bucket=day&key_id=${keyId}&account_id=${accountId}&stack=model`],
    ['accounts, newest 50', '/admin/v1/accounts'],
    ['accounts, search', '/admin/v1/accounts?q=account%204'],
    ['account', `/admin/v1/accounts/${accountId}`],
    ['account keys', `/admin/v1/accounts/${accountId}/keys`],
    ['key usage (day, month)', `/admin/v1/keys/${keyId}/usage`],
    ['account ledger', `/admin/v1/accounts/${accountId}/ledger?limit=20`],
    ['account statement (running balance)', `/admin/v1/accounts/${accountId}/statement?limit=20`],
    ['account statement, an older page', `/admin/v1/accounts/${accountId}/statement?limit=20&before=${statementBefore}`],
    ['request detail (job, attempts, ledger rows)', `/admin/v1/jobs/${jobId}`],
    ['account notifications', `/admin/v1/accounts/${accountId}/notifications`],
    ['account jobs (newest 10)', `/admin/v1/jobs?account_id=${accountId}&limit=10`],
    ['request log, first page', '/admin/v1/jobs?limit=50'],
    ['request log, last hour', `/admin/v1/jobs?limit=50&from=${iso(now - HOUR)}`],
    ['request log, one account, chosen dates', `/admin/v1/jobs?limit=50&account_id=${accountId}&from=${date(now - 20 * DAY)}&to=${date(now - 10 * DAY)}`],
    ['request log, one key, last 24 hours', `/admin/v1/jobs?limit=50&key_id=${keyId}&from=${iso(now - DAY)}`],
    ['request log, next page (cursor)', `/admin/v1/jobs?limit=50&cursor=${cursor}`],
    ['request log, one account', `/admin/v1/jobs?limit=50&account_id=${accountId}`],
    ['request log, one key', `/admin/v1/jobs?limit=50&key_id=${keyId}`],
    ['request log, one model', '/admin/v1/jobs?limit=50&model=claude-test'],
    ['request log, one error code', '/admin/v1/jobs?limit=50&code=provider_timeout'],
    ['request log, failed', '/admin/v1/jobs?limit=50&status=failed'],
    ['request log, canceled (there are none)', '/admin/v1/jobs?limit=50&status=canceled'],
    ['request log, processing (there are none)', '/admin/v1/jobs?limit=50&status=processing'],
    ['request log, key + model + code', `/admin/v1/jobs?limit=50&key_id=${keyId}&model=gpt-test&code=upstream_error`],
    ['request log CSV, first 500 rows', '/admin/v1/jobs.csv'],
    ['request log CSV, one key and model (all rows)', `/admin/v1/jobs.csv?key_id=${keyId}&model=gpt-test`],
    ['request log CSV, one key, last 24 hours (all rows)', `/admin/v1/jobs.csv?key_id=${keyId}&from=${iso(now - DAY)}`],
    ['catalog', '/api/v1/models?include_unavailable=true&limit=500'],
  ];
}

async function timeAll(label: string, url: string, seeded: Seeded, now: number): Promise<Result[]> {
  const gateway = await createGateway(loadConfig({ DATABASE_URL: url, ADMIN_TOKEN: TOKEN, LOG_LEVEL: 'silent', PORT: '0', HOST: '127.0.0.1' }));
  await gateway.app.listen({ port: 0, host: '127.0.0.1' });
  const address = gateway.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const base = `http://127.0.0.1:${address.port}`;
  /** The answer's bytes; for a CSV's "first 500 rows", up to its 501st line, then the connection is dropped. */
  const get = async (path: string, firstLines?: number): Promise<number> => {
    // The catalog page reads the public model list without the admin token (catalog.tsx).
    const headers: Record<string, string> = path.startsWith('/admin/') ? { authorization: `Bearer ${TOKEN}` } : {};
    const abort = new AbortController();
    const response = await fetch(base + path, { headers, signal: abort.signal });
    if (response.status !== 200) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    if (firstLines === undefined || response.body === null) return (await response.text()).length;
    let text = '';
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    while (text.split('\n').length <= firstLines) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += chunk.value;
    }
    abort.abort();
    return text.length;
  };
  const first = await fetch(`${base}/admin/v1/jobs?limit=50`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const firstPage = (await first.json()) as { next_cursor: string; data: { id: string }[] };
  const cursor = firstPage.next_cursor;
  // A request of the middle of the log, and a statement page about halfway down the account's ledger.
  const middle = await fetch(`${base}/admin/v1/jobs?limit=1&to=${new Date(now - 15 * DAY).toISOString()}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const jobId = ((await middle.json()) as { data: { id: string }[] }).data[0]?.id ?? firstPage.data[0]?.id ?? '';
  // The statement's page about 2,500 movements down (or the last one of a small account).
  let statementBefore = 0;
  for (let page = 0; page < 5; page++) {
    const r = await fetch(`${base}/admin/v1/accounts/${seeded.accountId}/statement?limit=500${statementBefore === 0 ? '' : `&before=${statementBefore}`}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const body = (await r.json()) as { data: { id: number }[]; next_before: number | null };
    statementBefore = body.next_before ?? body.data.at(-1)?.id ?? statementBefore;
    if (body.next_before === null) break;
  }
  const results: Result[] = [];
  // Other work on the machine inflates every time: the load average says how much there was.
  console.log(`\n${label}, ${JOBS.toLocaleString('en-US')} jobs (load average ${loadavg()[0]?.toFixed(1)})`);
  for (const [name, path] of paths(now, seeded, cursor, jobId, statementBefore)) {
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < 7; i++) {
      const t = performance.now();
      bytes = await get(path, name.includes('first 500') ? 501 : undefined);
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    const median = times[3] ?? 0;
    const max = times.at(-1) ?? 0;
    results.push({ name, median_ms: Math.round(median * 10) / 10, max_ms: Math.round(max * 10) / 10, bytes, ok: median < BUDGET_MS });
    console.log(`${median < BUDGET_MS ? 'ok  ' : 'SLOW'} ${name.padEnd(46)} median ${median.toFixed(1).padStart(7)} ms  max ${max.toFixed(1).padStart(7)} ms  ${bytes} bytes`);
  }
  await gateway.close();
  return results;
}

async function onSqlite(now: number): Promise<Result[]> {
  // --reuse FILE: time a database seeded by an earlier run with the same option (kept, not seeded again).
  const reuse = arg('reuse');
  const dir = mkdtempSync(join(tmpdir(), 'gw-dash-bench-'));
  const file = reuse ?? join(dir, 'gateway.db');
  try {
    const seed = reuse === undefined || !existsSync(reuse);
    await (await openStore(`sqlite:${file}`)).close();
    const seeded = seed ? seedSqlite(file, JOBS, now) : SEEDED;
    return await timeAll('SQLite', `sqlite:${file}`, seeded, now);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function onPostgres(now: number): Promise<Result[]> {
  const schema = `bench_dash_${randomUUID().replace(/-/g, '')}`;
  const url = `${PG_URL}?schema=${schema}`;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`create schema ${schema}`);
    await (await openStore(url)).close();
    await client.query(`set search_path = ${schema}`);
    const seeded = await seedPostgres(client, JOBS, now);
    return await timeAll('PostgreSQL', url, seeded, now);
  } finally {
    await client.query(`drop schema ${schema} cascade`);
    await client.end();
  }
}

const now = Date.now();
const results: Record<string, Result[]> = {};
if (DATABASES.includes('sqlite')) results['sqlite'] = await onSqlite(now);
if (DATABASES.includes('postgres')) results['postgres'] = await onPostgres(now);
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(new URL('./results/dashboard.json', import.meta.url), JSON.stringify({ jobs: JOBS, budget_ms: BUDGET_MS, load_average: loadavg()[0], results }, null, 2) + '\n');
if (Object.values(results).some((r) => r.some((x) => !x.ok))) process.exitCode = 1;
