/**
 * The Vercel AI SDK (`ai` + @ai-sdk/openai's `responses` model), unchanged, through the gateway's
 * Responses route: generateText, streamText and a tool loop on a provider_1 model (native) and a
 * provider_2 model (translated); the user sees the text and usage, is charged exactly, and the job is recorded.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { costMicro, startClientsHarness, type ClientsHarness } from './helpers/responses-clients.ts';

let h: ClientsHarness;
let provider: ReturnType<typeof createOpenAI>;
beforeAll(async () => {
  h = await startClientsHarness();
  provider = createOpenAI({ apiKey: h.key, baseURL: h.baseUrl });
});
afterAll(async () => h.close());
beforeEach(() => {
  h.openai.reset();
  h.anthropic.reset();
  h.gemini.reset();
});

/**
 * Each model with its provider's emulator, a reasoning model of that provider, its finish value for reaching the
 * output limit, and whether its output count leaves the reasoning out (provider_3 reports thoughts apart; billed as output).
 */
const MODELS = [
  { model: 'gpt-test', upstream: 'openai', reasoner: 'gpt-reasoner', lengthFinish: 'length', thoughtsApart: false },
  { model: 'claude-test', upstream: 'anthropic', reasoner: 'claude-test', lengthFinish: 'max_tokens', thoughtsApart: false },
  { model: 'gemini-test', upstream: 'gemini', reasoner: 'gemini-test', lengthFinish: 'MAX_TOKENS', thoughtsApart: true },
] as const;

function responseIdOf(metadata: unknown): string {
  const id = (metadata as { openai?: { responseId?: unknown } } | undefined)?.openai?.responseId;
  if (typeof id !== 'string') throw new Error('no response id in providerMetadata');
  return id;
}

describe.each(MODELS)('the AI SDK on $model ($upstream)', ({ model, upstream, reasoner, lengthFinish, thoughtsApart }) => {
  it('generateText', async () => {
    h[upstream].enqueue({ kind: 'text', text: 'Hello from the gateway.', usage: { input: 21, output: 5 } });
    const before = await h.balance();
    const result = await generateText({ model: provider.responses(model), system: 'Be brief.', prompt: 'Say hello', maxOutputTokens: 200 });
    expect(result.text).toBe('Hello from the gateway.');
    expect(result.finishReason).toBe('stop');
    expect(result.usage).toMatchObject({ inputTokens: 21, outputTokens: 5, totalTokens: 26 });
    expect(await h.balance()).toBe(before - costMicro(21, 5));
    const job = await h.job(responseIdOf(result.providerMetadata));
    expect(job).toMatchObject({ status: 'succeeded', model, cost_credits: costMicro(21, 5) / 1e6 });
    expect(job.usage).toMatchObject({ prompt_tokens: 21, completion_tokens: 5 });
  });

  it('streamText', async () => {
    h[upstream].enqueue({ kind: 'text', text: 'one two three four five', chunks: 5, usage: { input: 30, output: 7 } });
    const before = await h.balance();
    const result = streamText({ model: provider.responses(model), prompt: 'Count to five' });
    const pieces: string[] = [];
    for await (const delta of result.textStream) pieces.push(delta);
    expect(pieces.join('')).toBe('one two three four five');
    expect(pieces.length).toBeGreaterThan(1);
    expect(await result.finishReason).toBe('stop');
    expect(await result.usage).toMatchObject({ inputTokens: 30, outputTokens: 7 });
    const job = await h.job(responseIdOf(await result.providerMetadata));
    expect(job).toMatchObject({ status: 'succeeded', model, cost_credits: costMicro(30, 7) / 1e6 });
    expect(await h.balance()).toBe(before - costMicro(30, 7));
  });

  it('a tool loop: generateText calls the function and answers with its result', async () => {
    h[upstream].enqueue({ kind: 'tool_calls', calls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }], usage: { input: 35, output: 10 } });
    h[upstream].enqueue({ kind: 'text', text: 'It is 3C in Oslo.', usage: { input: 52, output: 8 } });
    const before = await h.balance();
    const result = await generateText({
      model: provider.responses(model),
      prompt: 'Weather in Oslo?',
      tools: { get_weather: tool({ description: 'The weather in a city', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `3C in ${city}` }) },
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe('It is 3C in Oslo.');
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]?.toolCalls[0]).toMatchObject({ toolName: 'get_weather', input: { city: 'Oslo' } });
    expect(JSON.stringify(h[upstream].requests[1]?.body)).toContain('3C in Oslo');
    expect(await h.balance()).toBe(before - costMicro(35, 10) - costMicro(52, 8));
  });

  it('max_output_tokens reached: finishReason length, billed for what was written', async () => {
    // (Usage within the hold: the gateway's estimate of this input and the 16 output tokens.)
    h[upstream].enqueue({ kind: 'text', text: 'word '.repeat(10), finish: lengthFinish, usage: { input: 5, output: 16 } });
    const before = await h.balance();
    const result = await generateText({ model: provider.responses(model), prompt: 'Talk', maxOutputTokens: 16 });
    expect(result.finishReason).toBe('length');
    expect(await h.balance()).toBe(before - costMicro(5, 16));
  });

  it('a tool loop on a reasoning model: the second step refers to the reasoning item by id (item_reference)', async () => {
    // The gateway's headers on each answer, read through the SDK's own fetch.
    const ignored: (string | null)[] = [];
    const watched = createOpenAI({
      apiKey: h.key,
      baseURL: h.baseUrl,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        ignored.push(response.headers.get('x-service-ignored-params'));
        return response;
      },
    });
    h[upstream].enqueue({ kind: 'tool_calls', reasoning: 'The tool knows the weather.', calls: [{ name: 'get_weather', arguments: { city: 'Rome' } }], usage: { input: 30, output: 20, reasoning: 8 } });
    h[upstream].enqueue({ kind: 'text', text: 'It is 18C in Rome.', usage: { input: 60, output: 8 } });
    const before = await h.balance();
    const result = await generateText({
      model: watched.responses(reasoner),
      prompt: 'Weather in Rome?',
      tools: { get_weather: tool({ description: 'The weather in a city', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `18C in ${city}` }) },
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe('It is 18C in Rome.');
    expect(result.steps[0]?.reasoningText).toBe('The tool knows the weather.');
    // Step 2 referred to that reasoning item by id: dropped (no provider is sent a reference) and named.
    expect(ignored).toHaveLength(2);
    expect(ignored[1]).toContain('input.item_reference');
    expect(JSON.stringify(h[upstream].requests[1]?.body)).toContain('18C in Rome');
    expect(await h.balance()).toBe(before - costMicro(30, 20 + (thoughtsApart ? 8 : 0)) - costMicro(60, 8));
  });
});
