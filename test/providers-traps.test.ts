/**
 * The known traps of issue 5, each of which has bitten a peer gateway: several tool
 * calls in one provider_2 stream, Gemini's JSON-schema dialect, structured output that
 * must land in message.content (streamed equal to non-stream), and usage counted once.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AnthropicAdapter } from '../src/providers/anthropic/adapter.ts';
import type { StreamEvent } from '../src/shared/chat-wire.ts';
import { GeminiAdapter } from '../src/providers/gemini/adapter.ts';
import { costMicro, money, startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { assemble, lastBody, WEATHER_TOOL, type Wire } from './helpers/providers.ts';

let h: ChatHarness;
beforeAll(async () => {
  h = await startChatHarness();
});
afterAll(async () => h.close());
beforeEach(() => {
  h.anthropic.reset();
  h.gemini.reset();
});

const hi = [{ role: 'user', content: 'Plan my trip' }];

describe('trap: several tool calls in one streamed provider_2 answer', () => {
  const calls = [
    { name: 'get_weather', arguments: { city: 'Paris', days: [1, 2, 3], units: 'metric', note: 'first call, long enough to stream in pieces' } },
    { name: 'get_time', arguments: { zone: 'Europe/Paris', format: 'HH:mm', note: 'second call, also streamed in several fragments' } },
    { name: 'get_weather', arguments: { city: 'Lyon', days: [4], units: 'imperial', note: 'third call, same tool as the first one' } },
  ];
  const tools = [WEATHER_TOOL, { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } } }];

  it('each call keeps its own index (the tool ordinal, not the block index) and id; arguments never mix; equal to the non-stream answer', async () => {
    const { key } = await h.gw.account();
    // Thinking and text blocks come first, so block indexes (2, 3, 4) differ from tool ordinals (0, 1, 2).
    const scenario = { kind: 'tool_calls' as const, calls, text: 'Let me look these up.', reasoning: 'Three lookups are needed.' };
    h.anthropic.enqueue(scenario, { chunkDelayMs: 1 });
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'claude-legacy', messages: hi, tools, stream: true } });
    const s = assemble(r.text);
    expect(s.done).toBe(true);
    expect(s.finish).toBe('tool_calls');
    expect(s.reasoning).toBe('Three lookups are needed.');
    expect(s.content).toBe('Let me look these up.');
    expect(s.calls.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(s.calls.map((c) => c.name)).toEqual(['get_weather', 'get_time', 'get_weather']);
    s.calls.forEach((c, i) => expect(JSON.parse(c.args), `call ${i}`).toEqual(calls[i]?.arguments));
    expect(new Set(s.calls.map((c) => c.id)).size).toBe(3);
    // Several argument fragments per call arrived, each under its own index, in order.
    for (const index of [0, 1, 2]) expect(s.toolDeltas.filter((d) => d.index === index && (d.args ?? '') !== '').length).toBeGreaterThan(1);
    const order = s.toolDeltas.map((d) => d.index);
    expect(order).toEqual([...order].sort());

    h.anthropic.enqueue(scenario);
    const whole = await h.gw.api('/chat/completions', { key, body: { model: 'claude-legacy', messages: hi, tools } });
    const message = whole.json.choices[0].message;
    expect(message.content).toBe(s.content);
    expect(message.reasoning_content).toBe(s.reasoning);
    expect(message.tool_calls.map((c: Wire) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual(s.calls.map((c) => [c.name, JSON.parse(c.args)]));
  });

  it('the decoder keeps arguments apart even when deltas of two tool blocks interleave', () => {
    const decoder = new AnthropicAdapter().streamDecoder();
    const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
    const delta = (index: number, partial: string) => ev('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: partial } });
    const wire = [
      ev('message_start', { type: 'message_start', message: { usage: { input_tokens: 5, output_tokens: 1 } } }),
      ev('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      ev('content_block_stop', { type: 'content_block_stop', index: 0 }),
      ev('content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_A', name: 'a', input: {} } }),
      ev('content_block_start', { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_B', name: 'b', input: {} } }),
      delta(1, '{"x":'), delta(2, '{"y":'), delta(1, '1}'), delta(2, '2}'),
      ev('content_block_stop', { type: 'content_block_stop', index: 1 }),
      ev('content_block_stop', { type: 'content_block_stop', index: 2 }),
      ev('message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } }),
      ev('message_stop', { type: 'message_stop' }),
    ].join('');
    const events: StreamEvent[] = [];
    // Fed in awkward pieces, as a socket delivers them.
    for (let i = 0; i < wire.length; i += 7) events.push(...decoder.push(wire.slice(i, i + 7)));
    const end = decoder.end();
    events.push(...end.events);
    expect(end.complete).toBe(true);
    const args: Record<number, string> = {};
    for (const e of events) if (e.type === 'tool_arguments') args[e.index] = (args[e.index] ?? '') + e.fragment;
    expect(events.filter((e) => e.type === 'tool_call')).toEqual([
      { type: 'tool_call', index: 0, id: 'call_A', name: 'a' },
      { type: 'tool_call', index: 1, id: 'call_B', name: 'b' },
    ]);
    expect(args).toEqual({ 0: '{"x":1}', 1: '{"y":2}' });
    expect(events.filter((e) => e.type === 'finish')).toEqual([{ type: 'finish', reason: 'tool_calls' }]);
    expect(events.filter((e) => e.type === 'usage').at(-1)).toEqual({ type: 'usage', usage: { promptTokens: 5, completionTokens: 9 } });
  });
});

describe('trap: Gemini refuses some JSON-schema keywords in tool and response schemas', () => {
  const clientSchema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'Trip',
    type: 'object',
    additionalProperties: false,
    $defs: {
      place: {
        type: 'object',
        title: 'Place',
        additionalProperties: false,
        properties: { name: { type: 'string', minLength: 1, maxLength: 80, default: 'Paris' }, country: { type: 'string', pattern: '^[A-Z]{2}$' } },
        required: ['name', 'country'],
      },
    },
    properties: {
      from: { $ref: '#/$defs/place' },
      to: { $ref: '#/$defs/place', description: 'Where to go' },
      nights: { type: 'integer', exclusiveMinimum: 0, maximum: 30 },
      budget: { type: 'number', exclusiveMaximum: 10000, examples: [500] },
      mode: { oneOf: [{ const: 'train' }, { const: 'plane' }] },
      stops: { type: 'array', items: { $ref: '#/$defs/place' }, minItems: 0, maxItems: 3, uniqueItems: true },
      extra: { allOf: [{ type: 'object', properties: { pets: { type: 'boolean' } } }, { properties: { kids: { type: 'integer', minimum: 0 } }, required: ['kids'] }] },
    },
    required: ['from', 'to', 'nights', 'mode', 'ghost'],
  };
  const place = (description?: string) => ({
    type: 'object',
    ...(description === undefined ? { description: 'Place' } : { description }),
    properties: { name: { type: 'string', minLength: 1, maxLength: 80, description: '(default: "Paris")' }, country: { type: 'string', pattern: '^[A-Z]{2}$' } },
    required: ['name', 'country'],
  });
  const expected = {
    type: 'object',
    description: 'Trip',
    properties: {
      from: place(),
      to: place('Where to go'),
      nights: { type: 'integer', minimum: 1, maximum: 30 },
      budget: { type: 'number', maximum: 10000, description: '(less than 10000, exclusive)' },
      mode: { anyOf: [{ enum: ['train'] }, { enum: ['plane'] }] },
      stops: { type: 'array', items: place(), minItems: 0, maxItems: 3, description: '(uniqueItems: true)' },
      extra: { type: 'object', properties: { pets: { type: 'boolean' }, kids: { type: 'integer', minimum: 0 } }, required: ['kids'] },
    },
    // `ghost` names no property: Gemini would refuse it.
    required: ['from', 'to', 'nights', 'mode'],
  };
  const refused = new Set(['$schema', '$defs', 'definitions', '$ref', 'additionalProperties', 'default', 'title', 'const', 'oneOf', 'allOf', 'exclusiveMinimum', 'exclusiveMaximum', 'examples', 'uniqueItems']);
  const keysIn = (node: unknown, out: Set<string> = new Set()): Set<string> => {
    if (Array.isArray(node)) node.forEach((n) => keysIn(n, out));
    else if (typeof node === 'object' && node !== null) {
      for (const [k, v] of Object.entries(node)) {
        out.add(k);
        keysIn(v, out);
      }
    }
    return out;
  };

  it('tool parameters and the response schema arrive converted: references inlined, refused keywords dropped or converted, constraints kept', async () => {
    const { key } = await h.gw.account();
    h.gemini.enqueue({ kind: 'text', text: '{}' });
    const r = await h.gw.api('/chat/completions', {
      key,
      body: {
        model: 'gemini-test', messages: hi,
        tools: [{ type: 'function', function: { name: 'book_trip', parameters: clientSchema } }],
        response_format: { type: 'json_schema', json_schema: { name: 'trip', schema: clientSchema, strict: true } },
      },
    });
    expect(r.status).toBe(200);
    const body = lastBody(h.gemini);
    const params = body.tools[0].functionDeclarations[0].parametersJsonSchema;
    const response = body.generationConfig.responseJsonSchema;
    expect(params).toEqual(expected);
    expect(response).toEqual(expected);
    // Field names such as `name` inside `properties` are not keywords; keywords are checked on schemas only.
    const found = [...keysIn(params)].filter((k) => refused.has(k));
    expect(found).toEqual([]);
  });

  it('a recursive reference is unrolled to a bounded depth instead of being refused or looping', async () => {
    const { key } = await h.gw.account();
    const tree = { type: 'object', properties: { tree: { $ref: '#/$defs/node' } }, $defs: { node: { type: 'object', properties: { label: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } } } } };
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gemini-test', messages: hi, tools: [{ type: 'function', function: { name: 'draw', parameters: tree } }] } });
    expect(r.status).toBe(200);
    let node = lastBody(h.gemini).tools[0].functionDeclarations[0].parametersJsonSchema.properties.tree;
    let depth = 0;
    while (node.properties !== undefined) {
      expect(node.properties.label).toEqual({ type: 'string' });
      node = node.properties.children.items;
      depth++;
    }
    expect(depth).toBe(3);
    expect(node).toEqual({ type: 'object', description: 'Recursive value (nesting is not expanded further).' });
    expect(JSON.stringify(lastBody(h.gemini))).not.toContain('$ref');
  });
});

describe('trap: structured output lands in message.content, and the stream concatenates to the non-stream answer', () => {
  const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
  const format = { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } };
  const json = '{"answer":"forty-two, as ```computed``` earlier"}';
  const cases: [string, 'anthropic' | 'gemini', string][] = [
    ['provider_2, native schema', 'anthropic', json],
    ['provider_2, older model: instruction, answer fenced', 'anthropic', `\`\`\`json\n${json}\n\`\`\``],
    ['provider_3, native schema', 'gemini', json],
  ];
  for (const [name, kind, upstream] of cases) {
    it(name, async () => {
      const { key } = await h.gw.account();
      const model = kind === 'gemini' ? 'gemini-test' : name.includes('older') ? 'claude-legacy' : 'claude-test';
      const emulator = kind === 'gemini' ? h.gemini : h.anthropic;
      // Tools are declared too: the JSON still comes as content, never as a tool call nobody asked for.
      const body = { model, messages: hi, response_format: format, tools: [WEATHER_TOOL] };
      emulator.enqueue({ kind: 'text', text: upstream });
      const whole = await h.gw.api('/chat/completions', { key, body });
      expect(whole.json.choices[0].message.content).toBe(json);
      expect(whole.json.choices[0].message.tool_calls).toBeUndefined();
      expect(whole.json.choices[0].finish_reason).toBe('stop');
      for (const chunks of [1, 3, 11, 40]) {
        emulator.enqueue({ kind: 'text', text: upstream, chunks });
        const s = assemble((await h.gw.api('/chat/completions', { key, body: { ...body, stream: true } })).text);
        expect(s.content, `${chunks} chunks`).toBe(json);
        expect(s.calls).toEqual([]);
      }
      // No output tool is invented and no tool is forced: the provider sees the client's tools only.
      const sent = lastBody(emulator);
      const declared = kind === 'gemini' ? sent.tools[0].functionDeclarations.map((d: Wire) => d.name) : sent.tools.map((t: Wire) => t.name);
      expect(declared).toEqual(['get_weather']);
      expect(sent.tool_choice ?? sent.toolConfig).toBeUndefined();
    });
  }
});

describe('trap: usage counts every billed token once', () => {
  it('provider_2: input_tokens excludes cache reads and writes, so all three are added', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    h.anthropic.enqueue({ kind: 'text', text: 'ok', usage: { input: 50, cacheRead: 1000, cacheWrite: 200, output: 30 } });
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'claude-legacy', messages: hi } });
    const cached = { prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 200 } };
    expect(r.json.usage).toEqual({ prompt_tokens: 1250, completion_tokens: 30, total_tokens: 1280, ...cached });
    h.anthropic.enqueue({ kind: 'text', text: 'ok', usage: { input: 50, cacheRead: 1000, cacheWrite: 200, output: 30 } });
    const s = assemble((await h.gw.api('/chat/completions', { key, body: { model: 'claude-legacy', messages: hi, stream: true, stream_options: { include_usage: true } } })).text);
    expect(s.usage).toEqual({ prompt_tokens: 1250, completion_tokens: 30, total_tokens: 1280, ...cached });
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - 2 * costMicro(1250, 30), held: 0 });
  });

  it('provider_3: promptTokenCount already holds cached tokens; thoughts are added to the output; stream usage is cumulative, not summed', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    const usage = { input: 1000, cacheRead: 800, output: 30, reasoning: 300 };
    h.gemini.enqueue({ kind: 'text', text: 'ok', reasoning: 'Thinking it over.', usage });
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'gemini-test', messages: hi } });
    const details = { prompt_tokens_details: { cached_tokens: 800 }, completion_tokens_details: { reasoning_tokens: 300 } };
    expect(r.json.usage).toEqual({ prompt_tokens: 1000, completion_tokens: 330, total_tokens: 1330, ...details });
    expect(r.json.choices[0].message.reasoning_content).toBe('Thinking it over.');
    h.gemini.enqueue({ kind: 'text', text: 'a longer answer in many chunks', chunks: 8, reasoning: 'Thinking it over.', usage });
    const s = assemble((await h.gw.api('/chat/completions', { key, body: { model: 'gemini-test', messages: hi, stream: true, stream_options: { include_usage: true } } })).text);
    expect(s.usage).toEqual({ prompt_tokens: 1000, completion_tokens: 330, total_tokens: 1330, ...details });
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - 2 * costMicro(1000, 330), held: 0 });
  });

  it('provider_3: tool-use prompt tokens are billed as prompt; cached content and thoughts are parts of input and output', () => {
    const completion = new GeminiAdapter().parseResponse({
      candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] }, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: 100, cachedContentTokenCount: 60, toolUsePromptTokenCount: 40, candidatesTokenCount: 5, thoughtsTokenCount: 7, totalTokenCount: 152 },
    });
    expect(completion.usage).toEqual({ promptTokens: 140, completionTokens: 12, cacheReadTokens: 60, reasoningTokens: 7 });
  });
});
