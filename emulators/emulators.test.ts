import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator, type EmulatorKind } from './index.ts';

// ---------------------------------------------------------------------------
// helpers

interface SseEvent {
  event?: string;
  data: string;
}

/** Parses an SSE body (LF or CRLF); comments come back as `{event: ':comment', data}`. */
function parseSse(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (block.trim() === '') continue;
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith(':')) out.push({ event: ':comment', data: line.slice(1).trim() });
      else if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    if (data.length > 0) out.push({ event, data: data.join('\n') });
  }
  return out;
}

type Json = Record<string, unknown>;
const j = (s: string): Json => JSON.parse(s) as Json;
// Test-side access into parsed JSON without any-typing.
const at = (v: unknown, ...path: (string | number)[]): unknown => path.reduce<unknown>((o, k) => (o as Record<string | number, unknown> | undefined)?.[k], v);

interface Call {
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

const KEY = 'emu-key';

function openaiCall(e: Emulator, body: Json, key = KEY): Call {
  return { url: `${e.baseUrl}/chat/completions`, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body };
}
function anthropicCall(e: Emulator, body: Json, key = KEY, version: string | null = '2023-06-01'): Call {
  const headers: Record<string, string> = { 'x-api-key': key, 'content-type': 'application/json' };
  if (version !== null) headers['anthropic-version'] = version;
  return { url: `${e.baseUrl}/v1/messages`, headers, body };
}
function geminiCall(e: Emulator, model: string, body: Json, stream = false, key = KEY): Call {
  const op = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
  return { url: `${e.baseUrl}/v1beta/models/${model}:${op}`, headers: { 'x-goog-api-key': key, 'content-type': 'application/json' }, body };
}

async function send(c: Call): Promise<{ status: number; headers: Headers; text: string }> {
  const r = await fetch(c.url, { method: 'POST', headers: c.headers, body: typeof c.body === 'string' ? c.body : JSON.stringify(c.body) });
  return { status: r.status, headers: r.headers, text: await r.text() };
}

const userMsg = (text: string): Json => ({ role: 'user', content: text });

const emus = {} as Record<EmulatorKind, Emulator>;
beforeAll(async () => {
  for (const k of ['openai', 'anthropic', 'gemini', 'deepseek'] as const) emus[k] = await startEmulator(k);
});
afterAll(async () => {
  await Promise.all(Object.values(emus).map((e) => e.close()));
});
afterEach(() => {
  for (const e of Object.values(emus)) e.reset();
});

// ---------------------------------------------------------------------------

describe('common API', () => {
  it('uses the DECISIONS.md base URLs and default key', () => {
    expect(emus.openai.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(emus.anthropic.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(emus.gemini.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(emus.deepseek.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (const e of Object.values(emus)) expect(e.apiKey).toBe('emu-key');
  });

  it('records every request in order, rejected ones included', async () => {
    const e = emus.openai;
    const requests = e.requests;
    await send(openaiCall(e, { model: 'gpt-4o', messages: [userMsg('one')] }));
    await send(openaiCall(e, { model: 'gpt-4o', messages: [userMsg('two')] }, 'wrong'));
    expect(e.requests).toBe(requests);
    expect(e.requests).toHaveLength(2);
    expect(e.requests[0]?.method).toBe('POST');
    expect(e.requests[0]?.path).toBe('/v1/chat/completions');
    expect(e.requests[0]?.headers.authorization).toBe('Bearer emu-key');
    expect(at(e.requests[0]?.body, 'messages', 0, 'content')).toBe('one');
    expect(at(e.requests[1]?.body, 'messages', 0, 'content')).toBe('two');
    e.reset();
    expect(requests).toHaveLength(0);
  });

  it('queues scenarios FIFO, then falls back to the default; setDefault and reset', async () => {
    const e = emus.openai;
    e.enqueue({ kind: 'text', text: 'first' });
    e.enqueue({ kind: 'text', text: 'second' });
    const texts: unknown[] = [];
    for (let i = 0; i < 3; i++) texts.push(at(j((await send(openaiCall(e, { model: 'm', messages: [userMsg('hi')] }))).text), 'choices', 0, 'message', 'content'));
    expect(texts).toEqual(['first', 'second', 'Hello from openai emulator. You said: hi']);
    e.setDefault({ kind: 'text', text: 'always' });
    expect(at(j((await send(openaiCall(e, { model: 'm', messages: [userMsg('hi')] }))).text), 'choices', 0, 'message', 'content')).toBe('always');
    e.setDefault(null);
    expect(at(j((await send(openaiCall(e, { model: 'm', messages: [userMsg('hi')] }))).text), 'choices', 0, 'message', 'content')).toBe('Hello from openai emulator. You said: hi');
  });

  it('a request rejected by validation does not consume the queued scenario', async () => {
    const e = emus.openai;
    e.enqueue({ kind: 'text', text: 'kept' });
    expect((await send(openaiCall(e, { messages: [userMsg('x')] }))).status).toBe(400);
    expect(at(j((await send(openaiCall(e, { model: 'm', messages: [userMsg('x')] }))).text), 'choices', 0, 'message', 'content')).toBe('kept');
  });

  it.each(['openai', 'anthropic', 'gemini', 'deepseek'] as const)('%s: hang never answers, and close() ends it', async (kind) => {
    const e = await startEmulator(kind);
    e.enqueue({ kind: 'hang' });
    const call =
      kind === 'anthropic'
        ? anthropicCall(e, { model: 'claude-x', max_tokens: 10, messages: [userMsg('hi')] })
        : kind === 'gemini'
          ? geminiCall(e, 'gemini-2.5-flash', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] })
          : openaiCall(e, { model: 'm', messages: [userMsg('hi')] });
    let settled = false;
    const p = send(call).then(
      () => 'answered',
      () => 'failed',
    );
    void p.then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 150));
    expect(settled).toBe(false);
    expect(e.requests).toHaveLength(1);
    const t0 = Date.now();
    await e.close();
    expect(await p).toBe('failed');
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('delayMs holds the first byte', async () => {
    const e = emus.openai;
    e.enqueue({ kind: 'text', text: 'slow' }, { delayMs: 200 });
    const t0 = Date.now();
    const r = await send(openaiCall(e, { model: 'm', messages: [userMsg('x')] }));
    expect(r.status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
  });

  it('chunkDelayMs spaces stream events (flushed one by one)', async () => {
    const e = emus.openai;
    e.enqueue({ kind: 'text', text: 'abcdef', chunks: 3 }, { chunkDelayMs: 60 });
    const r = await fetch(`${e.baseUrl}/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer emu-key' }, body: JSON.stringify({ model: 'm', stream: true, messages: [userMsg('x')] }) });
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    const times: number[] = [];
    const t0 = Date.now();
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
      times.push(Date.now() - t0);
    }
    expect(times.length).toBeGreaterThanOrEqual(4);
    expect((times[times.length - 1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(200);
  });
});

function streamCall(kind: EmulatorKind, e: Emulator): Call {
  if (kind === 'anthropic') return anthropicCall(e, { model: 'claude-x', max_tokens: 10, stream: true, messages: [userMsg('hi')] });
  if (kind === 'gemini') return geminiCall(e, 'gemini-2.5-flash', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }, true);
  return openaiCall(e, { model: 'm', stream: true, messages: [userMsg('hi')] });
}

describe('faults common to every kind', () => {
  it.each(['openai', 'anthropic', 'gemini', 'deepseek'] as const)('%s: cut after N chunks delivers them, then the connection breaks', async (kind) => {
    const e = emus[kind];
    e.enqueue({ kind: 'cut', afterChunks: 3, text: 'AAAA-BBBB-CCCC-DDDD' }, { chunkDelayMs: 5 });
    const c = streamCall(kind, e);
    const r = await fetch(c.url, { method: 'POST', headers: c.headers, body: JSON.stringify(c.body) });
    expect(r.status).toBe(200);
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    let got = '';
    let failed = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        got += new TextDecoder().decode(value);
      }
    } catch {
      failed = true;
    }
    expect(failed).toBe(true);
    // The first three of 19 one-character pieces arrived, nothing after.
    expect(got).toMatch(/"(content|text)":"A"/);
    expect(got).not.toMatch(/"(content|text)":"[-BCD]"/);
  });

  it.each(['openai', 'anthropic', 'gemini', 'deepseek'] as const)('%s: afterChunks 0 cut still sends the head, then breaks', async (kind) => {
    const e = emus[kind];
    e.enqueue({ kind: 'cut', afterChunks: 0 });
    const c = streamCall(kind, e);
    const r = await fetch(c.url, { method: 'POST', headers: c.headers, body: JSON.stringify(c.body) });
    expect(r.status).toBe(200);
    await expect(r.text()).rejects.toThrow();
  });

  it('control routes (used by serve.ts) enqueue, set the default, list and reset', async () => {
    const e = await startEmulator('openai', { control: true });
    const ctl = (path: string, body?: unknown) => fetch(`${new URL(e.baseUrl).origin}/__emulator/${path}`, { method: body === undefined ? 'GET' : 'POST', body: body === undefined ? undefined : JSON.stringify(body) });
    expect((await ctl('enqueue', { scenario: { kind: 'text', text: 'queued' } })).status).toBe(200);
    expect((await ctl('default', { scenario: { kind: 'text', text: 'dflt' }, options: {} })).status).toBe(200);
    const texts: unknown[] = [];
    for (let i = 0; i < 2; i++) texts.push(at(j((await send(openaiCall(e, { model: 'm', messages: [userMsg('x')] }))).text), 'choices', 0, 'message', 'content'));
    expect(texts).toEqual(['queued', 'dflt']);
    expect(at(await (await ctl('requests')).json(), 'requests')).toHaveLength(2);
    await ctl('reset', {});
    expect(e.requests).toHaveLength(0);
    await e.close();
  });
});

// ---------------------------------------------------------------------------

describe('openai (provider_1)', () => {
  it('answers a non-stream request with the default text and computed usage', async () => {
    const r = await send(openaiCall(emus.openai, { model: 'gpt-4o', messages: [{ role: 'system', content: 'Be brief.' }, userMsg('Hello there')] }));
    expect(r.status).toBe(200);
    expect(r.headers.get('x-request-id')).toMatch(/^req_/);
    const b = j(r.text);
    expect(b.object).toBe('chat.completion');
    expect(b.id).toMatch(/^chatcmpl-/);
    expect(b.model).toBe('gpt-4o');
    expect(at(b, 'choices', 0, 'message')).toEqual({ role: 'assistant', content: 'Hello from openai emulator. You said: Hello there', refusal: null, annotations: [] });
    expect(at(b, 'choices', 0, 'finish_reason')).toBe('stop');
    const text = 'Hello from openai emulator. You said: Hello there';
    expect(at(b, 'usage', 'prompt_tokens')).toBe(Math.ceil('Be brief.Hello there'.length / 4));
    expect(at(b, 'usage', 'completion_tokens')).toBe(Math.ceil(text.length / 4));
    expect(at(b, 'usage', 'total_tokens')).toBe((at(b, 'usage', 'prompt_tokens') as number) + (at(b, 'usage', 'completion_tokens') as number));
  });

  it('truncates the echoed user text to 200 characters', async () => {
    const long = 'x'.repeat(500);
    const b = j((await send(openaiCall(emus.openai, { model: 'm', messages: [userMsg(long)] }))).text);
    expect(at(b, 'choices', 0, 'message', 'content')).toBe(`Hello from openai emulator. You said: ${'x'.repeat(200)}`);
  });

  it('streams the default in ~20 chunks: role, content, finish, [DONE]; usage chunk only with include_usage', async () => {
    const e = emus.openai;
    const plain = await send(openaiCall(e, { model: 'gpt-4o', stream: true, messages: [userMsg('Stream me something nice please')] }));
    expect(plain.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const ev = parseSse(plain.text);
    expect(ev.every((x) => x.event === undefined)).toBe(true);
    expect(ev[ev.length - 1]?.data).toBe('[DONE]');
    const chunks = ev.slice(0, -1).map((x) => j(x.data));
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && !('usage' in c))).toBe(true);
    expect(at(chunks[0], 'choices', 0, 'delta')).toEqual({ role: 'assistant', content: '', refusal: null });
    const content = chunks.slice(1, -1).map((c) => at(c, 'choices', 0, 'delta', 'content'));
    expect(content).toHaveLength(20);
    expect(content.join('')).toBe('Hello from openai emulator. You said: Stream me something nice please');
    const last = chunks[chunks.length - 1];
    expect(at(last, 'choices', 0, 'delta')).toEqual({});
    expect(at(last, 'choices', 0, 'finish_reason')).toBe('stop');

    const withUsage = parseSse((await send(openaiCall(e, { model: 'gpt-4o', stream: true, stream_options: { include_usage: true }, messages: [userMsg('hi')] }))).text);
    const cs = withUsage.slice(0, -1).map((x) => j(x.data));
    const usageChunk = cs[cs.length - 1];
    expect(at(usageChunk, 'choices')).toEqual([]);
    expect(at(usageChunk, 'usage', 'prompt_tokens')).toBe(1);
    expect(cs.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    expect(at(cs[cs.length - 2], 'choices', 0, 'finish_reason')).toBe('stop');
  });

  it('streams tool calls: a head delta with id/name/"" then argument fragments, per index', async () => {
    const e = emus.openai;
    e.enqueue({ kind: 'tool_calls', calls: [{ name: 'get_weather', arguments: { city: 'Paris', days: 3 } }, { name: 'get_time', arguments: { tz: 'CET' } }] });
    const ev = parseSse((await send(openaiCall(e, { model: 'gpt-4o', stream: true, messages: [userMsg('weather?')] }))).text);
    const chunks = ev.slice(0, -1).map((x) => j(x.data));
    const args = ['', ''];
    const heads: unknown[] = [];
    for (const c of chunks) {
      for (const tc of (at(c, 'choices', 0, 'delta', 'tool_calls') as Json[] | undefined) ?? []) {
        const i = tc.index as number;
        if (tc.id !== undefined) {
          heads.push(tc);
          expect(at(tc, 'function', 'arguments')).toBe('');
        }
        args[i] += at(tc, 'function', 'arguments') as string;
      }
    }
    expect(heads).toHaveLength(2);
    expect(at(heads[0], 'function', 'name')).toBe('get_weather');
    expect(at(heads[0], 'id')).toMatch(/^call_/);
    expect(JSON.parse(args[0] ?? '')).toEqual({ city: 'Paris', days: 3 });
    expect(JSON.parse(args[1] ?? '')).toEqual({ tz: 'CET' });
    expect(at(chunks[chunks.length - 1], 'choices', 0, 'finish_reason')).toBe('tool_calls');
  });

  it('non-stream tool calls carry JSON-string arguments and content null', async () => {
    const e = emus.openai;
    e.enqueue({ kind: 'tool_calls', calls: [{ name: 'f', arguments: { a: 1 } }] });
    const b = j((await send(openaiCall(e, { model: 'gpt-4o', messages: [userMsg('x')] }))).text);
    expect(at(b, 'choices', 0, 'message', 'content')).toBeNull();
    expect(at(b, 'choices', 0, 'message', 'tool_calls', 0, 'function')).toEqual({ name: 'f', arguments: '{"a":1}' });
    expect(at(b, 'choices', 0, 'finish_reason')).toBe('tool_calls');
  });

  it('scripted usage, finish and refusal', async () => {
    const e = emus.openai;
    e.enqueue({ kind: 'text', text: 'cut sh', finish: 'length', usage: { input: 100, output: 50, cacheRead: 40, reasoning: 20 } });
    const b = j((await send(openaiCall(e, { model: 'gpt-4o', messages: [userMsg('x')] }))).text);
    expect(at(b, 'choices', 0, 'finish_reason')).toBe('length');
    expect(at(b, 'usage')).toMatchObject({ prompt_tokens: 100, completion_tokens: 50, total_tokens: 150, prompt_tokens_details: { cached_tokens: 40 }, completion_tokens_details: { reasoning_tokens: 20 } });
    e.enqueue({ kind: 'text', text: '', refusal: "I can't help with that." });
    const r = j((await send(openaiCall(e, { model: 'gpt-4o', messages: [userMsg('x')] }))).text);
    expect(at(r, 'choices', 0, 'message')).toMatchObject({ content: null, refusal: "I can't help with that." });
    expect(at(r, 'choices', 0, 'finish_reason')).toBe('stop');
    e.enqueue({ kind: 'text', text: 'x', usage: 'none' });
    expect('usage' in j((await send(openaiCall(e, { model: 'gpt-4o', messages: [userMsg('x')] }))).text)).toBe(false);
  });

  it('error scenarios use the real body shape; 429 has retry-after; a custom body passes through', async () => {
    const e = emus.openai;
    e.enqueue({ kind: 'error', status: 429 });
    const r = await send(openaiCall(e, { model: 'gpt-4o', messages: [userMsg('x')] }));
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('1');
    expect(at(j(r.text), 'error')).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded', param: null });
    e.enqueue({ kind: 'error', status: 500 });
    expect(j((await send(openaiCall(e, { model: 'gpt-4o', messages: [userMsg('x')] }))).text)).toEqual({
      error: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null },
    });
    e.enqueue({ kind: 'error', status: 418, body: { custom: true }, headers: { 'x-extra': 'yes' } });
    const c = await send(openaiCall(e, { model: 'gpt-4o', messages: [userMsg('x')] }));
    expect([c.status, c.text, c.headers.get('x-extra')]).toEqual([418, '{"custom":true}', 'yes']);
  });

  it('a wrong or missing key gets the real 401', async () => {
    const r = await send(openaiCall(emus.openai, { model: 'gpt-4o', messages: [userMsg('x')] }, 'sk-wrong-key-123456'));
    expect(r.status).toBe(401);
    expect(at(j(r.text), 'error')).toMatchObject({ type: 'invalid_request_error', code: 'invalid_api_key' });
    expect(at(j(r.text), 'error', 'message')).toMatch(/^Incorrect API key provided: sk-\*\*\*3456\./);
    const none = await fetch(`${emus.openai.baseUrl}/chat/completions`, { method: 'POST', body: '{}' });
    expect(none.status).toBe(401);
  });

  it('validates like the real API', async () => {
    const e = emus.openai;
    const err = async (body: Json): Promise<Json> => {
      const r = await send(openaiCall(e, body));
      expect(r.status).toBe(400);
      return at(j(r.text), 'error') as Json;
    };
    expect((await err({ messages: [userMsg('x')] })).message).toBe('you must provide a model parameter');
    expect((await err({ model: 'm' })).code).toBe('missing_required_parameter');
    expect((await err({ model: 'm', messages: [] })).code).toBe('empty_array');
    expect((await err({ model: 'm', messages: [{ role: 'robot', content: 'x' }] })).param).toBe('messages[0].role');
    expect((await err({ model: 'm', messages: [userMsg('x'), { role: 'tool', tool_call_id: 'c1', content: 'r' }] })).message).toMatch(/must be a response to a preceeding message with 'tool_calls'/);
    const calls = [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }];
    expect((await err({ model: 'm', messages: [userMsg('x'), { role: 'assistant', content: null, tool_calls: calls }, userMsg('y')] })).message).toMatch(/did not have response messages: c1/);
    expect((await err({ model: 'm', messages: [userMsg('x'), { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: { a: 1 } } }] }] })).code).toBe('invalid_type');
    expect((await err({ model: 'm', stream_options: { include_usage: true }, messages: [userMsg('x')] })).param).toBe('stream_options');
    expect((await err({ model: 'm', temperature: 3, messages: [userMsg('x')] })).code).toBe('decimal_above_max_value');
    expect((await err({ model: 'm', response_format: { type: 'json_object' }, messages: [userMsg('x')] })).message).toMatch(/must contain the word 'json'/);
    expect((await err({ model: 'o3-mini', max_tokens: 10, messages: [userMsg('x')] })).code).toBe('unsupported_parameter');
    expect((await err({ model: 'gpt-5.2', temperature: 0.2, messages: [userMsg('x')] })).code).toBe('unsupported_value');
    expect((await err({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image', url: 'x' }] }] })).code).toBe('invalid_value');
    // a valid tool round trip passes
    const ok = await send(openaiCall(e, { model: 'm', messages: [userMsg('x'), { role: 'assistant', content: null, tool_calls: calls }, { role: 'tool', tool_call_id: 'c1', content: 'r' }] }));
    expect(ok.status).toBe(200);
    const bad = await send({ ...openaiCall(e, {}), body: '{not json' });
    expect(bad.status).toBe(400);
    expect(at(j(bad.text), 'error', 'message')).toMatch(/could not parse the JSON body/);
  });

  it('stream_error: some chunks, then data: {error}, no [DONE]', async () => {
    const e = emus.openai;
    e.enqueue({ kind: 'stream_error', afterChunks: 3, text: 'abcdefghij' });
    const ev = parseSse((await send(openaiCall(e, { model: 'm', stream: true, messages: [userMsg('x')] }))).text);
    expect(ev.some((x) => x.data === '[DONE]')).toBe(false);
    const last = j(ev[ev.length - 1]?.data ?? '');
    expect(at(last, 'error', 'type')).toBe('server_error');
    const contents = ev.slice(0, -1).map((x) => at(j(x.data), 'choices', 0, 'delta', 'content'));
    expect(contents).toHaveLength(4); // role + 3 pieces
    expect(ev.slice(0, -1).some((x) => at(j(x.data), 'choices', 0, 'finish_reason') !== null)).toBe(false);
  });

  it('cut: some chunks, then the socket is destroyed', async () => {
    const e = emus.openai;
    e.enqueue({ kind: 'cut', afterChunks: 2 });
    const r = await fetch(`${e.baseUrl}/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer emu-key' }, body: JSON.stringify({ model: 'm', stream: true, messages: [userMsg('x')] }) });
    expect(r.status).toBe(200);
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    let got = '';
    await expect(
      (async () => {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return got;
          got += new TextDecoder().decode(value);
        }
      })(),
    ).rejects.toThrow();
    expect(got).toContain('chat.completion.chunk');
    expect(got).not.toContain('[DONE]');
    // non-stream cut: half a JSON body, then the socket dies
    e.enqueue({ kind: 'cut', afterChunks: 0 });
    await expect(send(openaiCall(e, { model: 'm', messages: [userMsg('x')] }))).rejects.toThrow();
  });

  it('content_filter for a blocked scenario', async () => {
    emus.openai.enqueue({ kind: 'blocked' });
    const b = j((await send(openaiCall(emus.openai, { model: 'm', messages: [userMsg('x')] }))).text);
    expect(at(b, 'choices', 0, 'finish_reason')).toBe('content_filter');
  });

  it('embeddings: deterministic unit vectors of the model size, dimensions, base64, usage', async () => {
    const e = emus.openai;
    const post = (body: Json) => send({ url: `${e.baseUrl}/embeddings`, headers: { authorization: 'Bearer emu-key' }, body });
    const a = j((await post({ model: 'text-embedding-3-small', input: ['hello world', 'other'] })).text);
    const data = a.data as { embedding: number[]; index: number; object: string }[];
    expect(a.object).toBe('list');
    expect(data).toHaveLength(2);
    expect(data[0]?.embedding).toHaveLength(1536);
    const norm = Math.sqrt((data[0]?.embedding ?? []).reduce((s, x) => s + x * x, 0));
    expect(norm).toBeCloseTo(1, 4);
    // cl100k_base, as OpenAI counts these models: 'hello world' is 2 tokens, 'other' 1.
    expect(at(a, 'usage')).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    const again = j((await post({ model: 'text-embedding-3-small', input: 'hello world' })).text);
    expect(at(again, 'data', 0, 'embedding')).toEqual(data[0]?.embedding);
    expect(at(j((await post({ model: 'text-embedding-3-large', input: 'x' })).text), 'data', 0, 'embedding')).toHaveLength(3072);
    expect(at(j((await post({ model: 'text-embedding-3-large', input: 'x', dimensions: 256 })).text), 'data', 0, 'embedding')).toHaveLength(256);
    const b64 = at(j((await post({ model: 'text-embedding-3-small', input: 'hello world', encoding_format: 'base64' })).text), 'data', 0, 'embedding') as string;
    const buf = Buffer.from(b64, 'base64');
    expect(buf.length).toBe(1536 * 4);
    expect(buf.readFloatLE(0)).toBeCloseTo(data[0]?.embedding[0] ?? NaN, 6);
    expect((await post({ model: 'text-embedding-ada-002', input: 'x', dimensions: 10 })).status).toBe(400);
    expect((await post({ model: 'text-embedding-3-small', input: '' })).status).toBe(400);
    e.enqueue({ kind: 'embedding', dimensions: 8 });
    expect(at(j((await post({ model: 'text-embedding-3-small', input: 'x' })).text), 'data', 0, 'embedding')).toHaveLength(8);
  });

  it('embeddings: scripted answers (fewer vectors, reported usage, no usage) and the token limits', async () => {
    const e = emus.openai;
    const post = (body: Json) => send({ url: `${e.baseUrl}/embeddings`, headers: { authorization: 'Bearer emu-key' }, body });
    e.enqueue({ kind: 'embedding', vectors: 1, usage: 7 });
    const short = j((await post({ model: 'text-embedding-3-small', input: ['a', 'b', 'c'] })).text);
    expect(short.data).toHaveLength(1);
    expect(short.usage).toEqual({ prompt_tokens: 7, total_tokens: 7 });
    e.enqueue({ kind: 'embedding', usage: 'none' });
    expect(j((await post({ model: 'text-embedding-3-small', input: 'a' })).text)).not.toHaveProperty('usage');
    expect(j((await post({ model: 'text-embedding-3-small', input: [[1, 2, 3], [4]] })).text).usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
    const long = await post({ model: 'text-embedding-3-small', input: 'word '.repeat(9000) });
    expect(long.status).toBe(400);
    expect(j(long.text)).toMatchObject({ error: { message: expect.stringMatching(/maximum context length is 8192 tokens/) } });
    const many = await post({ model: 'text-embedding-3-small', input: Array.from({ length: 2049 }, () => 'a') });
    expect(many.status).toBe(400);
    const total = await post({ model: 'text-embedding-3-small', input: Array.from({ length: 40 }, () => 'word '.repeat(8000)) });
    expect(j(total.text)).toMatchObject({ error: { code: 'max_tokens_per_request' } });
  });
});

// ---------------------------------------------------------------------------

describe('deepseek (provider_7)', () => {
  it('non-stream default: UUID id, DeepSeek usage fields', async () => {
    const r = await send(openaiCall(emus.deepseek, { model: 'deepseek-chat', messages: [userMsg('hey')] }));
    expect(r.status).toBe(200);
    const b = j(r.text);
    expect(b.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(at(b, 'choices', 0, 'message')).toEqual({ role: 'assistant', content: 'Hello from deepseek emulator. You said: hey' });
    expect(at(b, 'usage')).toMatchObject({ prompt_tokens: 1, prompt_cache_hit_tokens: 0, prompt_cache_miss_tokens: 1 });
  });

  it('streams usage on the finish chunk (with or without include_usage), no separate usage chunk', async () => {
    for (const includeUsage of [false, true]) {
      const body: Json = { model: 'deepseek-chat', stream: true, messages: [userMsg('hey')] };
      if (includeUsage) body.stream_options = { include_usage: true };
      const ev = parseSse((await send(openaiCall(emus.deepseek, body))).text);
      expect(ev[ev.length - 1]?.data).toBe('[DONE]');
      const chunks = ev.slice(0, -1).map((x) => j(x.data));
      const last = chunks[chunks.length - 1];
      expect(at(last, 'choices', 0, 'finish_reason')).toBe('stop');
      expect(at(last, 'usage', 'total_tokens')).toBeGreaterThan(0);
      expect(chunks.every((c) => (c.choices as unknown[]).length === 1)).toBe(true);
      for (const c of chunks.slice(0, -1)) expect('usage' in c ? c.usage : 'absent').toBe(includeUsage ? null : 'absent');
    }
  });

  it('reasoner: reasoning_content deltas first, then content; keep-alive comments before the first chunk', async () => {
    const e = emus.deepseek;
    e.enqueue({ kind: 'text', text: 'Answer.', reasoning: 'Let me think.' }, { keepAlives: 2, delayMs: 40 });
    const ev = parseSse((await send(openaiCall(e, { model: 'deepseek-reasoner', stream: true, messages: [userMsg('q')] }))).text);
    expect(ev.slice(0, 2)).toEqual([
      { event: ':comment', data: 'keep-alive' },
      { event: ':comment', data: 'keep-alive' },
    ]);
    const chunks = ev.slice(2, -1).map((x) => j(x.data));
    expect(at(chunks[0], 'choices', 0, 'delta')).toEqual({ role: 'assistant', content: null, reasoning_content: '' });
    const reasoning = chunks.map((c) => at(c, 'choices', 0, 'delta', 'reasoning_content')).filter((x) => typeof x === 'string').join('');
    const content = chunks.map((c) => at(c, 'choices', 0, 'delta', 'content')).filter((x) => typeof x === 'string').join('');
    expect(reasoning).toBe('Let me think.');
    expect(content).toBe('Answer.');
    const firstContent = chunks.findIndex((c) => typeof at(c, 'choices', 0, 'delta', 'content') === 'string' && at(c, 'choices', 0, 'delta', 'content') !== '');
    const lastReasoning = chunks.map((c) => typeof at(c, 'choices', 0, 'delta', 'reasoning_content') === 'string' && at(c, 'choices', 0, 'delta', 'reasoning_content') !== '').lastIndexOf(true);
    expect(lastReasoning).toBeLessThan(firstContent);
    // non-stream: reasoning_content in the message; default reasoner answer has reasoning too
    const b = j((await send(openaiCall(e, { model: 'deepseek-reasoner', messages: [userMsg('q')] }))).text);
    expect(typeof at(b, 'choices', 0, 'message', 'reasoning_content')).toBe('string');
  });

  it('non-stream keep-alives are blank lines before the JSON', async () => {
    emus.deepseek.enqueue({ kind: 'text', text: 'ok' }, { keepAlives: 3 });
    const r = await send(openaiCall(emus.deepseek, { model: 'deepseek-chat', messages: [userMsg('q')] }));
    expect(r.text.startsWith('\n\n\n{')).toBe(true);
    expect(at(j(r.text.trim()), 'choices', 0, 'message', 'content')).toBe('ok');
  });

  it('streams tool calls with call_00_ ids', async () => {
    emus.deepseek.enqueue({ kind: 'tool_calls', calls: [{ name: 'f', arguments: { q: 'x' } }] });
    const ev = parseSse((await send(openaiCall(emus.deepseek, { model: 'deepseek-chat', stream: true, messages: [userMsg('q')] }))).text);
    const chunks = ev.slice(0, -1).map((x) => j(x.data));
    const head = chunks.map((c) => at(c, 'choices', 0, 'delta', 'tool_calls', 0)).find((t) => at(t, 'id') !== undefined);
    expect(at(head, 'id')).toMatch(/^call_00_/);
    const args = chunks.map((c) => at(c, 'choices', 0, 'delta', 'tool_calls', 0, 'function', 'arguments')).filter((x) => typeof x === 'string').join('');
    expect(JSON.parse(args)).toEqual({ q: 'x' });
    expect(at(chunks[chunks.length - 1], 'choices', 0, 'finish_reason')).toBe('tool_calls');
  });

  it('rejects image_url parts, json_schema, unknown roles, and missing reasoning_content replay', async () => {
    const e = emus.deepseek;
    const img = await send(openaiCall(e, { model: 'deepseek-chat', messages: [{ role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }] }] }));
    expect(img.status).toBe(400);
    expect(at(j(img.text), 'error', 'message')).toMatch(/^Failed to deserialize the JSON body into the target type: messages\[0\]: unknown variant `image_url`, expected `text`/);
    const js = await send(openaiCall(e, { model: 'deepseek-chat', response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } }, messages: [userMsg('json')] }));
    expect([js.status, at(j(js.text), 'error', 'message')]).toEqual([400, 'This response_format type is unavailable now']);
    expect((await send(openaiCall(e, { model: 'deepseek-chat', messages: [{ role: 'developer', content: 'x' }, userMsg('y')] }))).status).toBe(400);
    const calls = [{ id: 'call_00_a', type: 'function', function: { name: 'f', arguments: '{}' } }];
    const history = [userMsg('q'), { role: 'assistant', content: '', tool_calls: calls }, { role: 'tool', tool_call_id: 'call_00_a', content: '1' }];
    const replay = await send(openaiCall(e, { model: 'deepseek-reasoner', messages: history }));
    expect([replay.status, at(j(replay.text), 'error', 'message')]).toEqual([400, 'The reasoning_content in the thinking mode must be passed back to the API.']);
    expect((await send(openaiCall(e, { model: 'deepseek-chat', messages: history }))).status).toBe(200);
  });

  it('refusal text is streamed as content with content_filter; max_tokens range is enforced', async () => {
    emus.deepseek.enqueue({ kind: 'text', text: '', refusal: 'No.' });
    const ev = parseSse((await send(openaiCall(emus.deepseek, { model: 'deepseek-chat', stream: true, messages: [userMsg('q')] }))).text);
    const chunks = ev.slice(0, -1).map((x) => j(x.data));
    expect(chunks.map((c) => at(c, 'choices', 0, 'delta', 'content')).join('')).toBe('No.');
    expect(at(chunks[chunks.length - 1], 'choices', 0, 'finish_reason')).toBe('content_filter');
    const big = await send(openaiCall(emus.deepseek, { model: 'deepseek-chat', max_tokens: 9000, messages: [userMsg('q')] }));
    expect([big.status, at(j(big.text), 'error', 'message')]).toEqual([400, 'Invalid max_tokens value, the valid range of max_tokens is [1, 8192]']);
  });

  it('wrong key → 401 Authentication Fails; 402 default body', async () => {
    const r = await send(openaiCall(emus.deepseek, { model: 'deepseek-chat', messages: [userMsg('q')] }, 'sk-nope1234'));
    expect(r.status).toBe(401);
    expect(j(r.text)).toEqual({ error: { message: 'Authentication Fails, Your api key: ****1234 is invalid', type: 'authentication_error', param: null, code: 'invalid_request_error' } });
    emus.deepseek.enqueue({ kind: 'error', status: 402 });
    const p = await send(openaiCall(emus.deepseek, { model: 'deepseek-chat', messages: [userMsg('q')] }));
    expect([p.status, j(p.text)]).toEqual([402, { error: { message: 'Insufficient Balance', type: 'unknown_error', param: null, code: 'invalid_request_error' } }]);
  });
});

// ---------------------------------------------------------------------------

describe('anthropic (provider_2)', () => {
  const base = { model: 'claude-sonnet-4-5', max_tokens: 1024 };

  it('non-stream default', async () => {
    const r = await send(anthropicCall(emus.anthropic, { ...base, system: 'Be brief.', messages: [userMsg('Hello')] }));
    expect(r.status).toBe(200);
    expect(r.headers.get('request-id')).toMatch(/^req_/);
    const b = j(r.text);
    expect(b).toMatchObject({ type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', stop_reason: 'end_turn', stop_sequence: null });
    expect(b.id).toMatch(/^msg_/);
    expect(b.content).toEqual([{ type: 'text', text: 'Hello from anthropic emulator. You said: Hello' }]);
    expect(at(b, 'usage')).toMatchObject({ input_tokens: Math.ceil('Be brief.Hello'.length / 4), cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: Math.ceil(46 / 4) });
  });

  it('streams event:+data: pairs in order with ping, cumulative message_delta usage, message_stop', async () => {
    const ev = parseSse((await send(anthropicCall(emus.anthropic, { ...base, stream: true, messages: [userMsg('Hello')] }))).text);
    const names = ev.map((x) => x.event);
    for (const x of ev) expect(at(j(x.data), 'type')).toBe(x.event);
    expect(names[0]).toBe('message_start');
    expect(names[1]).toBe('content_block_start');
    expect(names[2]).toBe('ping');
    expect(names.filter((n) => n === 'content_block_delta')).toHaveLength(20);
    expect(names.slice(-4)).toEqual(['content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    const start = j(ev[0]?.data ?? '');
    expect(at(start, 'message', 'usage', 'output_tokens')).toBe(1);
    expect(at(start, 'message', 'content')).toEqual([]);
    const text = ev.filter((x) => x.event === 'content_block_delta').map((x) => at(j(x.data), 'delta', 'text')).join('');
    expect(text).toBe('Hello from anthropic emulator. You said: Hello');
    const md = j(ev[ev.length - 2]?.data ?? '');
    expect(at(md, 'delta', 'stop_reason')).toBe('end_turn');
    expect(at(md, 'usage', 'output_tokens')).toBe(Math.ceil(text.length / 4));
  });

  it('tool_use blocks, one per call, with input_json_delta fragments; thinking block first', async () => {
    emus.anthropic.enqueue({ kind: 'tool_calls', text: 'Checking.', reasoning: 'Need weather.', calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }, { name: 'get_time', arguments: {} }] });
    const ev = parseSse((await send(anthropicCall(emus.anthropic, { ...base, stream: true, messages: [userMsg('w?')] }))).text);
    const starts = ev.filter((x) => x.event === 'content_block_start').map((x) => j(x.data));
    expect(starts.map((s) => [s.index, at(s, 'content_block', 'type')])).toEqual([
      [0, 'thinking'],
      [1, 'text'],
      [2, 'tool_use'],
      [3, 'tool_use'],
    ]);
    expect(at(starts[2], 'content_block')).toMatchObject({ name: 'get_weather', input: {} });
    expect(at(starts[2], 'content_block', 'id')).toMatch(/^toolu_/);
    const deltas = ev.filter((x) => x.event === 'content_block_delta').map((x) => j(x.data));
    const json = (i: number): string => deltas.filter((d) => d.index === i).map((d) => at(d, 'delta', 'partial_json')).join('');
    expect(deltas.find((d) => d.index === 2 && at(d, 'delta', 'type') === 'input_json_delta')).toMatchObject({ delta: { partial_json: '' } });
    expect(JSON.parse(json(2))).toEqual({ city: 'Paris' });
    expect(JSON.parse(json(3))).toEqual({});
    expect(deltas.some((d) => d.index === 0 && at(d, 'delta', 'type') === 'signature_delta')).toBe(true);
    expect(at(j(ev[ev.length - 2]?.data ?? ''), 'delta', 'stop_reason')).toBe('tool_use');
  });

  it('error scenarios: 529 overloaded body with request_id; in-stream error event', async () => {
    const e = emus.anthropic;
    e.enqueue({ kind: 'error', status: 529 });
    const r = await send(anthropicCall(e, { ...base, messages: [userMsg('x')] }));
    expect(r.status).toBe(529);
    const b = j(r.text);
    expect(b).toMatchObject({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    expect(b.request_id).toMatch(/^req_/);
    e.enqueue({ kind: 'error', status: 429 });
    const rl = await send(anthropicCall(e, { ...base, messages: [userMsg('x')] }));
    expect([rl.status, rl.headers.get('retry-after'), at(j(rl.text), 'error', 'type')]).toEqual([429, '1', 'rate_limit_error']);
    e.enqueue({ kind: 'stream_error', afterChunks: 2 });
    const ev = parseSse((await send(anthropicCall(e, { ...base, stream: true, messages: [userMsg('x')] }))).text);
    expect(ev[ev.length - 1]?.event).toBe('error');
    expect(at(j(ev[ev.length - 1]?.data ?? ''), 'error', 'type')).toBe('overloaded_error');
    expect(ev.filter((x) => x.event === 'content_block_delta')).toHaveLength(2);
    expect(ev.some((x) => x.event === 'message_stop')).toBe(false);
  });

  it('auth: x-api-key required and checked; anthropic-version required', async () => {
    const e = emus.anthropic;
    const wrong = await send(anthropicCall(e, { ...base, messages: [userMsg('x')] }, 'bad'));
    expect([wrong.status, at(j(wrong.text), 'error')]).toEqual([401, { type: 'authentication_error', message: 'invalid x-api-key' }]);
    const bearer = await fetch(`${e.baseUrl}/v1/messages`, { method: 'POST', headers: { authorization: 'Bearer emu-key', 'anthropic-version': '2023-06-01' }, body: JSON.stringify({ ...base, messages: [userMsg('x')] }) });
    expect(bearer.status).toBe(401);
    const noVersion = await send(anthropicCall(e, { ...base, messages: [userMsg('x')] }, KEY, null));
    expect([noVersion.status, at(j(noVersion.text), 'error', 'message')]).toEqual([400, 'anthropic-version: header is required']);
  });

  it('validates fields and turn rules', async () => {
    const e = emus.anthropic;
    const msg = async (body: Json): Promise<string> => {
      const r = await send(anthropicCall(e, body));
      expect(r.status).toBe(400);
      expect(at(j(r.text), 'error', 'type')).toBe('invalid_request_error');
      return at(j(r.text), 'error', 'message') as string;
    };
    expect(await msg({ model: 'claude-x', messages: [userMsg('x')] })).toBe('max_tokens: Field required');
    expect(await msg({ max_tokens: 5, messages: [userMsg('x')] })).toBe('model: Field required');
    expect(await msg({ ...base, messages: [{ role: 'system', content: 'x' }, userMsg('y')] })).toMatch(/Unexpected role "system"/);
    expect(await msg({ ...base, stop: ['x'], messages: [userMsg('y')] })).toBe('stop: Extra inputs are not permitted');
    expect(await msg({ ...base, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] })).toMatch(/Input tag 'image_url'/);
    const toolUse = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: {} }] };
    const result = (id: string): Json => ({ type: 'tool_result', tool_use_id: id, content: 'ok' });
    expect(await msg({ ...base, messages: [userMsg('x'), toolUse, { role: 'user', content: [result('toolu_2')] }] })).toMatch(/unexpected `tool_use_id` found in `tool_result` blocks: toolu_2/);
    expect(await msg({ ...base, messages: [userMsg('x'), toolUse, userMsg('no result')] })).toMatch(/`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1/);
    // merged neighbours: text first, then the result in a second user message → the result no longer leads the turn
    expect(await msg({ ...base, messages: [userMsg('x'), toolUse, userMsg('hm'), { role: 'user', content: [result('toolu_1')] }] })).toMatch(/without `tool_result` blocks immediately after/);
    // but the result leading, followed by a separate user text, is fine
    expect((await send(anthropicCall(e, { ...base, messages: [userMsg('x'), toolUse, { role: 'user', content: [result('toolu_1')] }, userMsg('and?')] }))).status).toBe(200);
    expect(await msg({ ...base, messages: [userMsg('x'), { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: '{"a":1}' }] }] })).toMatch(/tool_use.input: Input should be a valid dictionary/);
    expect(await msg({ ...base, temperature: 1.5, messages: [userMsg('x')] })).toBe('temperature: Input should be less than or equal to 1');
    expect(await msg({ ...base, temperature: 0.5, top_p: 0.9, messages: [userMsg('x')] })).toMatch(/cannot both be specified/);
    expect(await msg({ ...base, model: 'claude-sonnet-4-6', messages: [userMsg('x'), { role: 'assistant', content: 'Sure' }] })).toMatch(/does not support assistant message prefill/);
    expect(await msg({ ...base, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: [userMsg('x')] })).toMatch(/`max_tokens` must be greater than `thinking.budget_tokens`/);
    expect(await msg({ ...base, thinking: { type: 'enabled', budget_tokens: 512 }, messages: [userMsg('x')] })).toMatch(/greater than or equal to 1024/);
    expect(await msg({ ...base, tools: [{ name: 'f', input_schema: { anyOf: [] } }], messages: [userMsg('x')] })).toBe('tools.0.custom.input_schema.type: Field required');
    expect(await msg({ ...base, max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 1024 }, tool_choice: { type: 'any' }, tools: [{ name: 'f', input_schema: { type: 'object' } }], messages: [userMsg('x')] })).toMatch(/Thinking may not be enabled when tool_choice forces tool use/);
  });

  it('blocked → refusal stop reason; finish override', async () => {
    emus.anthropic.enqueue({ kind: 'blocked' });
    expect(at(j((await send(anthropicCall(emus.anthropic, { ...base, messages: [userMsg('x')] }))).text), 'stop_reason')).toBe('refusal');
    emus.anthropic.enqueue({ kind: 'text', text: 'trunc', finish: 'max_tokens', usage: { input: 10, output: 5, cacheRead: 100, cacheWrite: 7 } });
    const b = j((await send(anthropicCall(emus.anthropic, { ...base, messages: [userMsg('x')] }))).text);
    expect(b.stop_reason).toBe('max_tokens');
    expect(at(b, 'usage')).toMatchObject({ input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 7 });
  });
  it('cache_control: breakpoints checked as Anthropic checks them', async () => {
    const msg = async (body: Json): Promise<string> => {
      const r = await send(anthropicCall(emus.anthropic, body));
      expect(r.status).toBe(400);
      return String(at(j(r.text), 'error', 'message'));
    };
    const marked = (mark: unknown, text = 'x'): Json => ({ role: 'user', content: [{ type: 'text', text, cache_control: mark }] });
    expect(await msg({ ...base, messages: [marked({ type: 'persistent' })] })).toMatch(/^messages\.0\.content\.0\.cache_control: Input tag 'persistent'/);
    expect(await msg({ ...base, messages: [marked({ type: 'ephemeral', ttl: '2h' })] })).toBe("messages.0.content.0.cache_control.ephemeral.ttl: Input should be '5m' or '1h'");
    const five = { role: 'user', content: ['a', 'b', 'c', 'd', 'e'].map((text) => ({ type: 'text', text, cache_control: { type: 'ephemeral' } })) };
    expect(await msg({ ...base, messages: [five] })).toBe('A maximum of 4 blocks with cache_control may be provided. Found 5.');
    const late = { ...base, system: [{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } }], messages: [marked({ type: 'ephemeral', ttl: '1h' })] };
    expect(await msg(late)).toMatch(/a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block/);
  });

  it('cache_control: the built-in answer writes a prefix once (5m / 1h by ttl), then reads it', async () => {
    const system = [{ type: 'text', text: 'S'.repeat(400), cache_control: { type: 'ephemeral', ttl: '1h' } }];
    const turn = (question: string): Json => ({ role: 'user', content: [{ type: 'text', text: 'D'.repeat(800), cache_control: { type: 'ephemeral' } }, { type: 'text', text: question }] });
    const usage = async (body: Json) => at(j((await send(anthropicCall(emus.anthropic, body))).text), 'usage');
    const first = await usage({ ...base, system, messages: [turn('Q'.repeat(40))] });
    // 400 system chars = 100 tokens written for 1 hour, 800 more = 200 tokens for 5 minutes, 40 uncached = 10.
    expect(first).toMatchObject({ input_tokens: 10, cache_read_input_tokens: 0, cache_creation_input_tokens: 300, cache_creation: { ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 100 } });
    const again = await usage({ ...base, system, messages: [turn('R'.repeat(80))] });
    expect(again).toMatchObject({ input_tokens: 20, cache_read_input_tokens: 300, cache_creation_input_tokens: 0 });
    // A new document after the cached system prompt: the system prefix is read, the rest written.
    const other = await usage({ ...base, system, messages: [{ role: 'user', content: [{ type: 'text', text: 'E'.repeat(800), cache_control: { type: 'ephemeral' } }] }] });
    expect(other).toMatchObject({ input_tokens: 0, cache_read_input_tokens: 100, cache_creation: { ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 0 } });
    emus.anthropic.reset();
    expect(await usage({ ...base, system, messages: [turn('Q'.repeat(40))] })).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 300 });
  });
});

// ---------------------------------------------------------------------------

describe('gemini (provider_3)', () => {
  const contents = [{ role: 'user', parts: [{ text: 'Hello' }] }];

  it('generateContent default', async () => {
    const r = await send(geminiCall(emus.gemini, 'gemini-2.5-flash', { systemInstruction: { parts: [{ text: 'Be brief.' }] }, contents }));
    expect(r.status).toBe(200);
    const b = j(r.text);
    expect(at(b, 'candidates', 0, 'content')).toEqual({ parts: [{ text: 'Hello from gemini emulator. You said: Hello' }], role: 'model' });
    expect(at(b, 'candidates', 0, 'finishReason')).toBe('STOP');
    const prompt = Math.ceil('Be brief.Hello'.length / 4);
    const out = Math.ceil('Hello from gemini emulator. You said: Hello'.length / 4);
    expect(at(b, 'usageMetadata')).toMatchObject({ promptTokenCount: prompt, candidatesTokenCount: out, totalTokenCount: prompt + out });
    expect(b.modelVersion).toBe('gemini-2.5-flash');
    expect(typeof b.responseId).toBe('string');
  });

  it('accepts the key as ?key= too', async () => {
    const r = await fetch(`${emus.gemini.baseUrl}/v1beta/models/gemini-2.5-flash:generateContent?key=emu-key`, { method: 'POST', body: JSON.stringify({ contents }) });
    expect(r.status).toBe(200);
  });

  it('streamGenerateContent?alt=sse: data-only events, cumulative usage, finishReason only on the last, EOF end', async () => {
    const r = await send(geminiCall(emus.gemini, 'gemini-2.5-flash', { contents }, true));
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const ev = parseSse(r.text);
    expect(ev.every((x) => x.event === undefined)).toBe(true);
    expect(ev).toHaveLength(20);
    const chunks = ev.map((x) => j(x.data));
    expect(chunks.slice(0, -1).every((c) => at(c, 'candidates', 0, 'finishReason') === undefined)).toBe(true);
    expect(at(chunks[19], 'candidates', 0, 'finishReason')).toBe('STOP');
    const counts = chunks.map((c) => (at(c, 'usageMetadata', 'candidatesTokenCount') as number | undefined) ?? 0);
    for (let i = 1; i < counts.length; i++) expect(counts[i]).toBeGreaterThanOrEqual(counts[i - 1] ?? 0);
    expect(counts[19]).toBe(Math.ceil('Hello from gemini emulator. You said: Hello'.length / 4));
    expect(chunks.map((c) => at(c, 'candidates', 0, 'content', 'parts', 0, 'text')).join('')).toBe('Hello from gemini emulator. You said: Hello');
    expect(new Set(chunks.map((c) => c.responseId)).size).toBe(1);
  });

  it('without alt=sse the stream is a JSON array', async () => {
    const r = await fetch(`${emus.gemini.baseUrl}/v1beta/models/gemini-2.5-flash:streamGenerateContent`, { method: 'POST', headers: { 'x-goog-api-key': 'emu-key' }, body: JSON.stringify({ contents }) });
    const arr = JSON.parse(await r.text()) as unknown[];
    expect(arr).toHaveLength(20);
  });

  it('tool calls arrive as whole functionCall parts (thoughtSignature on Gemini 3), finish STOP', async () => {
    emus.gemini.enqueue({ kind: 'tool_calls', calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }, { name: 'get_time', arguments: {} }] });
    const ev = parseSse((await send(geminiCall(emus.gemini, 'gemini-3-pro-preview', { contents }, true))).text);
    const last = j(ev[ev.length - 1]?.data ?? '');
    const parts = at(last, 'candidates', 0, 'content', 'parts') as Json[];
    expect(parts.map((p) => p.functionCall)).toEqual([
      { name: 'get_weather', args: { city: 'Paris' } },
      { name: 'get_time', args: {} },
    ]);
    expect(typeof parts[0]?.thoughtSignature).toBe('string');
    expect(parts[1]?.thoughtSignature).toBeUndefined();
    expect(at(last, 'candidates', 0, 'finishReason')).toBe('STOP');
  });

  it('bad key → 400 API_KEY_INVALID; missing key → 403', async () => {
    const r = await send(geminiCall(emus.gemini, 'gemini-2.5-flash', { contents }, false, 'nope'));
    expect(r.status).toBe(400);
    const err = at(j(r.text), 'error') as Json;
    expect(err).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT', message: 'API key not valid. Please pass a valid API key.' });
    expect(at(err, 'details', 0, 'reason')).toBe('API_KEY_INVALID');
    const none = await fetch(`${emus.gemini.baseUrl}/v1beta/models/gemini-2.5-flash:generateContent`, { method: 'POST', body: JSON.stringify({ contents }) });
    expect(none.status).toBe(403);
  });

  it('blocked prompt → 200 with promptFeedback and no candidates (stream too)', async () => {
    emus.gemini.enqueue({ kind: 'blocked' });
    const b = j((await send(geminiCall(emus.gemini, 'gemini-2.5-flash', { contents }))).text);
    expect(b.candidates).toBeUndefined();
    expect(at(b, 'promptFeedback', 'blockReason')).toBe('SAFETY');
    expect(at(b, 'usageMetadata', 'promptTokenCount')).toBe(2);
    emus.gemini.enqueue({ kind: 'blocked' });
    const ev = parseSse((await send(geminiCall(emus.gemini, 'gemini-2.5-flash', { contents }, true))).text);
    expect(ev).toHaveLength(1);
    expect(at(j(ev[0]?.data ?? ''), 'promptFeedback', 'blockReason')).toBe('SAFETY');
  });

  it('error scenarios: 429 with RetryInfo, 503 UNAVAILABLE, in-stream error', async () => {
    const e = emus.gemini;
    e.enqueue({ kind: 'error', status: 429 });
    const r = await send(geminiCall(e, 'gemini-2.5-flash', { contents }));
    expect(r.status).toBe(429);
    const details = at(j(r.text), 'error', 'details') as Json[];
    expect(details.find((d) => d['@type'] === 'type.googleapis.com/google.rpc.RetryInfo')).toMatchObject({ retryDelay: '1s' });
    e.enqueue({ kind: 'error', status: 503 });
    expect(at(j((await send(geminiCall(e, 'gemini-2.5-flash', { contents }))).text), 'error')).toEqual({ code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' });
    e.enqueue({ kind: 'stream_error', afterChunks: 2 });
    const ev = parseSse((await send(geminiCall(e, 'gemini-2.5-flash', { contents }, true))).text);
    expect(ev).toHaveLength(3);
    expect(at(j(ev[2]?.data ?? ''), 'error', 'status')).toBe('INTERNAL');
  });

  it('validates roles, function responses, unknown fields, thought signatures', async () => {
    const e = emus.gemini;
    const msg = async (model: string, body: Json): Promise<string> => {
      const r = await send(geminiCall(e, model, body));
      expect(r.status).toBe(400);
      expect(at(j(r.text), 'error', 'status')).toBe('INVALID_ARGUMENT');
      return at(j(r.text), 'error', 'message') as string;
    };
    expect(await msg('gemini-2.5-flash', { contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] })).toBe('Please use a valid role: user, model.');
    expect(await msg('gemini-2.5-flash', { contents: [] })).toMatch(/contents is not specified/);
    expect(await msg('gemini-2.5-flash', { messages: [], contents })).toMatch(/Unknown name "messages"/);
    expect(await msg('gemini-2.5-flash', { contents, generationConfig: { max_tokens: 5 } })).toMatch(/Unknown name "max_tokens" at 'generation_config'/);
    const call = { role: 'model', parts: [{ functionCall: { name: 'f', args: {} } }] };
    expect(await msg('gemini-2.5-flash', { contents: [...contents, call, { role: 'user', parts: [{ functionResponse: { name: 'f', response: '42' } }] }] })).toMatch(/function_response.response' \(type.googleapis.com\/google.protobuf.Struct\)/);
    expect(await msg('gemini-3-pro-preview', { contents: [...contents, call, { role: 'user', parts: [{ functionResponse: { name: 'f', response: { result: 42 } } }] }] })).toMatch(/missing a thought_signature/);
    expect(await msg('gemini-2.5-flash', { contents, generationConfig: { thinkingConfig: { thinkingBudget: 10, thinkingLevel: 'LOW' } } })).toBe('You can only set only one of thinking budget and thinking level.');
    // snake_case and a valid function round trip pass
    const ok = await send(geminiCall(e, 'gemini-2.5-flash', { contents: [...contents, call, { role: 'user', parts: [{ function_response: { name: 'f', response: { result: 42 } } }] }], generation_config: { max_output_tokens: 10 } }));
    expect(ok.status).toBe(200);
  });

  it('embedContent and batchEmbedContents', async () => {
    const e = emus.gemini;
    const one = await send({ url: `${e.baseUrl}/v1beta/models/gemini-embedding-001:embedContent`, headers: { 'x-goog-api-key': 'emu-key' }, body: { content: { parts: [{ text: 'hi' }] }, outputDimensionality: 768 } });
    expect(at(j(one.text), 'embedding', 'values')).toHaveLength(768);
    const batch = await send({
      url: `${e.baseUrl}/v1beta/models/gemini-embedding-001:batchEmbedContents`,
      headers: { 'x-goog-api-key': 'emu-key' },
      body: { requests: [{ model: 'models/gemini-embedding-001', content: { parts: [{ text: 'a' }] } }, { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'b' }] } }] },
    });
    expect(at(j(batch.text), 'embeddings', 1, 'values')).toHaveLength(3072);
  });
});

describe('routing helpers: a key pool, a throttled key, the first N failing', () => {
  /** A chat request of each protocol with `key` where the protocol carries it. */
  const requests: Record<'openai' | 'anthropic' | 'gemini' | 'deepseek', (base: string, key: string) => [string, RequestInit]> = {
    openai: (base, key) => [`${base}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }) }],
    deepseek: (base, key) => [`${base}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'deepseek-chat', messages: [{ role: 'user', content: 'hi' }] }) }],
    anthropic: (base, key) => [`${base}/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }) }],
    gemini: (base, key) => [`${base}/v1beta/models/gemini-2.5-flash:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }) }],
  };

  for (const kind of ['openai', 'anthropic', 'gemini', 'deepseek'] as const) {
    it(`${kind}: every key of the pool is accepted, another refused; a throttled key gets 429 with retry-after and takes no scenario; failFirst`, async () => {
      const e = await startEmulator(kind, { apiKey: 'k-1', apiKeys: ['k-2'] });
      try {
        const call = (key: string) => fetch(...requests[kind](e.baseUrl, key));
        expect((await call('k-1')).status).toBe(200);
        expect((await call('k-2')).status).toBe(200);
        expect([400, 401, 403]).toContain((await call('k-3')).status);
        e.throttle('k-2', 7);
        e.enqueue({ kind: 'text', text: 'queued' });
        const throttled = await call('k-2');
        expect(throttled.status).toBe(429);
        expect(throttled.headers.get('retry-after')).toBe('7');
        const answered = await call('k-1');
        expect(answered.status).toBe(200);
        expect(await answered.text()).toContain('queued');
        e.unthrottle('k-2');
        e.failFirst(2, 503);
        expect([(await call('k-2')).status, (await call('k-1')).status, (await call('k-2')).status]).toEqual([503, 503, 200]);
      } finally {
        await e.close();
      }
    });
  }
});
