/**
 * Cache reads and writes wherever a run is recorded (DECISIONS.md "Prompt caching, billed
 * exactly"): the job record's usage, the request log line, /metrics (tokens by kind) and the
 * operator dashboard's usage (rollups, request log, CSV).
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../emulators/index.ts';
import type { Emulator } from '../emulators/types.ts';
import { writeCatalog } from './fixtures/catalog.ts';
import { chatCatalog } from './helpers/chat.ts';
import { ADMIN_TOKEN, http, startGateway, type TestGateway } from './helpers/gateway.ts';
import { CACHE_MODELS } from './helpers/prompt-cache.ts';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

let gw: TestGateway;
let anthropic: Emulator;
let gemini: Emulator;
let raw = '';

beforeAll(async () => {
  anthropic = await startEmulator('anthropic');
  gemini = await startEmulator('gemini');
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      raw += chunk.toString();
      done();
    },
  });
  gw = await startGateway({
    LOG_LEVEL: 'info',
    METRICS_TOKEN,
    CATALOG_FILE: writeCatalog(chatCatalog(CACHE_MODELS)),
    PROVIDER_2_BASE_URL: anthropic.baseUrl,
    PROVIDER_2_API_KEY: anthropic.apiKey,
    PROVIDER_3_BASE_URL: gemini.baseUrl,
    PROVIDER_3_API_KEY: gemini.apiKey,
  }, { logStream });
});
afterAll(async () => {
  await gw.close();
  await anthropic.close();
  await gemini.close();
});

/** The request's log line: written once the answer has gone, so waited for, a bounded number of turns. */
async function logLine(jobId: string): Promise<Record<string, unknown>> {
  for (let turn = 0; turn < 1_000; turn++) {
    const line = raw.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'request' && l.job_id === jobId);
    if (line !== undefined) return line;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`no log line for ${jobId}`);
}

async function tokensByKind(model: string): Promise<Record<string, number>> {
  const text = (await http(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text;
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^gateway_tokens_total\{(.*)\} (\S+)$/gm)) {
    const labels = Object.fromEntries([...(m[1] as string).matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (labels.model === model) out[labels.kind as string] = Number(m[2]);
  }
  return out;
}

describe('a run with cache reads and writes, as recorded', () => {
  let accountId: string;
  let jobId: string;
  let key: string;
  // 7 uncached + 1,001 read + 511 written for 5 minutes + 3,001 for an hour = 4,520 input tokens.
  const scenario = { input: 7, cacheRead: 1_001, cacheWrite: 511, cacheWrite1h: 3_001, output: 13 };
  beforeAll(async () => {
    ({ accountId, key } = await gw.account());
    anthropic.enqueue({ kind: 'text', text: 'ok', usage: scenario });
    const r = await gw.api('/chat/completions', { key, body: { model: 'claude-cached', messages: [{ role: 'user', content: 'Hi' }] } });
    expect(r.status).toBe(200);
    jobId = r.headers['x-service-job-id'] as string;
  });

  it('the job record: prompt and completion tokens with the cache reads and each lifetime of writes, and the exact cost', async () => {
    const r = await gw.api(`/jobs/${jobId}`, { key });
    expect(r.json.usage).toEqual({ prompt_tokens: 4_520, completion_tokens: 13, total_tokens: 4_533, cache_read_tokens: 1_001, cache_write_tokens: 511, cache_write_1h_tokens: 3_001 });
    // 7 × 125 + 1,001 × 12.5 + 511 × 156.25 + 3,001 × 250 + 13 × 1,000 = 856,481.25 → 856,482 micro-credits.
    expect(r.json.cost_credits).toBe(0.856482);
  });

  it('the request log line', async () => {
    expect(await logLine(jobId)).toMatchObject({ input_tokens: 4_520, output_tokens: 13, cache_read_tokens: 1_001, cache_write_tokens: 511, cache_write_1h_tokens: 3_001, credits: 0.856482 });
  });

  it('/metrics: tokens by kind (input is the uncached part; writes of every lifetime are one kind)', async () => {
    expect(await tokensByKind('claude-cached')).toEqual({ input: 7, cache_read: 1_001, cache_write: 3_512, output: 13 });
  });

  it('the dashboard: the usage series, the request log and its CSV', async () => {
    const usage = await gw.admin('GET', `/admin/v1/usage?account_id=${accountId}`);
    // The series holds every bucket of the range (empty ones as zeros, issue 32): the run is the one bucket with requests.
    expect((usage.json.series as { requests: number }[]).filter((b) => b.requests > 0)).toEqual([expect.objectContaining({ requests: 1, prompt_tokens: 4_520, completion_tokens: 13, cache_read_tokens: 1_001, cache_write_tokens: 3_512 })]);
    const log = await gw.admin('GET', `/admin/v1/jobs?account_id=${accountId}`);
    expect(log.json.data).toEqual([expect.objectContaining({ id: jobId, prompt_tokens: 4_520, cache_read_tokens: 1_001, cache_write_tokens: 3_512 })]);
    const csv = await http(`${gw.url}/admin/v1/jobs.csv?account_id=${accountId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const [header, row] = csv.text.trim().split('\n').map((l) => l.split(','));
    const cell = (name: string) => row?.[header?.indexOf(name) ?? -1];
    expect([cell('prompt_tokens'), cell('cache_read_tokens'), cell('cache_write_tokens')]).toEqual(['4520', '1001', '3512']);
  });
});

describe('reasoning tokens, where the provider reports them', () => {
  it('provider_3 thoughts: the job record, the log line and the reasoning kind on /metrics', async () => {
    const { key } = await gw.account();
    gemini.enqueue({ kind: 'text', text: 'ok', reasoning: 'Thinking.', usage: { input: 2_000, cacheRead: 1_500, output: 20, reasoning: 70 } });
    const r = await gw.api('/chat/completions', { key, body: { model: 'gemini-cached', messages: [{ role: 'user', content: 'Hi' }] } });
    const id = r.headers['x-service-job-id'] as string;
    expect((await gw.api(`/jobs/${id}`, { key })).json.usage).toEqual({ prompt_tokens: 2_000, completion_tokens: 90, total_tokens: 2_090, cache_read_tokens: 1_500, reasoning_tokens: 70 });
    expect(await logLine(id)).toMatchObject({ input_tokens: 2_000, output_tokens: 90, cache_read_tokens: 1_500, reasoning_tokens: 70 });
    expect(await tokensByKind('gemini-cached')).toEqual({ input: 500, cache_read: 1_500, output: 90, reasoning: 70 });
  });
});
