/**
 * CPU per non-stream request of one or more gateway builds, read from /proc (utime+stime of the
 * gateway process) over a fixed autocannon load, the builds taking turns round by round:
 *   npx tsc -p tsconfig.build.json && node --import tsx bench/cpu-per-request.ts main=<other build>/dist mine=dist
 * (a build copied elsewhere needs catalog/, docs/ and package.json beside its dist/). ROUNDS, N and
 * PROF (a directory: --cpu-prof for each gateway) in the environment.
 *   DB=postgres   each build on a fresh PostgreSQL database of its own (created on BENCH_POSTGRES_URL's server,
 *                 dropped at the end), and the CPU the PostgreSQL server processes spent counts too
 *   PROCESSES=2   (with DB=postgres) two gateway processes per build on one database with Redis (BENCH_REDIS_URL,
 *                 a key prefix of their own), the load split in two (25 connections each): both gateways', the
 *                 PostgreSQL server's and redis-server's CPU count
 * BENCH_DATABASE_URL (one build only) still points a build at a given database.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { onServer } from '../test/helpers/postgres.ts';
import { dropRedisPrefix } from '../test/helpers/redis.ts';
import { createBenchAccounts } from './accounts.ts';

const PG_URL = process.env.BENCH_POSTGRES_URL ?? process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const POSTGRES = process.env.DB === 'postgres';
const PROCESSES = POSTGRES ? Number(process.env.PROCESSES ?? '1') : 1;
const databases: string[] = [];
const redisPrefixes: string[] = [];

const ROUNDS = Number(process.env.ROUNDS ?? '4');
const N = Number(process.env.N ?? '15000');
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const children: ChildProcess[] = [];
function spawnLine(args: string[], env: Record<string, string>, match: RegExp): Promise<{ child: ChildProcess; line: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let out = '';
    // Once the line is found, stop gathering: the gateway logs a line per request, and a regex
    // run over all of it on every chunk made this process the bottleneck (a falling req/s).
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = match.exec(out);
      if (m) {
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        resolve({ child, line: m[1] as string });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (d: Buffer) => process.stderr.write(d));
    child.on('exit', (c) => reject(new Error('exit ' + c + out.slice(0, 2000))));
  });
}
function cpuTicks(pid: number): number {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}
/** CPU ticks of every process of this command name on this machine (0 without any): postgres, redis-server. */
function ticksOf(command: string): number {
  let total = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === command) total += cpuTicks(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}
const postgresTicks = () => ticksOf('postgres');
/** redis-server's threads are named after it too; the main process's stat counts them. */
const redisTicks = () => (PROCESSES > 1 ? ticksOf('redis-server') : 0);

