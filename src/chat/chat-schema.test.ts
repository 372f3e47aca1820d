/**
 * The published chat schema and the route's own field checks accept exactly the same bodies:
 * generated bodies (a valid one with one to three fields changed to valid, invalid, null or
 * odd values) are judged by both. parseChatRequest is run here without its schema check, so
 * a difference in either direction shows.
 */
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../shared/errors.ts';
import { chatRequestSchema } from './chat-schema.ts';
import { parseChatRequest } from './chat-request.ts';

vi.mock('./chat-schema.ts', async (original) => ({ ...(await original<typeof import('./chat-schema.ts')>()), checkChatShape: () => undefined }));

const fn = (name: string, extra: Record<string, unknown> = {}) => ({ type: 'function', function: { name, ...extra } });
const many = <T>(n: number, make: (i: number) => T) => Array.from({ length: n }, (_, i) => make(i));

const POOLS: Record<string, unknown[]> = {
  model: ['m', '', 3, null, ['m']],
  messages: [
    [{ role: 'user', content: 'hi' }], [], 'x', null, [null], [{ role: 'user' }], [{ content: 'x' }],
    [{ role: 'function', name: 'f', content: 'x' }], [{ role: 'user', content: 'q' }, { role: 'tool', content: 'r' }],
    [{ role: 'tool', content: 'r', tool_call_id: '' }], [{ role: 'tool', content: null, tool_call_id: 'c' }],
    [{ role: 'user', content: [] }], [{ role: 'user', content: [{ type: 'text' }] }], [{ role: 'user', content: [{ type: 'text', text: 5 }] }],
    [{ role: 'user', content: [{ type: 'image_url', image_url: 5 }] }], [{ role: 'user', content: [{ type: 'input_audio' }] }], [{ role: 'user', content: [{ text: 'x' }] }],
    [{ role: 'user', content: [{ type: 'file', file: { file_id: 'f' } }] }], [{ role: 'user', content: [null] }], [{ role: 'user', content: 5 }],
    [{ role: 'user', content: 'x', name: 5 }], [{ role: 'system', content: null }], [{ role: 'system', content: [{ type: 'refusal', refusal: 'r' }] }],
    [{ role: 'developer', content: [{ type: 'image_url', image_url: 'https://x/y.png' }] }], [{ role: 'developer', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }],
    [{ role: 'assistant', content: null }], [{ role: 'assistant' }], [{ role: 'assistant', content: null, refusal: 5 }], [{ role: 'assistant', content: null, refusal: 'no' }],
    [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'x', function: { name: 'f', arguments: { a: 1 } } }] }],
    [{ role: 'assistant', content: null, tool_calls: [{ id: 1, function: { name: 'f' } }] }], [{ role: 'assistant', content: null, tool_calls: [] }],
    [{ role: 'assistant', content: 'ok', tool_calls: 'x' }], [{ role: 'assistant', content: 'ok', annotations: [], reasoning_content: 'r' }],
    [{ role: 'assistant', content: [{ type: 'image_url' }] }], [{ role: 'robot', content: 'x' }],
    [{ role: 'system', content: [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'b' }] }],
    [{ role: 'user', content: 'q', cache_control: { type: 'ephemeral', ttl: '1h' } }], [{ role: 'user', content: 'q', cache_control: { type: 'ephemeral', ttl: '2h' } }],
    [{ role: 'user', content: [{ type: 'text', text: 'doc', cache_control: { type: 'persistent' } }] }], [{ role: 'user', content: [{ type: 'image_url', image_url: 'https://x/y.png', cache_control: null }] }],
    [{ role: 'user', content: [{ type: 'text', text: 'doc', cache_control: { type: 'ephemeral', ttl: '5m', extra: 1 } }] }], [{ role: 'user', content: [{ type: 'input_audio', cache_control: 'x' }] }],
    [{ role: 'assistant', content: 'ok', cache_control: { type: 'ephemeral', ttl: null } }], [{ role: 'user', content: 'q' }, { role: 'tool', content: 'r', tool_call_id: 'c', cache_control: {} }],
    many(5000, () => ({ role: 'user', content: 'x' })), many(5001, () => ({ role: 'user', content: 'x' })),
  ],
  max_tokens: [1, 0, -1, 1.5, 2 ** 60, '5', null, true],
  max_completion_tokens: [100, 0, 1.5, null],
  temperature: [0, 2, 2.1, -0.1, '1', null, 1.5],
  top_p: [1, 1.1, -0.1, null],
  frequency_penalty: [-2, 2, 3, null],
  presence_penalty: [0, '1', -3, null],
  stop: ['x', '', ['a', ''], many(16, String), many(17, String), [1], {}, null, []],
  seed: [1, -(2 ** 53) + 1, -(2 ** 53) - 2, 1.5, 2 ** 60, '1', null],
  logit_bias: [{ 1: 5 }, { a: 1 }, { 1: 101 }, { 1: -100 }, { 1: 'x' }, [], null, {}],
  stream: [true, false, 'yes', null, 1],
  stream_options: [{ include_usage: true }, { include_usage: 'x' }, { include_usage: null }, [], 5, null, {}],
  tools: [
    [fn('f')], [{ type: 'retrieval' }], [{ type: 'function' }], [fn('bad name')], [fn('')], [fn('f', { parameters: [] })], [fn('f', { parameters: { type: 'object' } })],
    [fn('f', { description: 5 })], [fn('f', { strict: 'x' })], [fn('f', { strict: null, description: null, parameters: null })], [], null, 'x', [null],
    many(512, (i) => fn(`f${i}`)), many(513, (i) => fn(`f${i}`)),
    [{ ...fn('f'), cache_control: { type: 'ephemeral', ttl: '1h' } }], [{ ...fn('f'), cache_control: { type: 'ephemeral', ttl: 60 } }],
  ],
  tool_choice: ['auto', 'none', 'required', 'x', { type: 'function', function: { name: 'f' } }, { type: 'function', function: { name: 'g' } }, { type: 'function' }, { type: 'tool', function: { name: 'f' } }, null, 5],
  parallel_tool_calls: [true, 'x', null],
  response_format: [
    { type: 'text' }, { type: 'json_object' }, { type: 'xml' }, { type: 'json_schema' }, { type: 'json_schema', json_schema: { name: 'n' } },
    { type: 'json_schema', json_schema: { name: 'bad name' } }, { type: 'json_schema', json_schema: { name: 'n', schema: [] } },
    { type: 'json_schema', json_schema: { name: 'n', schema: { type: 'object' }, strict: true, description: 'd' } },
    { type: 'json_schema', json_schema: { name: 'n', strict: 'x' } }, { type: 'json_schema', json_schema: { name: 'n', description: 5 } }, 'text', null, {},
  ],
  user: ['u', 'u'.repeat(512), 'u'.repeat(513), 5, null],
  reasoning_effort: ['low', 5, null],
  verbosity: ['high', {}, null],
  n: [1, 2, 0, 1.5, 'x', null],
  logprobs: [false, true, 0, null],
  top_logprobs: [3, 0, null],
  audio: [{ voice: 'alloy' }, {}, null],
  modalities: [['text'], ['text', 'audio'], [], 'text', null],
  functions: [[], [{ name: 'f' }], null],
  function_call: ['auto', null],
  web_search_options: [{}, null],
  store: [true],
  metadata: [{ a: 1 }],
};

