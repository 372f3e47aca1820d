/** Streaming per the spec's Events section, keep-alives, timeouts and clients that leave. */
import { request as undiciRequest } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { costMicro, money, sseEvents, startChatHarness, type ChatHarness } from './helpers/chat.ts';

let h: ChatHarness;
beforeAll(async () => {
  h = await startChatHarness({ STREAM_KEEPALIVE_MS: '100', NONSTREAM_KEEPALIVE_MS: '150', PROVIDER_TIMEOUT_MS: '600' });
});
afterAll(async () => h.close());
beforeEach(() => {
  h.openai.reset();
  h.deepseek.reset();
});

const hi = [{ role: 'user', content: 'Hello there' }];

describe('stream format', () => {
  for (const model of ['gpt-test', 'deepseek-test']) {
    it(`${model}: first chunk, content chunks, finish chunk, usage chunk, [DONE]; usage null before`, async () => {
      const { key, accountId } = await h.gw.account();
      const emulator = model === 'gpt-test' ? h.openai : h.deepseek;
      emulator.enqueue({ kind: 'text', text: 'one two three four', chunks: 4, usage: { input: 9, output: 4 } });
      const before = await money(h.gw, accountId);
      const r = await h.gw.api('/chat/completions', { key, body: { model, messages: hi, stream: true, stream_options: { include_usage: true } } });
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toContain('text/event-stream');
      expect(r.headers['x-ratelimit-limit']).toBe('600');
      const jobId = r.headers['x-service-job-id'];
      const events = sseEvents(r.text).filter((e) => e !== ':');
      expect(events[events.length - 1]).toBe('[DONE]');
      const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
      for (const chunk of chunks) {
        expect(chunk).toMatchObject({ id: `chatcmpl-${jobId}`, object: 'chat.completion.chunk', model, system_fingerprint: `svc-${model}` });
      }
      expect(chunks[0].choices[0]).toEqual({ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null });
      const usageChunk = chunks[chunks.length - 1];
      expect(usageChunk.choices).toEqual([]);
      expect(usageChunk.usage).toEqual({ prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 });
      const finishChunk = chunks[chunks.length - 2];
      expect(finishChunk.choices[0]).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' });
      for (const chunk of chunks.slice(0, -1)) expect(chunk.usage).toBeNull();
      const text = chunks.slice(1, -2).map((c) => c.choices[0].delta.content).join('');
      expect(text).toBe('one two three four');
      expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - costMicro(9, 4), held: 0 });
      // Usage is always asked of the provider.
      expect((emulator.requests[0]?.body as { stream_options: unknown }).stream_options).toEqual({ include_usage: true });
    });
  }

  it('without include_usage: no usage chunk and no usage field, but the provider is still asked and billing uses it', async () => {
    const { key, accountId } = await h.gw.account();
    h.openai.enqueue({ kind: 'text', text: 'abc', chunks: 2, usage: { input: 5, output: 2 } });
    const before = await money(h.gw, accountId);
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi, stream: true } });
    const chunks = sseEvents(r.text).filter((e) => e !== ':' && e !== '[DONE]').map((e) => JSON.parse(e));
    for (const chunk of chunks) {
      expect('usage' in chunk).toBe(false);
      expect(chunk.choices).toHaveLength(1);
    }
    expect((h.openai.requests[0]?.body as { stream_options: unknown }).stream_options).toEqual({ include_usage: true });
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - costMicro(5, 2), held: 0 });
  });

  it('streamed tool calls keep their index and id; arguments concatenate', async () => {
    const { key } = await h.gw.account();
    h.openai.enqueue({ kind: 'tool_calls', calls: [{ name: 'a', arguments: { x: 1 } }, { name: 'b', arguments: { y: 'two' } }] });
    const r = await h.gw.api('/chat/completions', {
      key, body: { model: 'gpt-test', messages: hi, stream: true, tools: [{ type: 'function', function: { name: 'a' } }, { type: 'function', function: { name: 'b' } }] },
    });
    const chunks = sseEvents(r.text).filter((e) => e !== ':' && e !== '[DONE]').map((e) => JSON.parse(e));
    const calls: Record<number, { id?: string; name?: string; args: string }> = {};
    for (const chunk of chunks) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        const slot = (calls[call.index] ??= { args: '' });
        if (call.id !== undefined) slot.id = call.id;
        if (call.function?.name !== undefined) slot.name = call.function.name;
        slot.args += call.function?.arguments ?? '';
      }
    }
    expect(Object.keys(calls)).toEqual(['0', '1']);
    expect(calls[0]?.name).toBe('a');
    expect(JSON.parse(calls[0]?.args ?? '')).toEqual({ x: 1 });
    expect(JSON.parse(calls[1]?.args ?? '')).toEqual({ y: 'two' });
    expect(calls[0]?.id).not.toBe(calls[1]?.id);
    expect(chunks.find((c) => c.choices[0]?.finish_reason !== null)?.choices[0].finish_reason).toBe('tool_calls');
  });

  it('instruction-mode JSON: fences stripped when streamed too, equal to the non-stream answer', async () => {
    const { key } = await h.gw.account();
    const fenced = '```json\n{"answer":"forty-two","n":42}\n```';
    const body = { model: 'deepseek-test', messages: hi, response_format: { type: 'json_schema', json_schema: { name: 'a', schema: { type: 'object' } } } };
    h.deepseek.enqueue({ kind: 'text', text: fenced, chunks: 9 });
    const plain = await h.gw.api('/chat/completions', { key, body });
    h.deepseek.enqueue({ kind: 'text', text: fenced, chunks: 9 });
    const streamed = await h.gw.api('/chat/completions', { key, body: { ...body, stream: true } });
    const chunks = sseEvents(streamed.text).filter((e) => e !== ':' && e !== '[DONE]').map((e) => JSON.parse(e));
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(plain.json.choices[0].message.content).toBe('{"answer":"forty-two","n":42}');
    expect(text).toBe(plain.json.choices[0].message.content);
  });

  it('json_object on a provider without a JSON mode (provider_2 newer model): fences stripped, streamed and not', async () => {
    const { key } = await h.gw.account();
    const fenced = '```json\n{"city":"Oslo"}\n```';
    const body = { model: 'claude-test', messages: [{ role: 'user', content: 'Oslo as JSON' }], response_format: { type: 'json_object' } };
    h.anthropic.enqueue({ kind: 'text', text: fenced });
    const plain = await h.gw.api('/chat/completions', { key, body });
    expect(plain.json.choices[0].message.content).toBe('{"city":"Oslo"}');
    h.anthropic.enqueue({ kind: 'text', text: fenced, chunks: 7 });
    const streamed = await h.gw.api('/chat/completions', { key, body: { ...body, stream: true } });
    const text = sseEvents(streamed.text).filter((e) => e !== ':' && e !== '[DONE]').map((e) => JSON.parse(e).choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('{"city":"Oslo"}');
  });

  it('a keep-alive comment is sent while the provider is quiet', async () => {
    const { key } = await h.gw.account();
    h.openai.enqueue({ kind: 'text', text: 'a b', chunks: 2 }, { chunkDelayMs: 350 });
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi, stream: true } });
    expect(r.text).toContain(': keep-alive\n\n');
    expect(r.text.endsWith('data: [DONE]\n\n')).toBe(true);
  });
});

