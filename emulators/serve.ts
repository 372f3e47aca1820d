/**
 * Runs emulators in their own process (for the demo and the benchmark):
 *
 *   npx tsx emulators/serve.ts --port 0 --kind openai|anthropic|gemini|deepseek|predictions|all
 *       [--latency-ms N] [--chunk-delay-ms N] [--host H] [--api-key K] [--record] [--follow-requests] [--workers N]
 *
 * Prints one JSON line when ready:
 *   {"ready":true,"apiKey":"emu-key","emulators":{"openai":"http://127.0.0.1:PORT/v1",…},
 *    "env":{"PROVIDER_1_BASE_URL":"…","PROVIDER_1_API_KEY":"emu-key",…}}
 * With `--kind all` and a non-zero `--port P`, the kinds listen on P, P+1, P+2, P+3, P+4 (openai,
 * anthropic, gemini, deepseek, predictions; the last one stands for every media and GPU host).
 * `--latency-ms` delays the first byte of every default answer;
 * `--chunk-delay-ms` spaces default stream events. Requests are recorded only with `--record`.
 * `--follow-requests` answers unscripted chats as a model would (tool calls, JSON for a schema).
 * Control routes on every emulator: GET /__emulator/requests, POST /__emulator/enqueue
 * {scenario, options}, POST /__emulator/default {scenario|null, options}, POST /__emulator/reset.
 * `--workers N` (default 1) runs N processes sharing the same ports (node:cluster), for load
 * generators that need more than one core of emulator; each worker then has its own scenario
 * queue, default and recorded requests, so control routes are only meaningful with one worker.
 * SIGINT/SIGTERM close the servers and exit.
 */
import cluster from 'node:cluster';
import { parseArgs } from 'node:util';
import { EMULATOR_KINDS, emulatorEnv, startEmulator } from './index.ts';
import type { Emulator, EmulatorKind, ScenarioOptions } from './types.ts';

function usage(message: string): never {
  process.stderr.write(`${message}\nusage: tsx emulators/serve.ts --port 0 --kind openai|anthropic|gemini|deepseek|predictions|all [--latency-ms N] [--chunk-delay-ms N] [--host H] [--api-key K] [--record] [--follow-requests] [--workers N]\n`);
  process.exit(2);
}

function nonNegative(name: string, v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) usage(`--${name} must be a non-negative integer`);
  return n;
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        port: { type: 'string', default: '0' },
        kind: { type: 'string', default: 'all' },
        host: { type: 'string', default: '127.0.0.1' },
        'api-key': { type: 'string' },
        'latency-ms': { type: 'string' },
        'chunk-delay-ms': { type: 'string' },
        record: { type: 'boolean', default: false },
        'follow-requests': { type: 'boolean', default: false },
        workers: { type: 'string', default: '1' },
      },
      strict: true,
    }));
  } catch (err) {
    usage(err instanceof Error ? err.message : String(err));
  }
  const kindArg = values.kind ?? 'all';
  const kinds: EmulatorKind[] = kindArg === 'all' ? [...EMULATOR_KINDS] : EMULATOR_KINDS.includes(kindArg as EmulatorKind) ? [kindArg as EmulatorKind] : usage(`unknown --kind ${kindArg}`);
  const port = nonNegative('port', values.port, 0);
  const latency = nonNegative('latency-ms', values['latency-ms'], 0);
  const chunkDelay = nonNegative('chunk-delay-ms', values['chunk-delay-ms'], 0);
  const workers = Math.max(1, nonNegative('workers', values.workers, 1));

  if (workers > 1 && cluster.isPrimary) {
    let announced = false;
    for (let i = 0; i < workers; i++) {
      cluster.fork().on('message', (line: unknown) => {
        if (announced || typeof line !== 'string') return;
        announced = true;
        process.stdout.write(`${JSON.stringify({ ...(JSON.parse(line) as Record<string, unknown>), workers })}\n`);
      });
    }
    cluster.on('exit', (_worker, code) => {
      if (!stoppingPrimary) {
        process.stderr.write(`emulator worker exited (${String(code)}); stopping\n`);
        stopPrimary(1);
      }
    });
    let stoppingPrimary = false;
    const stopPrimary = (code: number): void => {
      if (stoppingPrimary) return;
      stoppingPrimary = true;
      for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGTERM');
      setTimeout(() => process.exit(code), 200).unref();
      cluster.disconnect(() => process.exit(code));
    };
    process.on('SIGINT', () => stopPrimary(0));
    process.on('SIGTERM', () => stopPrimary(0));
    return;
  }

  const started: Emulator[] = [];
  for (let i = 0; i < kinds.length; i++) {
    const kind = kinds[i] as EmulatorKind;
    const emu = await startEmulator(kind, {
      port: port === 0 ? 0 : port + i,
      host: values.host,
      apiKey: values['api-key'],
      record: values.record === true,
      control: true,
      followRequests: values['follow-requests'] === true,
    });
    const o: ScenarioOptions = {};
    if (latency > 0) o.delayMs = latency;
    if (chunkDelay > 0) o.chunkDelayMs = chunkDelay;
    emu.setDefault(null, o);
    started.push(emu);
  }

  const emulators: Record<string, string> = {};
  const env: Record<string, string> = {};
  for (const e of started) {
    emulators[e.kind] = e.baseUrl;
    Object.assign(env, emulatorEnv(e));
  }
  const line = `${JSON.stringify({ ready: true, apiKey: started[0]?.apiKey, emulators, env })}\n`;
  if (cluster.isWorker && process.send !== undefined) process.send(line);
  else process.stdout.write(line);

  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void Promise.all(started.map((e) => e.close())).then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