/** Where a build's gateways keep their money: a new SQLite file, a new PostgreSQL database, or BENCH_DATABASE_URL. */
async function databaseFor(tmp: string): Promise<Record<string, string>> {
  if (process.env.BENCH_DATABASE_URL !== undefined) return { DATABASE_URL: process.env.BENCH_DATABASE_URL };
  if (!POSTGRES) return { DATABASE_URL: `sqlite:${join(tmp, 'b.db')}` };
  const name = `gw_cpu_${randomUUID().replace(/-/g, '')}`;
  await onServer(`create database ${name}`, PG_URL);
  databases.push(name);
  const env: Record<string, string> = { DATABASE_URL: Object.assign(new URL(PG_URL), { pathname: `/${name}` }).toString() };
  if (PROCESSES > 1) {
    const prefix = `bench-cpu-${randomUUID()}:`;
    redisPrefixes.push(prefix);
    Object.assign(env, { REDIS_URL, REDIS_PREFIX: prefix });
  }
  return env;
}
try {
  const emu = await spawnLine(['--import', 'tsx', 'bench/emulator-process.ts'], { BENCH_EMULATOR_KIND: 'openai' }, /^(\{.*\})$/m);
  const fast = JSON.parse(emu.line) as { baseUrl: string; apiKey: string };
  const builds: { name: string; pids: number[]; urls: string[]; next: () => string }[] = [];
  for (const arg of process.argv.slice(2)) {
    const [name, dir] = arg.split('=') as [string, string];
    const tmp = mkdtempSync(join(tmpdir(), 'cpu-'));
    const database = await databaseFor(tmp);
    const pids: number[] = [];
    const urls: string[] = [];
    // The processes of one build start one after another: the first migrates the empty database.
    for (let p = 0; p < PROCESSES; p++) {
      const gw = await spawnLine([...(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.PROF] : []), '--max-old-space-size=200', join(dir, 'src/main.js'), 'serve'], {
        ...database, ADMIN_TOKEN, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info',
        PROVIDER_1_BASE_URL: fast.baseUrl, PROVIDER_1_API_KEY: fast.apiKey,
      }, /^(\{.*"Server listening at .*\})$/m);
      pids.push(gw.child.pid as number);
      urls.push(/listening at (\S+?)"/.exec(gw.line)?.[1] as string);
    }
    const keys = await createBenchAccounts(urls[0] as string, ADMIN_TOKEN, 5);
    builds.push({ name, pids, urls, next: keys.next });
    console.log(`${name} pid ${pids.join(', ')}`);
  }
  const body = JSON.stringify({ model: 'gpt-6-luna', messages: [{ role: 'user', content: 'Say hello in one short sentence.' }], max_tokens: 64, stream: false });
  // 50 connections, split evenly over the build's processes; the results summed.
  const load = async (b: (typeof builds)[number], amount: number) => {
    const runs = await Promise.all(b.urls.map((url) => autocannon({ url: url + '/api/v1/chat/completions', method: 'POST', connections: 50 / b.urls.length, amount: amount / b.urls.length, body,
      requests: [{ setupRequest: (req) => ({ ...req, headers: { 'content-type': 'application/json', authorization: `Bearer ${b.next()}` } }) }] })));
    return {
      '2xx': runs.reduce((n, r) => n + r['2xx'], 0),
      non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
      errors: runs.reduce((n, r) => n + r.errors, 0),
      requests: { average: Math.round(runs.reduce((n, r) => n + r.requests.average, 0)) },
    };
  };
  const gatewayTicks = (b: (typeof builds)[number]) => b.pids.reduce((n, pid) => n + cpuTicks(pid), 0);
  for (const b of builds) await load(b, 4000); // warm-up
  const res: Record<string, number[]> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const b of builds) {
      const t0 = gatewayTicks(b);
      const db0 = postgresTicks();
      const redis0 = redisTicks();
      const r = await load(b, N);
      const t1 = gatewayTicks(b);
      const dbUs = ((postgresTicks() - db0) * 10_000) / N;
      const redisUs = ((redisTicks() - redis0) * 10_000) / N;
      const ok = r['2xx'];
      const us = ((t1 - t0) * 10_000) / N; // clock ticks of 10 ms (getconf CLK_TCK = 100)
      (res[b.name] ??= []).push(Math.round(us));
      if (POSTGRES) (res[`${b.name} + PostgreSQL${PROCESSES > 1 ? ' + Redis' : ''}`] ??= []).push(Math.round(us + dbUs + redisUs));
      console.log(`round ${round} ${b.name}: ${us.toFixed(0)} µs/request${dbUs > 0 ? ` (+${dbUs.toFixed(0)} µs in PostgreSQL)` : ''}${redisUs > 0 ? ` (+${redisUs.toFixed(0)} µs in Redis)` : ''}, ${r.requests.average} req/s, 2xx ${ok}/${N}, non2xx ${r.non2xx} errors ${r.errors} load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`);
    }
  }
  for (const [k, v] of Object.entries(res)) console.log(`${k}: ${v.join(', ')} µs (min ${Math.min(...v)}, median ${[...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]})`);
} finally {
  for (const c of children) c.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 3000));
  for (const name of databases) await onServer(`drop database if exists ${name} with (force)`, PG_URL).catch((e: unknown) => console.error(`drop ${name}:`, e));
  for (const prefix of redisPrefixes) await dropRedisPrefix(prefix, REDIS_URL).catch(() => undefined);
}
