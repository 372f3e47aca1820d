/** The official `openai` client, pointed at the gateway, against provider_2 and provider_3 models: tool round trip and parse(). */
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { lastBody } from './helpers/providers.ts';

let h: ChatHarness;
let client: OpenAI;
beforeAll(async () => {
  h = await startChatHarness();
  const { key } = await h.gw.account({ credits: 100 });
  client = new OpenAI({ apiKey: key, baseURL: `${h.gw.url}/api/v1`, maxRetries: 0 });
});
afterAll(async () => h.close());
beforeEach(() => {
  h.anthropic.reset();
  h.gemini.reset();
});

const models = [
  { model: 'claude-test', emulator: () => h.anthropic },
  { model: 'claude-legacy', emulator: () => h.anthropic },
  { model: 'gemini-test', emulator: () => h.gemini },
];

describe.each(models)('openai client → $model', ({ model, emulator }) => {
  it('a tool-call round trip (non-stream, then streamed with the stream helper)', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
    emulator().enqueue({ kind: 'tool_calls', calls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] });
    const first = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Weather in Oslo?' }], tools });
    const message = first.choices[0]?.message;
    const call = message?.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    if (call?.type !== 'function' || message === undefined) throw new Error('no call');
    expect(call.id).toMatch(/^call_/);
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Oslo' });
    emulator().enqueue({ kind: 'text', text: 'It is 3C in Oslo.' });
    const second = await client.chat.completions.create({
      model, tools,
      messages: [{ role: 'user', content: 'Weather in Oslo?' }, message, { role: 'tool', tool_call_id: call.id, content: '3C' }],
    });
    expect(second.choices[0]?.message.content).toBe('It is 3C in Oslo.');

    emulator().enqueue({ kind: 'tool_calls', calls: [{ name: 'get_weather', arguments: { city: 'Bergen' } }] });
    const stream = client.chat.completions.stream({ model, messages: [{ role: 'user', content: 'Weather in Bergen?' }], tools });
    const final = await stream.finalChatCompletion();
    const streamedCall = final.choices[0]?.message.tool_calls?.[0];
    expect(final.choices[0]?.finish_reason).toBe('tool_calls');
    expect(streamedCall?.type === 'function' && JSON.parse(streamedCall.function.arguments)).toEqual({ city: 'Bergen' });
  });

  it('chat.completions.parse with a zod schema (streamed too)', async () => {
    const Answer = z.object({ city: z.string(), celsius: z.number() });
    // The older provider_2 model gets the schema as an instruction and may fence its answer; the fences are stripped.
    const text = model === 'claude-legacy' ? '```json\n{"city":"Oslo","celsius":3}\n```' : '{"city":"Oslo","celsius":3}';
    emulator().enqueue({ kind: 'text', text });
    const parsed = await client.chat.completions.parse({ model, messages: [{ role: 'user', content: 'Weather?' }], response_format: zodResponseFormat(Answer, 'answer') });
    expect(parsed.choices[0]?.message.parsed).toEqual({ city: 'Oslo', celsius: 3 });
    expect(parsed.choices[0]?.message.tool_calls ?? []).toEqual([]);
    const sent = lastBody(emulator());
    if (model === 'claude-test') expect(sent.output_config.format.schema.properties).toEqual({ city: { type: 'string' }, celsius: { type: 'number' } });
    if (model === 'gemini-test') expect(sent.generationConfig.responseJsonSchema.required).toEqual(['city', 'celsius']);
    emulator().enqueue({ kind: 'text', text, chunks: 6 });
    const stream = client.chat.completions.stream({ model, messages: [{ role: 'user', content: 'Weather?' }], response_format: zodResponseFormat(Answer, 'answer') });
    expect((await stream.finalChatCompletion()).choices[0]?.message.parsed).toEqual({ city: 'Oslo', celsius: 3 });
  });
});
