/**
 * `npm run bench`: the gateway (full auth, rate limiting, holds, settlements) against
 * the direct path (load generator → emulator) and a bare Node reverse proxy, measured
 * side by side in one run. Each party runs in its own process; this process is the
 * load generator. Results: a table on stdout and bench/results/latest.json.
 * `--profile` writes a CPU profile of the gateway under load to bench/results/.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { checkLedger, createBenchAccounts, type BenchKeys } from './accounts.ts';
import { largePart, type GatewayStats } from './large-part.ts';
import { openStreams, type OpenStreamsResult } from './open-streams.ts';
import { postgresScenarios } from './postgres-scenarios.ts';
import { plotBench } from './plot.ts';

const PROFILE = process.argv.includes('--profile');
const QUICK = process.argv.includes('--quick');
const SECONDS = QUICK ? 3 : 10;
const ADMIN_TOKEN = 'bench-admin-token-000000000000';
const RESULTS = new URL('./results/', import.meta.url);

interface Party {
  name: 'direct' | 'proxy' | 'gateway';
  url: string;
  path: string;
  headers: () => Record<string, string>;
}

function spawnJson<T>(args: string[], env: Record<string, string>, match: RegExp): Promise<{ child: ChildProcess; value: T }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const onData = (data: Buffer) => {
      out += data.toString();
      const found = match.exec(out);
      if (found !== null) {
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        resolve({ child, value: JSON.parse(found[1] as string) as T });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${out.slice(-2000)}`)));
  });
}

const JSON_LINE = /^(\{.*\})$/m;

async function throughput(party: Party, body: string, connections: number, seconds: number) {
  const result = await autocannon({
    url: party.url,
    connections,
    duration: seconds,
    requests: [{ method: 'POST', path: party.path, body, setupRequest: (req) => ({ ...req, headers: { ...party.headers(), 'content-type': 'application/json' } }) }],
  });
  return { rps: result.requests.average, p50_ms: result.latency.p50, p99_ms: result.latency.p99, non2xx: result.non2xx, errors: result.errors + result.timeouts, total: result.requests.total };
}

/** One request at a time, timed with hrtime: sub-millisecond added latency. */
async function sequentialLatencies(party: Party, body: string, count: number, pool: Pool): Promise<number[]> {
  const times: number[] = [];
  const url = new URL(party.url);
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    const response = await pool.request({ method: 'POST', path: url.pathname.replace(/\/$/, '') + party.path, headers: { ...party.headers(), 'content-type': 'application/json' }, body });
    await response.body.text();
    if (response.statusCode !== 200) throw new Error(`${party.name}: HTTP ${response.statusCode}`);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return times;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

async function main(): Promise<void> {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-'));
  const children: ChildProcess[] = [];
  try {
    // 1. Emulators: a fast provider_1 (instant answers, 20-chunk streams), a slow provider_7 for open streams.
    const fast = await spawnJson<{ baseUrl: string; apiKey: string }>(['--import', 'tsx', 'bench/emulator-process.ts'], { BENCH_EMULATOR_KIND: 'openai' }, JSON_LINE);
    children.push(fast.child);
    const slow = await spawnJson<{ baseUrl: string; apiKey: string }>(['--import', 'tsx', 'bench/emulator-process.ts'], {
      BENCH_EMULATOR_KIND: 'deepseek',
      BENCH_EMULATOR_DEFAULT: JSON.stringify({ kind: 'text', text: 'tick '.repeat(20), chunks: 20 }),
      // Each stream lasts twice SECONDS, so all of them are open at once while the last ones are still being admitted.
      BENCH_EMULATOR_CHUNK_DELAY_MS: String(Math.round((2 * SECONDS * 1000) / 20)),
    }, JSON_LINE);
    children.push(slow.child);
    const proxy = await spawnJson<{ url: string }>(['--import', 'tsx', 'bench/bare-proxy.ts'], { BENCH_PROXY_TARGET: new URL(fast.value.baseUrl).origin }, JSON_LINE);
    children.push(proxy.child);

    // 2. The gateway in its own process, SQLite on disk, full pipeline.
    // The production path: the compiled gateway (`npm run build`, done by `prebench`).
    const heapMb = process.env.GATEWAY_HEAP_MB ?? '200'; // as `npm start`
    const gatewayArgs = [...(PROFILE ? ['--cpu-prof', '--cpu-prof-dir', dir] : []), `--max-old-space-size=${heapMb}`, 'dist/src/main.js', 'serve'];
    const gateway = await spawnJson<{ msg: string }>(gatewayArgs, {
      DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`,
      ADMIN_TOKEN,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      PROVIDER_1_BASE_URL: fast.value.baseUrl,
      PROVIDER_1_API_KEY: fast.value.apiKey,
      PROVIDER_7_BASE_URL: slow.value.baseUrl,
      PROVIDER_7_API_KEY: slow.value.apiKey,
    }, /^(\{.*"Server listening at .*\})$/m);
    children.push(gateway.child);
    const gatewayUrl = /listening at (\S+)/.exec(gateway.value.msg)?.[1] as string;

    const keys: BenchKeys = await createBenchAccounts(gatewayUrl, ADMIN_TOKEN, 10);
    const emuAuth = { authorization: `Bearer ${fast.value.apiKey}` };
    const fastBase = new URL(fast.value.baseUrl);
    const parties: Party[] = [
      { name: 'direct', url: fastBase.origin, path: `${fastBase.pathname}/chat/completions`, headers: () => emuAuth },
      { name: 'proxy', url: proxy.value.url, path: `${fastBase.pathname}/chat/completions`, headers: () => emuAuth },
      { name: 'gateway', url: gatewayUrl, path: '/api/v1/chat/completions', headers: () => ({ authorization: `Bearer ${keys.next()}` }) },
    ];
    const message = (stream: boolean) => JSON.stringify({ model: 'gpt-6-luna', messages: [{ role: 'user', content: 'Say hello in one short sentence.' }], max_tokens: 64, stream });
    const args = process.argv.slice(2);
    const command = args.length === 0 ? 'npm run bench' : `npm run bench -- ${args.join(' ')}`;
    const results: Record<string, unknown> = { date: new Date().toISOString(), machine: { cores: cpus().length, cpu: cpus()[0]?.model, node: process.version }, command, seconds_per_run: SECONDS };

    // Scenario 4 first, on a fresh process, so its peak RSS is the streams' own: 10,000 concurrent open streams held for SECONDS.
    const slowBase = new URL(slow.value.baseUrl);
    const streamBody = JSON.stringify({ model: 'deepseek-flash', messages: [{ role: 'user', content: 'Hold the line.' }], max_tokens: 64, stream: true });
    const streamCount = QUICK ? 1000 : 10_000;
    await fetch(`${gatewayUrl}/admin/v1/stats?reset=true`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const directStreams: OpenStreamsResult = await openStreams(slowBase.origin, '/chat/completions', streamCount, () => ({ authorization: `Bearer ${slow.value.apiKey}` }), streamBody.replace('deepseek-flash', 'deepseek-chat'), gateway.child.pid as number, false);
    const gatewayStreams: OpenStreamsResult = await openStreams(gatewayUrl, '/api/v1/chat/completions', streamCount, () => ({ authorization: `Bearer ${keys.next()}` }), streamBody, gateway.child.pid as number, true);
    const stats = (await (await fetch(`${gatewayUrl}/admin/v1/stats`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as { event_loop_delay_ms: { p50: number; p99: number; max: number } };
    results.open_streams = { streams: streamCount, held_seconds: 2 * SECONDS, direct: directStreams, gateway: { ...gatewayStreams, event_loop_delay_ms: stats.event_loop_delay_ms } };
    console.log(`\nopen streams (${streamCount} × ${2 * SECONDS}s): gateway errors ${gatewayStreams.errors}, completed ${gatewayStreams.completed}, at most ${gatewayStreams.peak_open} open at once, peak RSS ${gatewayStreams.peak_rss_mib} MiB (${gatewayStreams.rss_before_mib} MiB before), event-loop delay p99 ${round(stats.event_loop_delay_ms.p99)} ms, max ${round(stats.event_loop_delay_ms.max)} ms; direct errors ${directStreams.errors}`);

    // Warm-up (JIT, pools, caches).
    for (const party of parties) await throughput(party, message(false), 10, 2);

    // Scenario 1 and 2: throughput, interleaved per party.
    for (const [name, stream] of [['throughput_nonstream', false], ['throughput_stream', true]] as const) {
      const rows: Record<string, Awaited<ReturnType<typeof throughput>>> = {};
      for (const party of parties) rows[party.name] = await throughput(party, message(stream), 50, SECONDS);
      results[name] = {
        ...rows,
        gateway_vs_direct: round((rows.gateway?.rps ?? 0) / (rows.direct?.rps ?? 1), 3),
        gateway_vs_proxy: round((rows.gateway?.rps ?? 0) / (rows.proxy?.rps ?? 1), 3),
      };
      printThroughput(name, rows);
    }

    // Scenario 3: added latency, one request at a time, interleaved blocks.
    const pools = Object.fromEntries(parties.map((p) => [p.name, new Pool(p.url, { connections: 1 })]));
    const samples: Record<string, number[]> = { direct: [], proxy: [], gateway: [] };
    const count = QUICK ? 500 : 2000;
    for (let block = 0; block < count / 100; block++) {
      for (const party of parties) samples[party.name]?.push(...(await sequentialLatencies(party, message(false), 100, pools[party.name] as Pool)));
    }
    const latency = {
      requests_each: count,
      direct: { p50_ms: round(percentile(samples.direct ?? [], 50), 3), p99_ms: round(percentile(samples.direct ?? [], 99), 3) },
      proxy: { p50_ms: round(percentile(samples.proxy ?? [], 50), 3), p99_ms: round(percentile(samples.proxy ?? [], 99), 3) },
      gateway: { p50_ms: round(percentile(samples.gateway ?? [], 50), 3), p99_ms: round(percentile(samples.gateway ?? [], 99), 3) },
      added_p50_ms: 0,
      added_p99_ms: 0,
    };
    latency.added_p50_ms = round(latency.gateway.p50_ms - latency.direct.p50_ms, 3);
    latency.added_p99_ms = round(latency.gateway.p99_ms - latency.direct.p99_ms, 3);
    results.added_latency = latency;
    console.log(`\nadded latency (sequential, ${count} each): p50 +${latency.added_p50_ms} ms, p99 +${latency.added_p99_ms} ms (direct p50 ${latency.direct.p50_ms} ms, gateway p50 ${latency.gateway.p50_ms} ms)`);

    // Scenario 5: a 100k-token prompt; do other requests stall meanwhile?
    const bigText = 'The quick brown fox jumps over the lazy dog. '.repeat(10_000);
    const bigBody = JSON.stringify({ model: 'gpt-6-luna', messages: [{ role: 'user', content: bigText }], max_tokens: 16 });
    const big = { direct: [] as number[], gateway: [] as number[], freshDirect: [] as number[], freshGateway: [] as number[] };
    // The same prompt again is what a conversation's history or a long system prompt is; a fresh one is a text never counted before.
    const freshBody = (i: number) => bigBody.replace('The quick', `Run ${i} at ${Date.now()}: the quick`);
    const smallDuring: number[] = [];
    let running = true;
    const background = (async () => {
      while (running) smallDuring.push(...(await sequentialLatencies(parties[2] as Party, message(false), 1, pools.gateway as Pool)));
    })();
    const bigPool = Object.fromEntries(parties.map((p) => [p.name, new Pool(p.url, { connections: 1 })]));
    for (let i = 0; i < 5; i++) {
      big.direct.push(...(await sequentialLatencies(parties[0] as Party, bigBody, 1, bigPool.direct as Pool)));
      big.gateway.push(...(await sequentialLatencies(parties[2] as Party, bigBody, 1, bigPool.gateway as Pool)));
      big.freshDirect.push(...(await sequentialLatencies(parties[0] as Party, freshBody(i), 1, bigPool.direct as Pool)));
      big.freshGateway.push(...(await sequentialLatencies(parties[2] as Party, freshBody(i), 1, bigPool.gateway as Pool)));
    }
    running = false;
    await background;
    const bigResult = {
      prompt_chars: bigText.length,
      direct_p50_ms: round(percentile(big.direct, 50)),
      gateway_p50_ms: round(percentile(big.gateway, 50)),
      time_in_gateway_ms: round(percentile(big.gateway, 50) - percentile(big.direct, 50)),
      fresh_prompt_time_in_gateway_ms: round(percentile(big.freshGateway, 50) - percentile(big.freshDirect, 50)),
      small_requests_meanwhile: { count: smallDuring.length, p50_ms: round(percentile(smallDuring, 50), 3), max_ms: round(Math.max(...smallDuring), 3) },
    };
    results.large_prompt = bigResult;
    console.log(`\n100k-token prompt: ${bigResult.time_in_gateway_ms} ms in the gateway (p50 of 5; a fresh prompt each time: ${bigResult.fresh_prompt_time_in_gateway_ms} ms); small requests meanwhile: ${bigResult.small_requests_meanwhile.count}, p50 ${bigResult.small_requests_meanwhile.p50_ms} ms, max ${bigResult.small_requests_meanwhile.max_ms} ms`);
    for (const pool of [...Object.values(pools), ...Object.values(bigPool)]) await pool.close();

    // Scenario 6: a 20 MiB data URL (a PDF): how long its part takes in the gateway, and do other requests stall meanwhile?
    const statsOf = async (reset: boolean) =>
      (await (await fetch(`${gatewayUrl}/admin/v1/stats${reset ? '?reset=true' : ''}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as GatewayStats;
    const part = await largePart(
      { origin: fastBase.origin, path: `${fastBase.pathname}/chat/completions`, headers: () => emuAuth },
      { origin: gatewayUrl, path: '/api/v1/chat/completions', headers: () => ({ authorization: `Bearer ${keys.next()}` }) },
      statsOf,
      QUICK ? 2 : 5,
      'gpt-6-luna',
    );
    results.large_part = part;
    console.log(`\n20 MiB PDF data URL: ${part.time_in_gateway_ms} ms in the gateway (p50), worst part ${part.worst_part_ms} ms to read; event-loop delay max ${part.event_loop_delay_ms.max} ms; small requests meanwhile: ${part.small_requests_meanwhile.count}, p50 ${part.small_requests_meanwhile.p50_ms} ms, max ${part.small_requests_meanwhile.max_ms} ms`);

    // After the load: the ledger must account for every credit.
    const ledger = await checkLedger(gatewayUrl, ADMIN_TOKEN, keys.accountIds);
    results.ledger_check = ledger;
    console.log(`\nledger check: ${ledger.ok ? 'OK' : 'FAILED'} (${ledger.accounts} accounts, ${ledger.rows} rows, open holds ${ledger.open_holds})`);

    gateway.child.kill('SIGTERM');
    await new Promise((r) => gateway.child.once('exit', r));
    if (PROFILE) {
      // One profile per thread (the TypeScript loader runs in its own): the main thread's is the largest.
      const profile = readdirSync(dir)
        .filter((f) => f.endsWith('.cpuprofile'))
        .sort((a, b) => statSync(join(dir, b)).size - statSync(join(dir, a)).size)[0];
      if (profile !== undefined) {
        renameSync(join(dir, profile), new URL('gateway.cpuprofile', RESULTS));
        console.log(`CPU profile: bench/results/gateway.cpuprofile (open in Chrome DevTools › Performance)`);
      }
    }
    // The non-stream scenario on PostgreSQL: one process, and two on PostgreSQL + Redis (bench/postgres-scenarios.ts).
    const postgres = await postgresScenarios({ emulator: fast.value, direct: parties[0] as Party & { name: 'direct' }, body: message(false), adminToken: ADMIN_TOKEN, seconds: SECONDS, quick: QUICK, profile: PROFILE, spawnJson, throughput, sequentialLatencies });
    results.postgres = postgres;
    results.duration_seconds = round((Date.now() - started) / 1000, 1);
    writeFileSync(new URL('latest.json', RESULTS), JSON.stringify(results, null, 2) + '\n');
    console.log(`\nwritten: bench/results/latest.json (${results.duration_seconds} s)`);
    await plotBench(results as unknown as Parameters<typeof plotBench>[0], new URL('latest.png', RESULTS)).then(
      () => console.log('written: bench/results/latest.png'),
      (error: Error) => console.log(`no plot (headless Chromium, CHROMIUM_PATH): ${error.message.split('\n')[0]}`),
    );
    if (!ledger.ok || !postgres.ledger_ok) process.exitCode = 1;
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

function printThroughput(name: string, rows: Record<string, { rps: number; p50_ms: number; p99_ms: number; non2xx: number; errors: number }>): void {
  console.log(`\n${name} (50 connections, ${SECONDS}s)`);
  console.log('party     req/s     p50 ms  p99 ms  non2xx  errors  vs direct  vs proxy');
  for (const [party, row] of Object.entries(rows)) {
    const vsDirect = row.rps / (rows.direct?.rps ?? 1);
    const vsProxy = row.rps / (rows.proxy?.rps ?? 1);
    console.log(`${party.padEnd(9)} ${row.rps.toFixed(0).padStart(6)}  ${String(row.p50_ms).padStart(8)}  ${String(row.p99_ms).padStart(6)}  ${String(row.non2xx).padStart(6)}  ${String(row.errors).padStart(6)}  ${vsDirect.toFixed(3).padStart(9)}  ${vsProxy.toFixed(3).padStart(8)}`);
  }
}

await main();