const mutation = fc.constantFrom(...Object.keys(POOLS)).chain((field) => fc.constantFrom(...(POOLS[field] as unknown[])).map((value) => [field, value] as const));
const body = fc.array(mutation, { minLength: 1, maxLength: 3 }).map((changes) => {
  const b: Record<string, unknown> = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
  for (const [field, value] of changes) b[field] = value;
  return b;
});

function routeAccepts(b: unknown): boolean {
  try {
    parseChatRequest(b);
    return true;
  } catch (error) {
    if (error instanceof GatewayError && error.code === 'invalid_request') return false;
    throw error;
  }
}

describe('the published chat schema and the route agree', () => {
  it('on every single-field change from the pools', () => {
    for (const [field, values] of Object.entries(POOLS)) {
      for (const value of values) {
        const b = { model: 'm', messages: [{ role: 'user', content: 'hi' }], [field]: value };
        expect(chatRequestSchema.safeParse(b).success, `${field}: ${JSON.stringify(value)?.slice(0, 80)}`).toBe(routeAccepts(b));
      }
    }
  });

  it('on generated bodies with up to three changes', () => {
    fc.assert(fc.property(body, (b) => chatRequestSchema.safeParse(b).success === routeAccepts(b)), { numRuns: 3000, seed: 20261122 });
  });

  it('on bodies that are not objects', () => {
    for (const b of [null, 5, 'x', [], [{ model: 'm' }], true]) expect(chatRequestSchema.safeParse(b).success).toBe(routeAccepts(b));
  });
});
