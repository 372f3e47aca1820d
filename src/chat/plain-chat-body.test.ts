/**
 * The cheap pass never accepts a body the zod schema refuses (it may leave a valid one to
 * zod): generated bodies mixing valid, edge and invalid values are judged by both.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chatRequestSchema } from './chat-schema.ts';
import { isPlainChatBody } from './plain-chat-body.ts';

const ODD = [null, undefined, '', 'x', 0, -1, 1, 1.5, 2, 2.1, -2, -2.1, 3, 513, Infinity, NaN, 2 ** 60, true, false, [], ['x'], {}, { include_usage: 'yes' }];
const POOLS: Record<string, unknown[]> = {
  model: ['m', '', 3, null, ['m'], undefined],
  messages: [
    [{ role: 'user', content: 'hi' }], [], 'x', null, [null], [{ role: 'user' }], [{ content: 'x' }], [{ role: 'robot', content: 'x' }],
    [{ role: 'function', name: 'f', content: 'x' }], [{ role: 'system', content: 's' }, { role: 'user', content: 'q', name: 5 }],
    [{ role: 'developer', content: 'd' }], [{ role: 'tool', content: 'r' }], [{ role: 'tool', content: 'r', tool_call_id: '' }],
    [{ role: 'tool', content: 'r', tool_call_id: 'c' }], [{ role: 'tool', content: null, tool_call_id: 'c' }],
    [{ role: 'assistant', content: 'ok' }], [{ role: 'assistant', content: 'ok', tool_calls: 'x' }], [{ role: 'assistant', content: 'ok', tool_calls: null }],
    [{ role: 'assistant', content: null }], [{ role: 'assistant', content: 'ok', refusal: 5, reasoning_content: 'r' }],
    [{ role: 'user', content: [{ type: 'text', text: 'a' }] }], [{ role: 'user', content: 5 }], [['user', 'x']],
    Array.from({ length: 5000 }, () => ({ role: 'user', content: 'x' })), Array.from({ length: 5001 }, () => ({ role: 'user', content: 'x' })),
  ],
  max_tokens: ODD, max_completion_tokens: ODD, temperature: ODD, top_p: ODD, frequency_penalty: ODD, presence_penalty: ODD,
  seed: [...ODD, Number.MIN_SAFE_INTEGER, Number.MIN_SAFE_INTEGER - 2], stream: ODD, parallel_tool_calls: ODD,
  stream_options: [...ODD, { include_usage: true }, { include_usage: null }, [{ include_usage: true }]],
  stop: [...ODD, ['a', ''], Array.from({ length: 16 }, () => 's'), Array.from({ length: 17 }, () => 's'), [1]],
  user: [...ODD, 'u'.repeat(512), 'u'.repeat(513)], reasoning_effort: ODD, verbosity: ODD, n: ODD, logprobs: ODD,
  logit_bias: [null, { 1: 5 }, { a: 1 }], tools: [null, [], 'x'], tool_choice: [null, 'auto', 'maybe'], response_format: [null, { type: 'text' }, { type: 'x' }],
  modalities: [null, ['text'], ['audio']], top_logprobs: [null, 2], audio: [null, {}], functions: [null, []], function_call: [null, 'auto'],
  web_search_options: [null, {}], unknown_field: ODD,
};
const FIELDS = Object.keys(POOLS);

const body = fc.tuple(
  fc.array(fc.tuple(fc.constantFrom(...FIELDS), fc.nat()), { maxLength: 6 }),
).map(([changes]) => {
  const b: Record<string, unknown> = { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] };
  for (const [field, i] of changes) {
    const pool = POOLS[field] as unknown[];
    b[field] = pool[i % pool.length];
  }
  return b;
});

describe('the cheap pass over a chat body', () => {
  it('accepts only bodies the schema accepts', () => {
    fc.assert(fc.property(body, (b) => {
      if (isPlainChatBody(b)) expect(chatRequestSchema.safeParse(b).success).toBe(true);
    }), { numRuns: 3000 });
  });

  it('takes the common body, so zod is not run for it', () => {
    expect(isPlainChatBody({ model: 'gpt-6-luna', messages: [{ role: 'system', content: 's' }, { role: 'user', content: 'Say hello.' }], max_tokens: 64, stream: false })).toBe(true);
    expect(isPlainChatBody({ model: 'm', messages: [{ role: 'user', content: 'q' }], stream: true, stream_options: { include_usage: true }, temperature: 0.7, stop: ['\n'], seed: 1, future_field: { a: 1 } })).toBe(true);
  });

  it('leaves content parts, tools and formats to zod', () => {
    expect(isPlainChatBody({ model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }] }] })).toBe(false);
    expect(isPlainChatBody({ model: 'm', messages: [{ role: 'user', content: 'a' }], tools: [] })).toBe(false);
    expect(isPlainChatBody({ model: 'm', messages: [{ role: 'user', content: 'a' }], response_format: { type: 'text' } })).toBe(false);
  });
});
