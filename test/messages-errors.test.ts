/**
 * The Messages route's errors and money, seen by the official `@anthropic-ai/sdk` and raw HTTP:
 * Anthropic's error envelope with our codes (so the SDK raises the right exception), the key in
 * `x-api-key` or as a bearer token, refunds on a provider failure and on a mid-stream error,
 * partial billing when the client closes a stream, provider_2's 400 passed through with its
 * message, the hold at the cache-write price, native cache writes billed, fallbacks.
 */
import Anthropic from '@anthropic-ai/sdk';
import { request as undiciRequest } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { costMicro, money, startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { CACHE_MODELS, charge, parts } from './helpers/prompt-cache.ts';
import { captureLog } from './helpers/log-capture.ts';
import { messagesErrorSchema } from '../src/openapi/messages-operations.ts';

let h: ChatHarness;
const log = captureLog();
beforeAll(async () => {
  h = await startChatHarness({ LOG_LEVEL: 'info' }, CACHE_MODELS, { logStream: log.stream });
});
afterAll(async () => h.close());
beforeEach(() => {
  h.anthropic.reset();
  h.openai.reset();
});

const client = (apiKey: string) => new Anthropic({ apiKey, baseURL: `${h.gw.url}/api`, maxRetries: 0 });
const hi = [{ role: 'user' as const, content: 'Hi' }];
const post = (path: string, headers: Record<string, string>, body: unknown) =>
  undiciRequest(`${h.gw.url}/api/v1${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

/** Polls (a bounded number of times) until the account holds nothing. */
async function settled(accountId: string): Promise<{ balance: number; held: number }> {
  for (let i = 0; i < 500; i++) {
    const m = await money(h.gw, accountId);
    if (m.held === 0) return m;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the hold was never closed');
}

async function refusal(sent: Promise<unknown>): Promise<{ status: number; body: unknown; error: unknown }> {
  const error = await sent.then(() => undefined, (e: unknown) => e);
  if (!(error instanceof Anthropic.APIError)) throw new Error(`expected an APIError, got ${String(error)}`);
  return { status: error.status ?? 0, body: error.error, error };
}

describe('the error envelope, as the SDK reads it', () => {
  it('401: an unknown key → AuthenticationError, authentication_error / invalid_api_key', async () => {
    const r = await refusal(client('svc_live_' + 'x'.repeat(40)).messages.create({ model: 'claude-test', max_tokens: 10, messages: hi }));
    expect(r.error).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(r.body).toEqual({ type: 'error', error: { type: 'authentication_error', message: 'Invalid API key', code: 'invalid_api_key' } });
    expect(messagesErrorSchema.safeParse(r.body).success).toBe(true);
  });

  it('x-api-key alone is a key; x-api-key and a different bearer key together → 401', async () => {
    const { key } = await h.gw.account();
    const other = (await h.gw.account()).key;
    const alone = await post('/messages', { 'x-api-key': key }, { model: 'claude-test', max_tokens: 10, messages: hi });
    expect(alone.statusCode).toBe(200);
    await alone.body.text();
    const both = await post('/messages', { 'x-api-key': key, authorization: `Bearer ${other}` }, { model: 'claude-test', max_tokens: 10, messages: hi });
    expect(both.statusCode).toBe(401);
    expect(await both.body.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error', code: 'invalid_api_key' } });
    const same = await post('/messages', { 'x-api-key': key, authorization: `Bearer ${key}` }, { model: 'claude-test', max_tokens: 10, messages: hi });
    expect(same.statusCode).toBe(200);
    await same.body.text();
  });

  it('402: no credits → billing_error / insufficient_credits, nothing reaches the provider', async () => {
    const { key } = await h.gw.account({ credits: 0 });
    const r = await refusal(client(key).messages.create({ model: 'claude-test', max_tokens: 100, messages: hi }));
    expect(r.status).toBe(402);
    expect(r.body).toMatchObject({ type: 'error', error: { type: 'billing_error', code: 'insufficient_credits' } });
    expect(h.anthropic.requests).toHaveLength(0);
  });

  it('403: a key without the chat scope → PermissionDeniedError, permission_error / insufficient_scope', async () => {
    const { key } = await h.gw.account({ key: { scopes: ['read'] } });
    const r = await refusal(client(key).messages.create({ model: 'claude-test', max_tokens: 10, messages: hi }));
    expect(r.error).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect(r.body).toMatchObject({ type: 'error', error: { type: 'permission_error', code: 'insufficient_scope' } });
  });

  it('429: the 61st request of a 60-rpm key (count_tokens counts too) → RateLimitError, rate_limit_error / rate_limit_exceeded', async () => {
    const { key } = await h.gw.account({ key: { requests_per_minute: 60 } });
    for (let i = 0; i < 60; i++) await client(key).messages.countTokens({ model: 'claude-test', messages: hi });
    const { error, body } = await refusal(client(key).messages.create({ model: 'claude-test', max_tokens: 10, messages: hi }));
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    expect(body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', code: 'rate_limit_exceeded' } });
    expect((error as InstanceType<typeof Anthropic.APIError>).headers?.get('x-ratelimit-remaining')).toBe('0');
  });

  it('400: a missing max_tokens, a server tool, a temperature over 1 → BadRequestError naming the field', async () => {
    const { key } = await h.gw.account();
    const noMax = await post('/messages', { 'x-api-key': key }, { model: 'claude-test', messages: hi });
    expect(noMax.statusCode).toBe(400);
    expect(await noMax.body.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'invalid_request', param: 'max_tokens' } });
    const tool = await refusal(client(key).messages.create({ model: 'gpt-test', max_tokens: 10, messages: hi, tools: [{ type: 'web_search_20250305', name: 'web_search' }] }));
    expect(tool.error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(tool.body).toMatchObject({ error: { code: 'invalid_request', param: 'tools[0].type' } });
    const hot = await post('/messages', { 'x-api-key': key }, { model: 'gpt-test', max_tokens: 10, messages: hi, temperature: 1.5 });
    expect(hot.statusCode).toBe(400);
    expect(await hot.body.json()).toMatchObject({ error: { code: 'invalid_request', param: 'temperature' } });
  });

  it('404: an unknown model → NotFoundError, not_found_error / model_not_found', async () => {
    const { key } = await h.gw.account();
    const r = await refusal(client(key).messages.create({ model: 'no-such-model', max_tokens: 10, messages: hi }));
    expect(r.error).toBeInstanceOf(Anthropic.NotFoundError);
    expect(r.body).toMatchObject({ error: { type: 'not_found_error', code: 'model_not_found' } });
  });
});

describe('provider_2 natively', () => {
  it("provider_2's 400 reaches the client with its message (provider_rejected_request), and costs nothing", async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    const message = 'context_management: Extra inputs are not permitted';
    h.anthropic.enqueue({ kind: 'error', status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message } } });
    const r = await refusal(client(key).messages.create({ model: 'claude-test', max_tokens: 10, messages: hi }));
    expect(r.error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(r.body).toEqual({ type: 'error', error: { type: 'invalid_request_error', message, code: 'provider_rejected_request' } });
    expect(await settled(accountId)).toEqual(before);
  });

  it('the path with ?beta=true, the anthropic-beta list and version forwarded', async () => {
    const { key } = await h.gw.account();
    const beta = 'claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27';
    const r = await undiciRequest(`${h.gw.url}/api/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01', 'anthropic-beta': beta },
      body: JSON.stringify({ model: 'claude-test', max_tokens: 32_000, messages: hi, metadata: { user_id: JSON.stringify({ device_id: 'd', session_id: 's' }) } }),
    });
    expect(r.statusCode).toBe(200);
    expect(await r.body.json()).toMatchObject({ type: 'message', model: 'claude-test' });
    const sent = h.anthropic.requests[0];
    expect(sent?.headers['anthropic-beta']).toBe(beta);
    expect(sent?.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent?.headers['x-api-key']).toBe(h.anthropic.apiKey);
    expect(sent?.body).toMatchObject({ model: 'claude-sonnet-5-5-test', max_tokens: 32_000 });
  });

  it('unknown fields and sampling the model does not take are dropped and named in X-Service-Ignored-Params', async () => {
    const { key } = await h.gw.account();
    const r = await post('/messages', { 'x-api-key': key }, { model: 'claude-test', max_tokens: 10, messages: hi, temperature: 0.5, frobnicate: true, models: ['gpt-test'] });
    expect(r.statusCode).toBe(200);
    await r.body.text();
    expect(r.headers['x-service-ignored-params']).toBe('frobnicate, temperature');
    const sent = h.anthropic.requests[0]?.body as Record<string, unknown>;
    expect(Object.keys(sent)).toEqual(['model', 'max_tokens', 'messages']);
  });

  it('the hold prices the input at the 1-hour write price when cache_control asks for it; native cache writes are billed at their prices', async () => {
    const { key, accountId } = await h.gw.account();
    const body = { model: 'claude-cached', max_tokens: 1_000, system: [{ type: 'text' as const, text: 'You are careful. '.repeat(50), cache_control: { type: 'ephemeral' as const, ttl: '1h' as const } }], messages: hi };
    const { input_tokens: estimate } = await client(key).messages.countTokens({ model: body.model, system: body.system, messages: hi });
    const p = parts({ uncached: 3, write5m: 100, write1h: 700, read: 50, output: 20 });
    h.anthropic.enqueue({ kind: 'text', text: 'Noted.', usage: { input: p.uncached, cacheWrite: p.write5m, cacheWrite1h: p.write1h, cacheRead: p.read, output: p.output } });
    const before = await money(h.gw, accountId);
    const message = await client(key).messages.create(body);
    expect(message.usage).toMatchObject({ input_tokens: 3, cache_creation_input_tokens: 800, cache_read_input_tokens: 50, output_tokens: 20 });
    expect(before.balance - (await money(h.gw, accountId)).balance).toBe(charge(p, { write5m: true, write1h: true }));
    const ledger = await h.gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger`);
    const hold = (ledger.json as { kind: string; credits: number }[]).find((e) => e.kind === 'hold');
    // At USD 2.5 per 1M (1-hour writes) an input token holds 250 micro-credits; an output token (USD 10 per 1M) 1,000.
    expect(Math.abs(Math.round((hold?.credits ?? 0) * 1e6))).toBe(estimate * 250 + 1_000 * 1_000);
  });
});

describe('refunds and partial billing', () => {
  it('a provider failure → 502 api_error / upstream_error, refunded in full', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    h.openai.enqueue({ kind: 'error', status: 500 });
    const r = await refusal(client(key).messages.create({ model: 'gpt-test', max_tokens: 100, messages: hi }));
    expect(r.error).toBeInstanceOf(Anthropic.InternalServerError);
    expect(r.body).toMatchObject({ type: 'error', error: { type: 'api_error', code: 'upstream_error' } });
    expect(await settled(accountId)).toEqual(before);
  });

  it.each([['claude-test', 'anthropic'], ['gpt-test', 'openai']] as const)('%s: an error mid-stream → one event: error and nothing after it, refunded in full', async (model, emulator) => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    h[emulator].enqueue({ kind: 'stream_error', afterChunks: 2, text: 'one two three four five six' });
    const r = await post('/messages', { 'x-api-key': key }, { model, max_tokens: 100, messages: hi, stream: true });
    const text = await r.body.text();
    expect(r.statusCode).toBe(200);
    const events = text.split('\n\n').filter((e) => e !== '');
    const last = events[events.length - 1] ?? '';
    expect(last.startsWith('event: error\ndata: ')).toBe(true);
    expect(JSON.parse(last.slice('event: error\ndata: '.length))).toMatchObject({ type: 'error', error: { type: 'api_error', code: 'upstream_error' } });
    expect(text.split('event: error').length).toBe(2);
    expect(await settled(accountId)).toEqual(before);
    // The SDK raises it.
    h[emulator].enqueue({ kind: 'stream_error', afterChunks: 2, text: 'one two three four five six' });
    await expect(client(key).messages.stream({ model, max_tokens: 100, messages: hi }).finalMessage()).rejects.toBeInstanceOf(Anthropic.APIError);
  });

  /** Streams 40 words slowly and closes after a few; the money moved. */
  async function closedEarly(model: string): Promise<{ charged: number; jobId: string }> {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    const controller = new AbortController();
    const response = await undiciRequest(`${h.gw.url}/api/v1/messages`, {
      method: 'POST', signal: controller.signal,
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ model, max_tokens: 1000, messages: hi, stream: true }),
    });
    let seen = '';
    try {
      for await (const piece of response.body) {
        seen += String(piece);
        if (seen.split('text_delta').length > 4) controller.abort();
      }
    } catch {
      // aborted
    }
    const after = await settled(accountId);
    return { charged: before.balance - after.balance, jobId: response.headers['x-service-job-id'] as string };
  }

  it('the client closing a translated stream bills the output so far and refunds the rest', async () => {
    h.gemini.enqueue({ kind: 'text', text: 'word '.repeat(40), chunks: 40 }, { chunkDelayMs: 30 });
    const { charged, jobId } = await closedEarly('gemini-test');
    expect(charged).toBeGreaterThan(0);
    expect(charged).toBeLessThan(costMicro(100, 60));
    expect((await h.gw.gateway.store.jobs.getJob(jobId))?.status).toBe('canceled');
  });

  it("the client closing a provider_2 stream bills message_start's input counts (cache reads apart) plus the output so far", async () => {
    h.gemini.reset();
    h.anthropic.enqueue({ kind: 'text', text: 'word '.repeat(40), chunks: 40, usage: { input: 10, cacheRead: 4_000, output: 40 } }, { chunkDelayMs: 30 });
    const { charged, jobId } = await closedEarly('claude-cached');
    // 10 uncached at 125, 4,000 read at 12.5, then a few output tokens at 1,000 each (never all 40).
    const input = 10 * 125 + 4_000 * 12.5;
    expect(charged).toBeGreaterThan(input);
    expect(charged).toBeLessThan(input + 40 * 1_000);
    expect((await h.gw.gateway.store.jobs.getJob(jobId))?.status).toBe('canceled');
  });
});

describe('fallbacks', () => {
  it('models: a provider_2 model that fails runs the next model, translated; billed at its prices, model echoed', async () => {
    const { key } = await h.gw.account();
    h.anthropic.enqueue({ kind: 'error', status: 529 });
    h.openai.enqueue({ kind: 'text', text: 'From the fallback.' });
    const { data, response } = await client(key).messages.create({ model: 'claude-test', max_tokens: 50, messages: hi, models: ['gpt-test'] } as Anthropic.MessageCreateParamsNonStreaming).withResponse();
    expect(data.content).toEqual([{ type: 'text', text: 'From the fallback.' }]);
    expect(data.model).toBe('claude-test');
    const job = await h.gw.gateway.store.jobs.getJob(response.headers.get('x-service-job-id') as string);
    expect(job?.model).toBe('gpt-test');
  });
});

describe('records', () => {
  it('the request log line names the route, job and key (never the key itself); the job log shows kind messages; GET /jobs/{id} answers a chat key', async () => {
    const { key, keyId, accountId } = await h.gw.account();
    h.anthropic.enqueue({ kind: 'text', text: 'Logged.', usage: { input: 5, output: 2 } });
    const { response } = await client(key).messages.create({ model: 'claude-test', max_tokens: 50, messages: hi }).withResponse();
    const jobId = response.headers.get('x-service-job-id') as string;
    let line = log.requestLines().find((l) => l.job_id === jobId);
    for (let i = 0; i < 200 && line === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      line = log.requestLines().find((l) => l.job_id === jobId);
    }
    expect(line).toMatchObject({ route: 'POST /api/v1/messages', status: 200, key_id: keyId, model: 'claude-test', input_tokens: 5, output_tokens: 2 });
    expect(log.text()).not.toContain(key);
    const jobs = await h.gw.admin('GET', `/admin/v1/jobs?account_id=${accountId}`);
    expect(jobs.json.data.find((j: { id: string }) => j.id === jobId)).toMatchObject({ kind: 'messages', model: 'claude-test', status: 'succeeded' });
    const job = await h.gw.api(`/jobs/${jobId}`, { key });
    expect(job.json).toMatchObject({ id: jobId, kind: 'messages', status: 'succeeded' });
  });
});
