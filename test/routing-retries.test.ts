/**
 * Retries against the emulators (DECISIONS.md "Routing"): a 429, 5xx or broken connection is
 * tried again at most UPSTREAM_RETRIES times before the first byte reaches the client, billed
 * once; a refusal of the request itself (400-class) and a failure inside a started stream are
 * never tried again. Attempts are counted at the emulator; money is read before and after.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chatGatewayEnv, costMicro, money, startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { ADMIN_TOKEN, http, startGateway, type TestGateway } from './helpers/gateway.ts';
import { captureLog } from './helpers/log-capture.ts';

const hi = [{ role: 'user', content: 'Hello there' }];
const RETRIES = 2;

let h: ChatHarness;
let gw: TestGateway;
const log = captureLog();

beforeAll(async () => {
  h = await startChatHarness();
  // A gateway of its own on the harness's emulators, with retries on (the harness's runs one attempt).
  gw = await startGateway({ ...chatGatewayEnv(h), UPSTREAM_RETRIES: String(RETRIES), UPSTREAM_BACKOFF_MS: '1', LOG_LEVEL: 'info', METRICS_TOKEN: ADMIN_TOKEN }, { logStream: log.stream });
});
afterAll(async () => {
  await gw.close();
  await h.close();
});
beforeEach(() => {
  for (const e of [h.openai, h.deepseek, h.anthropic, h.gemini]) e.reset();
});

async function chat(key: string, body: Record<string, unknown>) {
  return gw.api('/chat/completions', { key, body });
}

async function metricsText(): Promise<string> {
  return (await http(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text;
}

function counter(text: string, name: string, labels: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

describe('a failure then a success', () => {
  it('a provider 500, then an answer → 200, billed once at the answer usage; 2 attempts at the provider', async () => {
    const { key, accountId } = await gw.account();
    const before = await money(gw, accountId);
    const retriesBefore = counter(await metricsText(), 'gateway_upstream_retries_total', 'provider="provider_1",reason="failed"');
    h.openai.failFirst(1, 500);
    h.openai.enqueue({ kind: 'text', text: 'Recovered', usage: { input: 11, output: 4 } });
    const r = await chat(key, { model: 'gpt-test', messages: hi });
    expect(r.status).toBe(200);
    expect(r.json.choices[0].message.content).toBe('Recovered');
    expect(h.openai.requests).toHaveLength(2);
    expect(await money(gw, accountId)).toEqual({ balance: before.balance - costMicro(11, 4), held: 0 });
    const ledger = (await gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger`)).json as { kind: string }[];
    expect(ledger.filter((e) => e.kind === 'settle')).toHaveLength(1);
    const job = await gw.gateway.store.jobs.getJob(r.headers['x-service-job-id'] as string);
    expect(job?.attempts).toEqual([
      expect.objectContaining({ model: 'gpt-test', provider: 'provider_1', deployment: 'gpt-test-2026-01-01', key: 0, status: 500, code: 'upstream_error', retry: 'failed' }),
      expect.objectContaining({ model: 'gpt-test', provider: 'provider_1', status: 200 }),
    ]);
    expect(job?.attempts?.[1]).not.toHaveProperty('retry');
    expect(counter(await metricsText(), 'gateway_upstream_retries_total', 'provider="provider_1",reason="failed"')).toBe(retriesBefore + 1);
    // The admin request log shows them too.
    const listed = (await gw.admin('GET', `/admin/v1/jobs?account_id=${accountId}`)).json.data as { id: string; attempts: { status: number }[] }[];
    expect(listed.find((j) => j.id === r.headers['x-service-job-id'])?.attempts.map((a) => a.status)).toEqual([500, 200]);
    // The request's log line carries the attempts (never a key).
    const line = log.requestLines().find((l) => l.job_id === r.headers['x-service-job-id']);
    expect(line?.attempts).toHaveLength(2);
    expect(JSON.stringify(line)).not.toContain(h.openai.apiKey);
  });

  it('a provider 429 (retry-after 0), then an answer → 200 billed once; a stream too', async () => {
    const { key, accountId } = await gw.account();
    const before = await money(gw, accountId);
    h.anthropic.failFirst(1, 429, { 'retry-after': '0' });
    h.anthropic.enqueue({ kind: 'text', text: 'After the limit', usage: { input: 7, output: 3 } });
    const r = await chat(key, { model: 'claude-test', messages: hi });
    expect(r.status).toBe(200);
    expect(h.anthropic.requests).toHaveLength(2);
    expect(await money(gw, accountId)).toEqual({ balance: before.balance - costMicro(7, 3), held: 0 });

    h.anthropic.failFirst(1, 429, { 'retry-after': '0' });
    h.anthropic.enqueue({ kind: 'text', text: 'one two three', chunks: 3, usage: { input: 7, output: 3 } });
    const streamed = await chat(key, { model: 'claude-test', messages: hi, stream: true });
    expect(streamed.status).toBe(200);
    expect(streamed.text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(h.anthropic.requests).toHaveLength(4);
    expect(await money(gw, accountId)).toEqual({ balance: before.balance - 2 * costMicro(7, 3), held: 0 });
  });

  it("a 429 whose key rests (retry-after 1 s, one key): the retry waits for the key within the provider wait → 200", async () => {
    const { key, accountId } = await gw.account();
    const before = await money(gw, accountId);
    h.deepseek.failFirst(1, 429, { 'retry-after': '1' });
    h.deepseek.enqueue({ kind: 'text', text: 'Waited', usage: { input: 5, output: 2 } });
    const r = await chat(key, { model: 'deepseek-test', messages: hi });
    expect(r.status).toBe(200);
    expect(h.deepseek.requests).toHaveLength(2);
    expect(await money(gw, accountId)).toEqual({ balance: before.balance - costMicro(5, 2), held: 0 });
  });

  it('a connection cut in the middle of a JSON answer (before any byte reached the client) is tried again → 200', async () => {
    const { key, accountId } = await gw.account();
    const before = await money(gw, accountId);
    h.gemini.enqueue({ kind: 'cut', afterChunks: 0 });
    h.gemini.enqueue({ kind: 'text', text: 'Whole', usage: { input: 6, output: 2 } });
    const r = await chat(key, { model: 'gemini-test', messages: hi });
    expect(r.status).toBe(200);
    expect(h.gemini.requests).toHaveLength(2);
    expect(await money(gw, accountId)).toEqual({ balance: before.balance - costMicro(6, 2), held: 0 });
  });
});

describe('what is never retried, and the budget', () => {
  it(`more failures than the budget → 502 upstream_error, refunded in full, exactly 1 + UPSTREAM_RETRIES (${1 + RETRIES}) attempts`, async () => {
    const { key, accountId } = await gw.account();
    const before = await money(gw, accountId);
    h.openai.failFirst(5, 503);
    const r = await chat(key, { model: 'gpt-test', messages: hi });
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe('upstream_error');
    expect(h.openai.requests).toHaveLength(1 + RETRIES);
    expect(await money(gw, accountId)).toEqual(before);
    const job = await gw.gateway.store.jobs.getJob(r.headers['x-service-job-id'] as string);
    expect(job?.status).toBe('failed');
    expect(job?.attempts?.map((a) => a.status)).toEqual([503, 503, 503]);
    expect(job?.attempts?.map((a) => a.retry)).toEqual(['failed', 'failed', undefined]);
  });

  it('more 429s than the budget → 429 upstream_rate_limited, refunded, 1 + UPSTREAM_RETRIES attempts', async () => {
    const { key, accountId } = await gw.account();
    const before = await money(gw, accountId);
    h.openai.failFirst(5, 429, { 'retry-after': '0' });
    const r = await chat(key, { model: 'gpt-test', messages: hi, stream: true });
    expect(r.status).toBe(429);
    expect(r.json.error.code).toBe('upstream_rate_limited');
    expect(h.openai.requests).toHaveLength(1 + RETRIES);
    expect(await money(gw, accountId)).toEqual(before);
  });

  it('a provider 400 (the request refused) is answered at once: 1 attempt, refunded', async () => {
    const { key, accountId } = await gw.account();
    const before = await money(gw, accountId);
    h.openai.failFirst(1, 400);
    const r = await chat(key, { model: 'gpt-test', messages: hi });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('provider_rejected_request');
    expect(h.openai.requests).toHaveLength(1);
    expect(await money(gw, accountId)).toEqual(before);
  });

  it('a 422 and a 413 neither', async () => {
    const { key } = await gw.account();
    for (const status of [422, 413]) {
      h.anthropic.reset();
      h.anthropic.failFirst(1, status);
      const r = await chat(key, { model: 'claude-test', messages: hi });
      expect(r.status).toBe(400);
      expect(h.anthropic.requests).toHaveLength(1);
    }
  });

  it('a failure inside a started stream is never retried: the error event ends it, 1 attempt, refunded', async () => {
    const { key, accountId } = await gw.account();
    const before = await money(gw, accountId);
    h.openai.enqueue({ kind: 'stream_error', afterChunks: 2, text: 'one two three four' });
    const r = await chat(key, { model: 'gpt-test', messages: hi, stream: true });
    expect(r.status).toBe(200);
    expect(r.text).toContain('"upstream_error"');
    expect(r.text).not.toContain('[DONE]');
    expect(h.openai.requests).toHaveLength(1);
    expect(await money(gw, accountId)).toEqual(before);
  });

  it('a stream cut after its first chunks is never retried either', async () => {
    const { key, accountId } = await gw.account();
    const before = await money(gw, accountId);
    h.deepseek.enqueue({ kind: 'cut', afterChunks: 2, text: 'one two three four' });
    const r = await chat(key, { model: 'deepseek-test', messages: hi, stream: true });
    expect(r.status).toBe(200);
    expect(r.text).toContain('"upstream_error"');
    expect(h.deepseek.requests).toHaveLength(1);
    expect(await money(gw, accountId)).toEqual(before);
  });
});