describe('stream failures', () => {
  it('an error before the first byte is a normal HTTP error, refunded', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    // retry-after: 0, so the key does not rest into the next test (this harness waits 600 ms for a provider).
    h.openai.enqueue({ kind: 'error', status: 429, headers: { 'retry-after': '0' } });
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi, stream: true } });
    expect(r.status).toBe(429);
    expect(r.json.error.code).toBe('upstream_rate_limited');
    expect(await money(h.gw, accountId)).toEqual(before);
  });

  it('an error after the first byte is one data: {error} event with no [DONE], refunded', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    h.openai.enqueue({ kind: 'stream_error', afterChunks: 2, text: 'partial answer here' });
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi, stream: true } });
    expect(r.status).toBe(200);
    const events = sseEvents(r.text).filter((e) => e !== ':');
    expect(events).not.toContain('[DONE]');
    const last = JSON.parse(events[events.length - 1] as string);
    expect(last.error.code).toBe('upstream_error');
    expect(await money(h.gw, accountId)).toEqual(before);
  });

  it('a stream cut by the provider ends with an error event, refunded', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    h.openai.enqueue({ kind: 'cut', afterChunks: 2, text: 'partial answer here' });
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi, stream: true } });
    const events = sseEvents(r.text);
    expect(events).not.toContain('[DONE]');
    expect(JSON.parse(events[events.length - 1] as string).error.code).toBe('upstream_error');
    expect(await money(h.gw, accountId)).toEqual(before);
  });

  it('no answer within PROVIDER_TIMEOUT_MS → 504 provider_timeout, refunded', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    h.openai.enqueue({ kind: 'hang' });
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi, stream: true } });
    expect(r.status).toBe(504);
    expect(r.json.error.code).toBe('provider_timeout');
    expect(await money(h.gw, accountId)).toEqual(before);
  });

  it('the client closing mid-stream aborts the provider call, bills tokens so far and refunds the rest', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    h.openai.enqueue({ kind: 'text', text: 'word '.repeat(40), chunks: 40 }, { chunkDelayMs: 30 });
    const controller = new AbortController();
    const response = await undiciRequest(`${h.gw.url}/api/v1/chat/completions`, {
      method: 'POST', signal: controller.signal,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: hi, stream: true }),
    });
    let seen = '';
    try {
      for await (const piece of response.body) {
        seen += String(piece);
        if (seen.split('data: ').length > 6) controller.abort();
      }
    } catch {
      // aborted
    }
    await waitFor(async () => (await money(h.gw, accountId)).held === 0);
    const after = await money(h.gw, accountId);
    const charged = before.balance - after.balance;
    expect(charged).toBeGreaterThan(0);
    // Far less than the full answer (40 words) would cost at the hold's output price.
    expect(charged).toBeLessThan(costMicro(200, 60));
    const job = await h.gw.gateway.store.jobs.getJob(response.headers['x-service-job-id'] as string);
    expect(job?.status).toBe('canceled');
  });

  it('the client closing before the first chunk is recorded as 499 client_closed_request and refunded', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    h.openai.enqueue({ kind: 'text', text: 'late' }, { delayMs: 400 });
    const controller = new AbortController();
    const pending = undiciRequest(`${h.gw.url}/api/v1/chat/completions`, {
      method: 'POST', signal: controller.signal,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: hi, stream: true }),
    }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 100));
    controller.abort();
    await pending;
    await waitFor(async () => (await money(h.gw, accountId)).held === 0);
    expect(await money(h.gw, accountId)).toEqual(before);
    const ledger = (await h.gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger`)).json;
    const job = await h.gw.gateway.store.jobs.getJob(ledger[0].job_id);
    expect(job).toMatchObject({ status: 'canceled', errorCode: 'client_closed_request' });
  });
});

describe('non-stream slow answers and dropped clients', () => {
  it('after NONSTREAM_KEEPALIVE_MS the 200 and whitespace are sent; the JSON follows', async () => {
    const { key } = await h.gw.account();
    h.openai.enqueue({ kind: 'text', text: 'slow but fine' }, { delayMs: 400 });
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi } });
    expect(r.status).toBe(200);
    expect(r.text.startsWith(' ')).toBe(true);
    expect(JSON.parse(r.text).choices[0].message.content).toBe('slow but fine');
  });

  it('a failure after the keep-alive started arrives as an {error} body with HTTP 200, refunded', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    h.openai.enqueue({ kind: 'error', status: 500 }, { delayMs: 400 });
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi } });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text).error.code).toBe('upstream_error');
    expect(await money(h.gw, accountId)).toEqual(before);
  });

  it('a non-stream client that drops the connection does not stop the run: it is finished and billed', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    h.openai.enqueue({ kind: 'text', text: 'finished anyway', usage: { input: 20, output: 3 } }, { delayMs: 300 });
    const controller = new AbortController();
    const pending = undiciRequest(`${h.gw.url}/api/v1/chat/completions`, {
      method: 'POST', signal: controller.signal,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: hi }),
    }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 100));
    controller.abort();
    await pending;
    await waitFor(async () => (await money(h.gw, accountId)).held === 0);
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - costMicro(20, 3), held: 0 });
  });
});

describe('keys changed mid-run', () => {
  it('a key revoked while its request is in flight ends it with 401 before anything is charged', async () => {
    const { key, keyId, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    h.openai.enqueue({ kind: 'text', text: 'never seen' }, { delayMs: 400 });
    const pending = h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi } });
    await new Promise((r) => setTimeout(r, 100));
    await h.gw.admin('POST', `/admin/v1/keys/${keyId}/revoke`);
    const r = await pending;
    expect(r.status).toBe(401);
    expect(r.json.error).toMatchObject({ code: 'invalid_api_key', message: 'Invalid API key' });
    expect(await money(h.gw, accountId)).toEqual(before);
  });

  it('a key rotated mid-stream ends the stream with a final data: {error} event, refunded', async () => {
    const { key, keyId, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    h.openai.enqueue({ kind: 'text', text: 'word '.repeat(20), chunks: 20 }, { chunkDelayMs: 40 });
    const pending = h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi, stream: true } });
    await new Promise((r) => setTimeout(r, 200));
    await h.gw.admin('POST', `/admin/v1/keys/${keyId}/rotate`);
    const r = await pending;
    const events = sseEvents(r.text).filter((e) => e !== ':');
    expect(events).not.toContain('[DONE]');
    expect(JSON.parse(events[events.length - 1] as string).error.code).toBe('invalid_api_key');
    expect(await money(h.gw, accountId)).toEqual(before);
  });
});

async function waitFor(check: () => Promise<boolean>, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('condition not met in time');
}
