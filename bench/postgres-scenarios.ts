/**
 * The non-stream scenario on PostgreSQL (issues 14 and 20), called by bench/run.ts after
 * its own scenarios. Three set-ups, each a fresh store: one gateway process on SQLite
 * (the reference, measured here again so that the ratios come from neighbouring runs),
 * one gateway process on PostgreSQL, and two gateway processes on PostgreSQL + Redis.
 * Two load shapes: one account with 20 keys (a team: every request locks the same
 * account row) and 10 accounts with 20 keys each. The set-ups are interleaved per shape.
 *
 * Two processes behind one load generator: two autocannon instances in this process,
 * run at the same time, half the connections each, one per gateway process. Requests
 * per second are summed; p50 is the mean of the two p50s weighted by requests, p99 the
 * larger of the two (autocannon reports percentiles, not histograms, so the exact merged
 * percentiles are not available).
 *
 * Each run creates its own PostgreSQL database and Redis key prefix and removes both
 * afterwards. PostgreSQL: BENCH_POSTGRES_URL (default the test server's `test` database,
 * whose server the new database is created on); Redis: BENCH_REDIS_URL.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { onServer as onTestServer } from '../test/helpers/postgres.ts';
import { dropRedisPrefix as dropTestRedisPrefix } from '../test/helpers/redis.ts';
import { checkLedger, createBenchAccounts, type BenchKeys, type LedgerCheck } from './accounts.ts';

const PG_URL = process.env.BENCH_POSTGRES_URL ?? process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const CONNECTIONS = 50;
const LISTENING = /^(\{.*"Server listening at .*\})$/m;

export interface BenchParty {
  name: 'direct' | 'gateway';
  url: string;
  path: string;
  headers: () => Record<string, string>;
}

export interface ThroughputRow {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  non2xx: number;
  errors: number;
  total: number;
}

/** What bench/run.ts lends: its process spawner, load generator and sequential timer. */
export interface PostgresBenchDeps {
  emulator: { baseUrl: string; apiKey: string };
  direct: BenchParty;
  /** The non-stream chat body. */
  body: string;
  adminToken: string;
  seconds: number;
  quick: boolean;
  /** Writes bench/results/gateway-postgres.cpuprofile (the one-process PostgreSQL gateway). */
  profile: boolean;
  spawnJson<T>(args: string[], env: Record<string, string>, match: RegExp): Promise<{ child: ChildProcess; value: T }>;
  throughput(party: BenchParty, body: string, connections: number, seconds: number): Promise<ThroughputRow>;
  sequentialLatencies(party: BenchParty, body: string, count: number, pool: Pool): Promise<number[]>;
}

type SetupName = 'sqlite_1_process' | 'postgres_1_process' | 'postgres_redis_2_processes';
type ShapeName = 'one_account_20_keys' | 'ten_accounts_200_keys';

interface Setup {
  name: SetupName;
  urls: string[];
  children: ChildProcess[];
  shapes: Partial<Record<ShapeName, BenchKeys>>;
}

