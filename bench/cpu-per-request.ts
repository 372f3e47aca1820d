/**
 * CPU per non-stream request of one or more gateway builds, read from /proc (utime+stime of the
 * gateway process) over a fixed autocannon load, the builds taking turns round by round:
 *   npx tsc -p tsconfig.build.json && node --import tsx bench/cpu-per-request.ts main=<other build>/dist mine=dist
 * (a build copied elsewhere needs catalog/, docs/ and package.json beside its dist/). ROUNDS, N and
 * PROF (a directory: --cpu-prof for each gateway) in the environment; BENCH_DATABASE_URL (one build
 * only: e.g. a fresh PostgreSQL database) instead of a new SQLite file, and then the CPU the
 * PostgreSQL server processes spent too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { createBenchAccounts } from './accounts.ts';

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
/** CPU ticks of every PostgreSQL server process on this machine (0 without any). */
function postgresTicks(): number {
  let total = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') total += cpuTicks(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}
try {
  const emu = await spawnLine(['--import', 'tsx', 'bench/emulator-process.ts'], { BENCH_EMULATOR_KIND: 'openai' }, /^(\{.*\})$/m);
  const fast = JSON.parse(emu.line) as { baseUrl: string; apiKey: string };
  const builds: { name: string; pid: number; url: string; next: () => string }[] = [];
  for (const arg of process.argv.slice(2)) {
    const [name, dir] = arg.split('=') as [string, string];
    const tmp = mkdtempSync(join(tmpdir(), 'cpu-'));
    const gw = await spawnLine([...(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.PROF] : []), '--max-old-space-size=200', join(dir, 'src/main.js'), 'serve'], {
      DATABASE_URL: process.env.BENCH_DATABASE_URL ?? `sqlite:${join(tmp, 'b.db')}`, ADMIN_TOKEN, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info',
      PROVIDER_1_BASE_URL: fast.baseUrl, PROVIDER_1_API_KEY: fast.apiKey,
    }, /^(\{.*"Server listening at .*\})$/m);
    const url = /listening at (\S+?)"/.exec(gw.line)?.[1] as string;
    const keys = await createBenchAccounts(url, ADMIN_TOKEN, 5);
    builds.push({ name, pid: gw.child.pid as number, url, next: keys.next });
    console.log(`${name} pid ${gw.child.pid}`);
  }
  const body = JSON.stringify({ model: 'gpt-6-luna', messages: [{ role: 'user', content: 'Say hello in one short sentence.' }], max_tokens: 64, stream: false });
  const load = async (b: (typeof builds)[number], amount: number) => {
    const r = await autocannon({ url: b.url + '/api/v1/chat/completions', method: 'POST', connections: 50, amount, body,
      requests: [{ setupRequest: (req) => ({ ...req, headers: { 'content-type': 'application/json', authorization: `Bearer ${b.next()}` } }) }] });
    return r;
  };
  for (const b of builds) await load(b, 4000); // warm-up
  const res: Record<string, number[]> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const b of builds) {
      const t0 = cpuTicks(b.pid);
      const db0 = postgresTicks();
      const r = await load(b, N);
      const t1 = cpuTicks(b.pid);
      const dbUs = ((postgresTicks() - db0) * 10_000) / N;
      const ok = r['2xx'];
      const us = ((t1 - t0) * 10_000) / N; // clock ticks of 10 ms (getconf CLK_TCK = 100)
      (res[b.name] ??= []).push(Math.round(us));
      console.log(`round ${round} ${b.name}: ${us.toFixed(0)} µs/request${dbUs > 0 ? ` (+${dbUs.toFixed(0)} µs in PostgreSQL)` : ''}, ${r.requests.average} req/s, 2xx ${ok}/${N}, non2xx ${r.non2xx} errors ${r.errors} load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`);
    }
  }
  for (const [k, v] of Object.entries(res)) console.log(`${k}: ${v.join(', ')} µs (min ${Math.min(...v)}, median ${[...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]})`);
} finally {
  for (const c of children) c.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 3000));
}
