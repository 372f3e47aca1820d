import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from './index.ts';

// provider_1's Responses endpoint, read by the official openai SDK where it can be and raw where the wire itself is the point.

let emu: Emulator;
let client: OpenAI;

beforeAll(async () => {
  emu = await startEmulator('openai');
  client = new OpenAI({ apiKey: emu.apiKey, baseURL: emu.baseUrl, maxRetries: 0 });
});
afterEach(() => emu.reset());
afterAll(() => emu.close());

type Json = Record<string, unknown>;

async function post(body: unknown, key = 'emu-key'): Promise<{ status: number; headers: Headers; text: string; json: () => Json }> {
  const r = await fetch(`${emu.baseUrl}/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, headers: r.headers, text, json: () => JSON.parse(text) as Json };
}

/** The events of an SSE body: each `event:` name with its parsed data. */
function events(text: string): { event: string; data: Json }[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const event = /^event: (.+)$/m.exec(block)?.[1] ?? '';
      const data = /^data: (.+)$/m.exec(block)?.[1] ?? '{}';
      return { event, data: JSON.parse(data) as Json };
    });
}

const weather = { type: 'function' as const, name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }, strict: true };

describe('provider_1 POST /v1/responses', () => {
  it('answers text with the response object and usage, and records the request', async () => {
    const r = await client.responses.create({ model: 'gpt-4.1', instructions: 'Be brief.', input: 'Hello there' });
    expect(r.object).toBe('response');
    expect(r.id).toMatch(/^resp_/);
    expect(r.status).toBe('completed');
    expect(r.output_text).toBe('Hello from openai emulator. You said: Hello there');
    expect(r.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed' });
    expect(r.usage).toEqual({
      input_tokens: Math.ceil('Be brief.Hello there'.length / 4),
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: Math.ceil(r.output_text.length / 4),
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: Math.ceil('Be brief.Hello there'.length / 4) + Math.ceil(r.output_text.length / 4),
    });
    expect(emu.requests).toHaveLength(1);
    expect(emu.requests[0]).toMatchObject({ method: 'POST', path: '/v1/responses', body: { model: 'gpt-4.1', input: 'Hello there', instructions: 'Be brief.' } });
  });

  it('streams the real event sequence, numbered from 0, ending in response.completed', async () => {
    emu.enqueue({ kind: 'text', text: 'One two three four', chunks: 4, usage: { input: 50, output: 6, cacheRead: 32 } });
    const r = await post({ model: 'gpt-4.1', input: [{ role: 'user', content: [{ type: 'input_text', text: 'count' }] }], stream: true });
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const ev = events(r.text);
    expect(ev.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(ev.map((e) => e.data.sequence_number)).toEqual(ev.map((_, i) => i));
    expect(ev.every((e) => e.data.type === e.event)).toBe(true);
    expect(ev.filter((e) => e.event === 'response.output_text.delta').map((e) => e.data.delta).join('')).toBe('One two three four');
    const done = ev.at(-1)?.data.response as Json;
    expect(done.status).toBe('completed');
    expect(done.usage).toEqual({ input_tokens: 50, input_tokens_details: { cached_tokens: 32 }, output_tokens: 6, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 56 });
  });

  it('is read to the end by the SDK stream helper', async () => {
    const stream = client.responses.stream({ model: 'gpt-4.1', input: 'stream please' });
    let text = '';
    stream.on('response.output_text.delta', (e) => {
      text += e.delta;
    });
    const final = await stream.finalResponse();
    expect(text).toBe('Hello from openai emulator. You said: stream please');
    expect(final.output_text).toBe(text);
  });

  it('calls a function when scripted, streams its arguments, and takes the round trip back', async () => {
    emu.enqueue({ kind: 'tool_calls', calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] });
    const ev = events((await post({ model: 'gpt-4.1', input: 'weather in Paris?', tools: [weather], stream: true })).text);
    const names = ev.map((e) => e.event);
    expect(names).toContain('response.function_call_arguments.delta');
    const args = ev.filter((e) => e.event === 'response.function_call_arguments.delta').map((e) => e.data.delta).join('');
    expect(JSON.parse(args)).toEqual({ city: 'Paris' });
    expect(ev.find((e) => e.event === 'response.function_call_arguments.done')?.data).toMatchObject({ arguments: '{"city":"Paris"}', name: 'get_weather' });
    const call = (ev.at(-1)?.data.response as { output: Json[] }).output[0] as Json;
    expect(call).toMatchObject({ type: 'function_call', status: 'completed', name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(call.call_id).toMatch(/^call_/);

    const next = await client.responses.create({
      model: 'gpt-4.1',
      store: false,
      tools: [weather],
      input: [{ role: 'user', content: 'weather in Paris?' }, call as unknown as OpenAI.Responses.ResponseFunctionToolCall, { type: 'function_call_output', call_id: call.call_id as string, output: '{"temp":21}' }],
    });
    expect(next.output_text).toBe('Hello from openai emulator. You said: weather in Paris?');

    const orphan = await post({ model: 'gpt-4.1', input: [{ type: 'function_call_output', call_id: 'call_nope', output: 'x' }] });
    expect(orphan.status).toBe(400);
    expect(orphan.json().error).toMatchObject({ message: 'No tool call found for function call output with call_id call_nope.', type: 'invalid_request_error' });
  });

  it('calls a tool unscripted when tool_choice requires one, with arguments from its schema', async () => {
    const r = await client.responses.create({ model: 'gpt-4.1', input: 'go', tools: [weather], tool_choice: { type: 'function', name: 'get_weather' } });
    expect(r.output[0]).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city":"example city"}' });
    const auto = await client.responses.create({ model: 'gpt-4.1', input: 'go', tools: [weather] });
    expect(auto.output[0]?.type).toBe('message');
  });

  it('answers a custom (free-text) tool with a custom_tool_call', async () => {
    emu.enqueue({ kind: 'tool_calls', calls: [{ name: 'apply_patch', arguments: { input: '*** Begin Patch\n*** End Patch' } }] });
    const tools = [{ type: 'custom', name: 'apply_patch', description: 'patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: "x"' } }];
    const ev = events((await post({ model: 'gpt-5', input: 'patch it', tools, stream: true })).text);
    expect(ev.filter((e) => e.event === 'response.custom_tool_call_input.delta').map((e) => e.data.delta).join('')).toBe('*** Begin Patch\n*** End Patch');
    const out = (ev.at(-1)?.data.response as { output: Json[] }).output;
    expect(out.at(-1)).toMatchObject({ type: 'custom_tool_call', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch' });
    expect(out.at(-1)).not.toHaveProperty('namespace');
  });

  it('says which namespace a called tool is in', async () => {
    emu.enqueue({ kind: 'tool_calls', calls: [{ name: 'sleep', arguments: { ms: 5 } }, { name: 'exec', arguments: { input: 'text(1)' } }] });
    const tools = [
      { type: 'namespace', name: 'clock', description: 'time', tools: [{ type: 'function', name: 'sleep', parameters: { type: 'object', properties: { ms: { type: 'number' } } } }] },
      { type: 'namespace', name: 'functions', description: '', tools: [{ type: 'custom', name: 'exec', description: 'JavaScript' }] },
    ];
    const out = (await post({ model: 'gpt-5', input: 'wait', tools })).json().output as Json[];
    const calls = [
      { type: 'function_call', name: 'sleep', namespace: 'clock', arguments: '{"ms":5}' },
      { type: 'custom_tool_call', name: 'exec', namespace: 'functions', input: 'text(1)' },
    ];
    expect(out.filter((i) => i.type !== 'reasoning')).toMatchObject(calls);
    // The same tools declared as Codex declares them: an additional_tools input item, no top-level tools.
    emu.enqueue({ kind: 'tool_calls', calls: [{ name: 'sleep', arguments: { ms: 5 } }, { name: 'exec', arguments: { input: 'text(1)' } }] });
    const declared = await post({ model: 'gpt-5', input: [{ type: 'additional_tools', role: 'developer', tools }, { role: 'user', content: 'wait' }] });
    expect((declared.json().output as Json[]).filter((i) => i.type !== 'reasoning')).toMatchObject(calls);
  });

  it('gives reasoning items on a reasoning model: summary when asked, encrypted content when included, reasoning tokens counted', async () => {
    const r = await client.responses.create({ model: 'gpt-5', input: 'think', reasoning: { effort: 'low', summary: 'auto' }, include: ['reasoning.encrypted_content'], store: false });
    const reasoning = r.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.type).toBe('reasoning');
    expect(reasoning.summary[0]?.text).toMatch(/^The user wrote "think"/);
    expect(reasoning.encrypted_content).toMatch(/^gAAAAA/);
    expect(r.usage?.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    expect(r.output_text).toBe('Hello from openai emulator. You said: think');

    // The reasoning item goes back with its encrypted content; without it, nothing is kept to find.
    const back = await post({ model: 'gpt-5', store: false, input: [{ role: 'user', content: 'think' }, reasoning, { role: 'user', content: 'again' }] });
    expect(back.status).toBe(200);
    const lost = await post({ model: 'gpt-5', store: false, input: [{ role: 'user', content: 'think' }, { ...reasoning, encrypted_content: undefined }] });
    expect(lost.status).toBe(404);
    expect((lost.json().error as Json).message).toMatch(/Items are not persisted when `store` is set to false/);

    emu.enqueue({ kind: 'text', text: 'Done.', reasoning: 'Plan the answer.' });
    const ev = events((await post({ model: 'gpt-5', input: 'think', stream: true })).text);
    expect(ev.filter((e) => e.event === 'response.reasoning_summary_text.delta').map((e) => e.data.delta).join('')).toBe('Plan the answer.');
    expect(ev.map((e) => e.event).indexOf('response.reasoning_summary_text.delta')).toBeLessThan(ev.map((e) => e.event).indexOf('response.output_text.delta'));

    const plain = await client.responses.create({ model: 'gpt-5', input: 'think' });
    expect((plain.output[0] as OpenAI.Responses.ResponseReasoningItem).summary).toEqual([]);
  });

  it('stops at max_output_tokens: status incomplete, the reason, the capped count; response.incomplete when streamed', async () => {
    const long = 'word '.repeat(100);
    emu.enqueue({ kind: 'text', text: long });
    const r = await client.responses.create({ model: 'gpt-4.1', input: 'talk', max_output_tokens: 16 });
    expect(r.status).toBe('incomplete');
    expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(r.usage?.output_tokens).toBe(16);
    expect(r.output_text).toBe(long.slice(0, 64));

    emu.enqueue({ kind: 'text', text: long });
    const ev = events((await post({ model: 'gpt-4.1', input: 'talk', max_output_tokens: 16, stream: true })).text);
    expect(ev.at(-1)?.event).toBe('response.incomplete');
    expect(ev.at(-1)?.data.response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });

    const low = await post({ model: 'gpt-4.1', input: 'talk', max_output_tokens: 5 });
    expect(low.status).toBe(400);
    expect((low.json().error as Json).param).toBe('max_output_tokens');
  });

  it('follows a json_schema text format when following requests', async () => {
    const follower = await startEmulator('openai', { followRequests: true });
    try {
      const c = new OpenAI({ apiKey: follower.apiKey, baseURL: follower.baseUrl, maxRetries: 0 });
      const schema = { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name', 'age'], additionalProperties: false };
      const r = await c.responses.create({ model: 'gpt-4.1', input: 'a person', text: { format: { type: 'json_schema', name: 'person', schema, strict: true } } });
      expect(JSON.parse(r.output_text)).toEqual({ name: 'example name', age: 1 });
    } finally {
      await follower.close();
    }
  });

  it('honours the failure scenarios as the chat endpoint does', async () => {
    emu.enqueue({ kind: 'error', status: 429 });
    const limited = await post({ model: 'gpt-4.1', input: 'x' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect((limited.json().error as Json).code).toBe('rate_limit_exceeded');

    emu.failFirst(1, 503);
    expect((await post({ model: 'gpt-4.1', input: 'x' })).status).toBe(503);

    emu.throttle('emu-key', 7);
    const throttled = await post({ model: 'gpt-4.1', input: 'x' });
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('retry-after')).toBe('7');
    emu.unthrottle('emu-key');

    emu.enqueue({ kind: 'stream_error', afterChunks: 3 });
    expect((await post({ model: 'gpt-4.1', input: 'x' })).status).toBe(500);

    emu.enqueue({ kind: 'stream_error', afterChunks: 3, text: 'a b c d e f g h' }, { chunkDelayMs: 1 });
    const ev = events((await post({ model: 'gpt-4.1', input: 'x', stream: true })).text);
    expect(ev.filter((e) => e.event === 'response.output_text.delta')).toHaveLength(3);
    expect(ev.at(-1)?.event).toBe('response.failed');
    expect(ev.at(-1)?.data.response).toMatchObject({ status: 'failed', error: { code: 'server_error' } });
    expect(ev.map((e) => e.data.sequence_number)).toEqual(ev.map((_, i) => i));

    emu.enqueue({ kind: 'cut', afterChunks: 2 });
    await expect(post({ model: 'gpt-4.1', input: 'x', stream: true })).rejects.toThrow();

    emu.enqueue({ kind: 'text', text: 'late' }, { delayMs: 20 });
    expect((await client.responses.create({ model: 'gpt-4.1', input: 'x' })).output_text).toBe('late');
  });

  it('refuses what provider_1 refuses: a wrong key, an unknown field, a previous_response_id, a bad tool', async () => {
    const key = await post({ model: 'gpt-4.1', input: 'x' }, 'wrong-key');
    expect(key.status).toBe(401);
    expect((key.json().error as Json).code).toBe('invalid_api_key');
    const unknown = await post({ model: 'gpt-4.1', input: 'x', max_tokens: 20 });
    expect(unknown.status).toBe(400);
    expect(unknown.json().error).toMatchObject({ message: "Unknown parameter: 'max_tokens'.", code: 'unknown_parameter' });
    expect((await post({ model: 'gpt-4.1', input: 'x', previous_response_id: 'resp_abc' })).status).toBe(404);
    expect((await post({ model: 'gpt-4.1', input: 'x', tools: [{ type: 'function', parameters: {} }] })).status).toBe(400);
    expect((await post({ model: 'gpt-5', input: 'x', temperature: 0.2 })).status).toBe(400);
    expect((await post({ input: 'x' })).status).toBe(400);
    // Refused requests take no scenario.
    emu.enqueue({ kind: 'text', text: 'kept' });
    expect((await client.responses.create({ model: 'gpt-4.1', input: 'x' })).output_text).toBe('kept');
  });
});
