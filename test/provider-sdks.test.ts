/**
 * The providers' own official SDKs (`@anthropic-ai/sdk`, `@google/genai`) run against
 * our emulators: non-stream, stream and a tool call. If an SDK accepts an emulator,
 * the emulator speaks the real wire format faithfully enough to test adapters on.
 */
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../emulators/index.ts';

let anthropicEmu: Emulator;
let geminiEmu: Emulator;
beforeAll(async () => {
  anthropicEmu = await startEmulator('anthropic');
  geminiEmu = await startEmulator('gemini');
});
afterAll(async () => {
  await anthropicEmu.close();
  await geminiEmu.close();
});
beforeEach(() => {
  anthropicEmu.reset();
  geminiEmu.reset();
});

const weatherSchema = { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] };

describe('@anthropic-ai/sdk against the Anthropic emulator', () => {
  const client = () => new Anthropic({ apiKey: anthropicEmu.apiKey, baseURL: anthropicEmu.baseUrl, maxRetries: 0 });

  it('messages.create', async () => {
    anthropicEmu.enqueue({ kind: 'text', text: 'Hello from Claude.', usage: { input: 11, output: 4, cacheRead: 3 } });
    const message = await client().messages.create({ model: 'claude-sonnet-5-5', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'Hi' }] });
    expect(message.type).toBe('message');
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from Claude.' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage).toMatchObject({ input_tokens: 11, output_tokens: 4, cache_read_input_tokens: 3 });
    // The SDK's own defaults: API version 2026-10-21, the key as a bearer token (the gateway sends 2023-06-01 and x-api-key).
    const sent = anthropicEmu.requests[0];
    expect(sent?.headers.authorization).toBe(`Bearer ${anthropicEmu.apiKey}`);
    expect(sent?.headers['anthropic-version']).toBe('2026-10-21');
  });

  it('messages.stream: text events, the final message and its usage', async () => {
    anthropicEmu.enqueue({ kind: 'text', text: 'one two three four', chunks: 4, reasoning: 'Counting.', usage: { input: 9, output: 6 } });
    const stream = client().messages.stream({ model: 'claude-sonnet-5-5', max_tokens: 2000, thinking: { type: 'adaptive' }, messages: [{ role: 'user', content: 'Count' }] });
    const pieces: string[] = [];
    stream.on('text', (text) => pieces.push(text));
    const final = await stream.finalMessage();
    expect(pieces.join('')).toBe('one two three four');
    expect(pieces.length).toBeGreaterThan(1);
    expect(final.content[0]).toMatchObject({ type: 'thinking', thinking: 'Counting.' });
    expect(final.content[1]).toMatchObject({ type: 'text', text: 'one two three four' });
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.output_tokens).toBe(6);
  });

  it('a tool call, non-stream and streamed (input assembled from input_json_delta)', async () => {
    const calls = [{ name: 'get_weather', arguments: { city: 'Paris' } }, { name: 'get_weather', arguments: { city: 'Rome' } }];
    anthropicEmu.enqueue({ kind: 'tool_calls', calls });
    const params = { model: 'claude-sonnet-5-5', max_tokens: 200, tools: [{ name: 'get_weather', input_schema: weatherSchema }], messages: [{ role: 'user' as const, content: 'Weather?' }] };
    const message = await client().messages.create(params);
    expect(message.stop_reason).toBe('tool_use');
    const uses = message.content.filter((b) => b.type === 'tool_use');
    expect(uses.map((b) => b.type === 'tool_use' && [b.name, b.input])).toEqual([['get_weather', { city: 'Paris' }], ['get_weather', { city: 'Rome' }]]);
    anthropicEmu.enqueue({ kind: 'tool_calls', calls });
    const final = await client().messages.stream(params).finalMessage();
    expect(final.content.map((b) => b.type === 'tool_use' && b.input)).toEqual([{ city: 'Paris' }, { city: 'Rome' }]);
    // The tool result round trip is accepted.
    const first = uses[0];
    if (first?.type !== 'tool_use') throw new Error('no tool_use');
    anthropicEmu.enqueue({ kind: 'text', text: 'Sunny.' });
    const answer = await client().messages.create({
      ...params,
      messages: [...params.messages, { role: 'assistant', content: message.content }, { role: 'user', content: uses.map((u) => ({ type: 'tool_result' as const, tool_use_id: u.type === 'tool_use' ? u.id : '', content: '20C' })) }],
    });
    expect(answer.content).toEqual([{ type: 'text', text: 'Sunny.' }]);
  });

  it('API version 2026-10-21 (the SDK default) takes bearer keys and refuses the sampling parameters; 2023-06-01 keeps them', async () => {
    const post = (version: string, auth: Record<string, string>) =>
      fetch(`${anthropicEmu.baseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'anthropic-version': version, ...auth },
        body: JSON.stringify({ model: 'claude-sonnet-5-5', max_tokens: 10, temperature: 0.5, messages: [{ role: 'user', content: 'Hi' }] }),
      });
    const refused = await post('2026-10-21', { authorization: `Bearer ${anthropicEmu.apiKey}` });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toBe('temperature: Extra inputs are not permitted');
    expect((await post('2023-06-01', { 'x-api-key': anthropicEmu.apiKey })).status).toBe(200);
    expect((await post('2023-06-01', { authorization: `Bearer ${anthropicEmu.apiKey}` })).status).toBe(401);
  });

  it('errors arrive as the SDK error classes (429, 529 overloaded, a stream error event)', async () => {
    anthropicEmu.enqueue({ kind: 'error', status: 429 });
    await expect(client().messages.create({ model: 'claude-sonnet-5-5', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] })).rejects.toBeInstanceOf(Anthropic.RateLimitError);
    anthropicEmu.enqueue({ kind: 'error', status: 529 });
    const overloaded = await client().messages.create({ model: 'claude-sonnet-5-5', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(overloaded).toBeInstanceOf(Anthropic.APIError);
    expect((overloaded as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
    anthropicEmu.enqueue({ kind: 'stream_error', afterChunks: 1 });
    await expect(client().messages.stream({ model: 'claude-sonnet-5-5', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }).finalMessage()).rejects.toThrow(/Overloaded/);
  });
});

describe('@google/genai against the Gemini emulator', () => {
  const client = () => new GoogleGenAI({ apiKey: geminiEmu.apiKey, httpOptions: { baseUrl: geminiEmu.baseUrl } });

  it('models.generateContent', async () => {
    geminiEmu.enqueue({ kind: 'text', text: 'Hello from Gemini.', usage: { input: 8, output: 4, reasoning: 2 } });
    const response = await client().models.generateContent({ model: 'gemini-3-flash', contents: 'Hi', config: { systemInstruction: 'Be brief.', maxOutputTokens: 100 } });
    expect(response.text).toBe('Hello from Gemini.');
    expect(response.candidates?.[0]?.finishReason).toBe('STOP');
    expect(response.usageMetadata).toMatchObject({ promptTokenCount: 8, candidatesTokenCount: 4, thoughtsTokenCount: 2, totalTokenCount: 14 });
    const sent = geminiEmu.requests[0];
    // This SDK version calls the v1 API by default (the gateway calls v1beta); the emulator serves both.
    expect(sent?.path).toMatch(/^\/v1(beta)?\/models\/gemini-3-flash:generateContent$/);
    expect(sent?.headers['x-goog-api-key']).toBe(geminiEmu.apiKey);
  });

  it('models.generateContentStream over SSE', async () => {
    geminiEmu.enqueue({ kind: 'text', text: 'one two three four', chunks: 4, usage: { input: 8, output: 5 } });
    const stream = await client().models.generateContentStream({ model: 'gemini-3-flash', contents: 'Count' });
    const pieces: string[] = [];
    let last: { candidatesTokenCount?: number } | undefined;
    for await (const chunk of stream) {
      pieces.push(chunk.text ?? '');
      last = chunk.usageMetadata;
    }
    expect(pieces.join('')).toBe('one two three four');
    expect(pieces.filter((p) => p !== '').length).toBeGreaterThan(1);
    expect(last?.candidatesTokenCount).toBe(5);
    expect(geminiEmu.requests[0]?.path).toMatch(/^\/v1(beta)?\/models\/gemini-3-flash:streamGenerateContent\?alt=sse$/);
  });

  it('a function call, non-stream and streamed, and the functionResponse round trip', async () => {
    const config = { tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: weatherSchema }] }] };
    geminiEmu.enqueue({ kind: 'tool_calls', calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }, { name: 'get_weather', arguments: { city: 'Rome' } }] });
    const response = await client().models.generateContent({ model: 'gemini-2.5-flash', contents: 'Weather?', config });
    expect(response.functionCalls?.map((c) => [c.name, c.args])).toEqual([['get_weather', { city: 'Paris' }], ['get_weather', { city: 'Rome' }]]);
    geminiEmu.enqueue({ kind: 'tool_calls', calls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] });
    const calls: unknown[] = [];
    for await (const chunk of await client().models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'Weather?', config })) calls.push(...(chunk.functionCalls ?? []).map((c) => c.args));
    expect(calls).toEqual([{ city: 'Oslo' }]);
    geminiEmu.enqueue({ kind: 'text', text: 'Sunny.' });
    const answer = await client().models.generateContent({
      model: 'gemini-2.5-flash',
      config,
      contents: [
        { role: 'user', parts: [{ text: 'Weather?' }] },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { result: '20C' } } }] },
      ],
    });
    expect(answer.text).toBe('Sunny.');
  });

  it('errors arrive as the SDK ApiError with the provider status (a bad key is a 400)', async () => {
    const bad = new GoogleGenAI({ apiKey: 'wrong-key', httpOptions: { baseUrl: geminiEmu.baseUrl } });
    const error = await bad.models.generateContent({ model: 'gemini-2.5-flash', contents: 'Hi' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'ApiError', status: 400 });
    expect(String((error as Error).message)).toContain('API_KEY_INVALID');
    geminiEmu.enqueue({ kind: 'error', status: 503 });
    await expect(client().models.generateContent({ model: 'gemini-2.5-flash', contents: 'Hi' })).rejects.toMatchObject({ status: 503 });
  });
});