export interface PostgresResults {
  connections: number;
  seconds_per_run: number;
  two_processes_merge: string;
  throughput_nonstream: Record<ShapeName, Record<SetupName, ThroughputRow> & { postgres_vs_sqlite: number; two_processes_vs_sqlite: number }>;
  added_latency: Record<SetupName, { p50_ms: number; p99_ms: number; added_p50_ms: number; added_p99_ms: number }> & { direct: { p50_ms: number; p99_ms: number }; requests_each: number };
  ledger_checks: Record<SetupName, LedgerCheck>;
  ledger_ok: boolean;
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const onServer = (statement: string) => onTestServer(statement, PG_URL);
const dropRedisPrefix = (prefix: string) => dropTestRedisPrefix(prefix, REDIS_URL);

/** Sums two runs made at the same time against two processes. */
function merge(a: ThroughputRow, b: ThroughputRow): ThroughputRow {
  const total = a.total + b.total;
  return {
    rps: round(a.rps + b.rps),
    p50_ms: round((a.p50_ms * a.total + b.p50_ms * b.total) / Math.max(1, total)),
    p99_ms: Math.max(a.p99_ms, b.p99_ms),
    non2xx: a.non2xx + b.non2xx,
    errors: a.errors + b.errors,
    total,
  };
}

export async function postgresScenarios(deps: PostgresBenchDeps): Promise<PostgresResults> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-pg-'));
  const database = `gw_bench_${randomUUID().replace(/-/g, '')}`;
  const databases = [`${database}_1`, `${database}_2`];
  const redisPrefix = `bench-${randomUUID()}:`;
  const serverUrl = (name: string) => Object.assign(new URL(PG_URL), { pathname: `/${name}` }).toString();
  const setups: Setup[] = [];
  const start = async (name: SetupName, env: Record<string, string>[], profile: boolean): Promise<Setup> => {
    const heapMb = process.env.GATEWAY_HEAP_MB ?? '200';
    const args = [...(profile ? ['--cpu-prof', '--cpu-prof-dir', dir] : []), `--max-old-space-size=${heapMb}`, 'dist/src/main.js', 'serve'];
    const common = { ADMIN_TOKEN: deps.adminToken, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', PROVIDER_1_BASE_URL: deps.emulator.baseUrl, PROVIDER_1_API_KEY: deps.emulator.apiKey };
    // Processes of one set-up start one after another: the first migrates the empty database.
    const setup: Setup = { name, urls: [], children: [], shapes: {} };
    setups.push(setup);
    for (const extra of env) {
      const spawned = await deps.spawnJson<{ msg: string }>(args, { ...common, ...extra }, LISTENING);
      setup.children.push(spawned.child);
      setup.urls.push(/listening at (\S+)/.exec(spawned.value.msg)?.[1] as string);
    }
    return setup;
  };
  try {
    for (const name of databases) await onServer(`create database ${name}`);
    const sqlite = await start('sqlite_1_process', [{ DATABASE_URL: `sqlite:${join(dir, 'bench.db')}` }], false);
    const postgres = await start('postgres_1_process', [{ DATABASE_URL: serverUrl(databases[0] as string) }], deps.profile);
    const redisEnv = { DATABASE_URL: serverUrl(databases[1] as string), REDIS_URL, REDIS_PREFIX: redisPrefix };
    const twoProcesses = await start('postgres_redis_2_processes', [redisEnv, redisEnv], false);

    const shapes: [ShapeName, number][] = [['one_account_20_keys', 1], ['ten_accounts_200_keys', 10]];
    for (const setup of setups) {
      for (const [shape, accounts] of shapes) setup.shapes[shape] = await createBenchAccounts(setup.urls[0] as string, deps.adminToken, accounts);
    }
    const parties = (setup: Setup, keys: BenchKeys): BenchParty[] =>
      setup.urls.map((url) => ({ name: 'gateway', url, path: '/api/v1/chat/completions', headers: () => ({ authorization: `Bearer ${keys.next()}` }) }));
    const measure = async (setup: Setup, shape: ShapeName, seconds: number): Promise<ThroughputRow> => {
      const each = parties(setup, setup.shapes[shape] as BenchKeys);
      const rows = await Promise.all(each.map((party) => deps.throughput(party, deps.body, CONNECTIONS / each.length, seconds)));
      return rows.reduce(merge);
    };

    // Warm-up (JIT, pools, prepared statements, key caches) on the shape that is measured second.
    for (const setup of setups) await measure(setup, 'ten_accounts_200_keys', 2);

    const throughput = {} as PostgresResults['throughput_nonstream'];
    console.log(`\nnon-stream throughput on PostgreSQL (${CONNECTIONS} connections, ${deps.seconds}s; two processes: two load generators at once, ${CONNECTIONS / 2} connections each)`);
    console.log('shape                   set-up                       req/s    p50 ms  p99 ms  non2xx  errors');
    for (const [shape] of shapes) {
      const rows = {} as Record<SetupName, ThroughputRow>;
      for (const setup of setups) {
        const row = await measure(setup, shape, deps.seconds);
        rows[setup.name] = row;
        console.log(`${shape.padEnd(23)} ${setup.name.padEnd(26)} ${row.rps.toFixed(0).padStart(7)}  ${String(row.p50_ms).padStart(8)}  ${String(row.p99_ms).padStart(6)}  ${String(row.non2xx).padStart(6)}  ${String(row.errors).padStart(6)}`);
      }
      throughput[shape] = {
        ...rows,
        postgres_vs_sqlite: round(rows.postgres_1_process.rps / rows.sqlite_1_process.rps, 3),
        two_processes_vs_sqlite: round(rows.postgres_redis_2_processes.rps / rows.sqlite_1_process.rps, 3),
      };
      console.log(`  PostgreSQL / SQLite: one process ${throughput[shape].postgres_vs_sqlite}, two processes ${throughput[shape].two_processes_vs_sqlite}`);
    }

    // Added latency, one request at a time, interleaved blocks: direct, SQLite, PostgreSQL, then each of the two
    // processes on PostgreSQL + Redis in turn (one account's keys; their samples are counted together).
    const count = deps.quick ? 500 : 2000;
    const two = parties(twoProcesses, twoProcesses.shapes.one_account_20_keys as BenchKeys);
    const timed: [string, BenchParty][] = [
      ['direct', deps.direct],
      ['sqlite_1_process', parties(sqlite, sqlite.shapes.one_account_20_keys as BenchKeys)[0] as BenchParty],
      ['postgres_1_process', parties(postgres, postgres.shapes.one_account_20_keys as BenchKeys)[0] as BenchParty],
      ['postgres_redis_2_processes', two[0] as BenchParty],
      ['postgres_redis_2_processes', two[1] as BenchParty],
    ];
    const pools = timed.map(([, party]) => new Pool(party.url, { connections: 1 }));
    const samples = timed.map(() => [] as number[]);
    for (let block = 0; block < count / 100; block++) {
      for (let i = 0; i < timed.length; i++) samples[i]?.push(...(await deps.sequentialLatencies((timed[i] as [string, BenchParty])[1], deps.body, 100, pools[i] as Pool)));
    }
    for (const pool of pools) await pool.close();
    const direct = { p50_ms: round(percentile(samples[0] ?? [], 50), 3), p99_ms: round(percentile(samples[0] ?? [], 99), 3) };
    const latencyOf = (...parts: number[]) => {
      const all = parts.flatMap((i) => samples[i] ?? []);
      const p50 = round(percentile(all, 50), 3);
      const p99 = round(percentile(all, 99), 3);
      return { p50_ms: p50, p99_ms: p99, added_p50_ms: round(p50 - direct.p50_ms, 3), added_p99_ms: round(p99 - direct.p99_ms, 3) };
    };
    const latency = { requests_each: count, direct, sqlite_1_process: latencyOf(1), postgres_1_process: latencyOf(2), postgres_redis_2_processes: latencyOf(3, 4) };
    console.log(`added latency (sequential, ${count} each, one account): SQLite p50 +${latency.sqlite_1_process.added_p50_ms} ms, p99 +${latency.sqlite_1_process.added_p99_ms} ms; PostgreSQL p50 +${latency.postgres_1_process.added_p50_ms} ms, p99 +${latency.postgres_1_process.added_p99_ms} ms; two processes p50 +${latency.postgres_redis_2_processes.added_p50_ms} ms, p99 +${latency.postgres_redis_2_processes.added_p99_ms} ms (direct p50 ${direct.p50_ms} ms)`);

    const ledgers = {} as Record<SetupName, LedgerCheck>;
    for (const setup of setups) {
      const ids = Object.values(setup.shapes).flatMap((keys) => keys.accountIds);
      ledgers[setup.name] = await checkLedger(setup.urls[setup.urls.length - 1] as string, deps.adminToken, ids);
      const check = ledgers[setup.name];
      console.log(`ledger check, ${setup.name}: ${check.ok ? 'OK' : 'FAILED'} (${check.accounts} accounts, ${check.rows} rows, open holds ${check.open_holds})${check.ok ? '' : ` ${check.problems.slice(0, 3).join('; ')}`}`);
    }
    await stopAll(setups);
    if (deps.profile) keepProfile(dir);
    return {
      connections: CONNECTIONS,
      seconds_per_run: deps.seconds,
      two_processes_merge: 'two autocannon instances at once, 25 connections each; req/s summed, p50 weighted by requests, p99 the larger',
      throughput_nonstream: throughput,
      added_latency: latency,
      ledger_checks: ledgers,
      ledger_ok: Object.values(ledgers).every((check) => check.ok),
    };
  } finally {
    await stopAll(setups);
    for (const name of databases) await onServer(`drop database if exists ${name} with (force)`).catch(() => undefined);
    await dropRedisPrefix(redisPrefix).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function stopAll(setups: Setup[]): Promise<void> {
  const children = setups.flatMap((setup) => setup.children).filter((child) => child.exitCode === null && child.signalCode === null);
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(children.map((child) => new Promise((resolve) => child.once('exit', resolve))));
}

/** The main thread's profile is the largest (the TypeScript loader runs in a thread of its own). */
function keepProfile(dir: string): void {
  const profile = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort((a, b) => statSync(join(dir, b)).size - statSync(join(dir, a)).size)[0];
  if (profile === undefined) return;
  renameSync(join(dir, profile), new URL('./results/gateway-postgres.cpuprofile', import.meta.url));
  console.log('CPU profile of the PostgreSQL gateway: bench/results/gateway-postgres.cpuprofile');
}
