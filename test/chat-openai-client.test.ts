/** The official `openai` npm client, pointed at the gateway, works unchanged. */
import OpenAI, { APIError } from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startChatHarness, type ChatHarness } from './helpers/chat.ts';

let h: ChatHarness;
let client: OpenAI;
beforeAll(async () => {
  h = await startChatHarness();
  const { key } = await h.gw.account({ credits: 100 });
  client = new OpenAI({ apiKey: key, baseURL: `${h.gw.url}/api/v1`, maxRetries: 0 });
});
afterAll(async () => h.close());
beforeEach(() => h.openai.reset());

describe('openai client', () => {
  it('chat.completions.create', async () => {
    h.openai.enqueue({ kind: 'text', text: 'Hello from the gateway', usage: { input: 5, output: 4 } });
    const completion = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] });
    expect(completion.choices[0]?.message.content).toBe('Hello from the gateway');
    expect(completion.usage?.total_tokens).toBe(9);
    expect(completion.id).toMatch(/^chatcmpl-/);
  });

  it('stream: async iteration', async () => {
    h.openai.enqueue({ kind: 'text', text: 'one two three', chunks: 3 });
    const stream = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: number | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage.total_tokens;
    }
    expect(text).toBe('one two three');
    expect(usage).toBeGreaterThan(0);
  });

  it('stream: the stream helper', async () => {
    h.openai.enqueue({ kind: 'text', text: 'helper text', chunks: 2 });
    const stream = client.chat.completions.stream({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] });
    const deltas: string[] = [];
    stream.on('content', (delta) => deltas.push(delta));
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]?.message.content).toBe('helper text');
    expect(deltas.join('')).toBe('helper text');
  });

  it('a tool-call round trip', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
    h.openai.enqueue({ kind: 'tool_calls', calls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] });
    const first = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Weather in Oslo?' }], tools });
    const message = first.choices[0]?.message;
    const call = message?.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call?.type).toBe('function');
    if (call?.type !== 'function' || message === undefined) throw new Error('no call');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Oslo' });
    h.openai.enqueue({ kind: 'text', text: 'It is 3C in Oslo.' });
    const second = await client.chat.completions.create({
      model: 'gpt-test', tools,
      messages: [{ role: 'user', content: 'Weather in Oslo?' }, message, { role: 'tool', tool_call_id: call.id, content: '3C' }],
    });
    expect(second.choices[0]?.message.content).toBe('It is 3C in Oslo.');
  });

  it('chat.completions.parse with a zod schema', async () => {
    const Answer = z.object({ city: z.string(), celsius: z.number() });
    h.openai.enqueue({ kind: 'text', text: '{"city":"Oslo","celsius":3}' });
    const parsed = await client.chat.completions.parse({ model: 'gpt-test', messages: [{ role: 'user', content: 'Weather?' }], response_format: zodResponseFormat(Answer, 'answer') });
    expect(parsed.choices[0]?.message.parsed).toEqual({ city: 'Oslo', celsius: 3 });
    const sent = h.openai.requests[0]?.body as { response_format: { type: string; json_schema: { name: string; strict: boolean } } };
    expect(sent.response_format.type).toBe('json_schema');
    expect(sent.response_format.json_schema).toMatchObject({ name: 'answer', strict: true });
  });

  it('an error surfaces as APIError with our status and code', async () => {
    const error = await client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(404);
    expect((error as APIError).code).toBe('model_not_found');
    h.openai.enqueue({ kind: 'error', status: 429 });
    const throttled = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect((throttled as APIError).status).toBe(429);
    expect((throttled as APIError).code).toBe('upstream_rate_limited');
  });
});
