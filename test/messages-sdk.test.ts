/**
 * The Messages route with the official `@anthropic-ai/sdk`, unchanged, base URL the gateway's
 * `/api`: one table across the four chat providers (provider_2 served natively, the others
 * translated), for text, streams, a tool-use round trip, images, a PDF, count_tokens, and the
 * money to the micro-credit, cache reads included (DECISIONS "Agent formats: the Messages route").
 */
import Anthropic from '@anthropic-ai/sdk';
import { request as undiciRequest } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Emulator, ScenarioUsage } from '../emulators/types.ts';
import { costMicro, money, startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { image, pdf } from './helpers/media.ts';
import { CACHE_MODELS, charge, parts, promptOf, type Parts } from './helpers/prompt-cache.ts';
import { messageSchema } from '../src/openapi/messages-operations.ts';

interface Row {
  provider: string;
  model: string;
  cacheModel: string;
  emulator(h: ChatHarness): Emulator;
  /** Token parts in the provider's own usage terms (emulators/types.ts). */
  usage(p: Parts): ScenarioUsage;
  images: boolean;
  pdfs: boolean;
}

const ROWS: Row[] = [
  { provider: 'provider_1', model: 'gpt-test', cacheModel: 'gpt-cached', emulator: (h) => h.openai, usage: (p) => ({ input: promptOf(p), cacheRead: p.read, output: p.output }), images: true, pdfs: true },
  { provider: 'provider_2', model: 'claude-test', cacheModel: 'claude-cached', emulator: (h) => h.anthropic, usage: (p) => ({ input: p.uncached, cacheRead: p.read, output: p.output }), images: true, pdfs: true },
  { provider: 'provider_3', model: 'gemini-test', cacheModel: 'gemini-cached', emulator: (h) => h.gemini, usage: (p) => ({ input: promptOf(p), cacheRead: p.read, output: p.output }), images: true, pdfs: true },
  { provider: 'provider_7', model: 'deepseek-test', cacheModel: 'deepseek-cached', emulator: (h) => h.deepseek, usage: (p) => ({ input: promptOf(p), cacheRead: p.read, output: p.output }), images: false, pdfs: false },
];

let h: ChatHarness;
beforeAll(async () => {
  h = await startChatHarness({}, CACHE_MODELS);
});
afterAll(async () => h.close());
beforeEach(() => {
  for (const row of ROWS) row.emulator(h).reset();
});

const client = (apiKey: string) => new Anthropic({ apiKey, baseURL: `${h.gw.url}/api`, maxRetries: 0 });
const weather = { name: 'get_weather', description: 'Weather in a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };

/** Polls (a bounded number of times) until the account holds nothing. */
async function settled(accountId: string): Promise<{ balance: number; held: number }> {
  for (let i = 0; i < 500; i++) {
    const m = await money(h.gw, accountId);
    if (m.held === 0) return m;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the hold was never closed');
}

/** The last request the provider received, as text (what the translation or the passthrough sent). */
const lastSent = (emu: Emulator) => emu.requests[emu.requests.length - 1]?.rawBody ?? '';

describe.each(ROWS)('@anthropic-ai/sdk on $model ($provider)', (row) => {
  it('non-stream text: msg_ id, the model echoed, X-Service-Job-Id, billed to the micro-credit', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    row.emulator(h).enqueue({ kind: 'text', text: 'Bonjour.', usage: row.usage(parts({ uncached: 20, output: 7 })) });
    const { data: message, response } = await client(key).messages.create({ model: row.model, max_tokens: 300, system: 'Be brief.', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    const jobId = response.headers.get('x-service-job-id');
    expect(message.id).toBe(`msg_${jobId}`);
    expect(message.model).toBe(row.model);
    expect(message.content).toEqual([{ type: 'text', text: 'Bonjour.' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage).toMatchObject({ input_tokens: 20, output_tokens: 7 });
    // The answer fits the OpenAPI document's Message.
    expect(messageSchema.safeParse(message).success).toBe(true);
    expect(response.headers.get('x-ratelimit-limit')).toBe('600');
    const after = await money(h.gw, accountId);
    expect(before.balance - after.balance).toBe(costMicro(20, 7));
    expect(after.held).toBe(0);
  });

  it('streamed text: the events assemble into the message, billed to the micro-credit', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    row.emulator(h).enqueue({ kind: 'text', text: 'one two three four five', chunks: 5, usage: row.usage(parts({ uncached: 12, output: 9 })) });
    const stream = client(key).messages.stream({ model: row.model, max_tokens: 300, messages: [{ role: 'user', content: 'Count' }] });
    const pieces: string[] = [];
    stream.on('text', (text) => pieces.push(text));
    const final = await stream.finalMessage();
    expect(pieces.join('')).toBe('one two three four five');
    expect(pieces.length).toBeGreaterThan(1);
    expect(final.content.filter((b) => b.type === 'text')).toEqual([{ type: 'text', text: 'one two three four five' }]);
    expect(final.model).toBe(row.model);
    expect(final.id).toMatch(/^msg_/);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.output_tokens).toBe(9);
    expect(before.balance - (await money(h.gw, accountId)).balance).toBe(costMicro(12, 9));
  });

  it('a tool-use round trip: tool_use with its input, the tool_result reaches the provider under the same id', async () => {
    const { key } = await h.gw.account();
    const emu = row.emulator(h);
    emu.enqueue({ kind: 'tool_calls', calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] });
    const params = { model: row.model, max_tokens: 300, tools: [weather], messages: [{ role: 'user' as const, content: 'Weather in Paris?' }] };
    const message = await client(key).messages.create(params);
    expect(message.stop_reason).toBe('tool_use');
    const use = message.content.find((b) => b.type === 'tool_use');
    if (use?.type !== 'tool_use') throw new Error('no tool_use block');
    expect([use.name, use.input]).toEqual(['get_weather', { city: 'Paris' }]);
    emu.enqueue({ kind: 'text', text: 'Sunny, 20C.' });
    const answer = await client(key).messages.create({
      ...params,
      messages: [...params.messages, { role: 'assistant', content: message.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '20C and sunny' }] }],
    });
    expect(answer.content).toEqual([{ type: 'text', text: 'Sunny, 20C.' }]);
    expect(lastSent(emu)).toContain('20C and sunny');
    // Gemini's protocol has no call ids (it answers by function name); the others carry the id back.
    if (row.provider !== 'provider_3') expect(lastSent(emu)).toContain(use.id);
  });

  it('a streamed tool call: input assembled from input_json_delta', async () => {
    const { key } = await h.gw.account();
    row.emulator(h).enqueue({ kind: 'tool_calls', calls: [{ name: 'get_weather', arguments: { city: 'Rome' } }] });
    const final = await client(key).messages.stream({ model: row.model, max_tokens: 300, tools: [weather], tool_choice: { type: 'any' }, messages: [{ role: 'user', content: 'Weather in Rome?' }] }).finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content.filter((b) => b.type === 'tool_use').map((b) => b.type === 'tool_use' && [b.name, b.input])).toEqual([['get_weather', { city: 'Rome' }]]);
  });

  it(row.images ? 'an image block reaches the provider' : 'an image block → 400 unsupported_content naming the block, nothing charged', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    const data = image('png', 64, 48).split(',')[1] as string;
    const sent = client(key).messages.create({
      model: row.model,
      max_tokens: 100,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data } }] }],
    });
    if (row.images) {
      await expect(sent).resolves.toMatchObject({ type: 'message' });
      expect(lastSent(row.emulator(h))).toContain(data);
    } else {
      const error = await sent.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      expect((error as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'unsupported_content', param: 'messages[0].content[1]' } });
      expect(await money(h.gw, accountId)).toEqual(before);
    }
  });

  it(row.pdfs ? 'a PDF document block reaches the provider' : 'a PDF document block → 400 unsupported_content', async () => {
    const { key } = await h.gw.account();
    const data = Buffer.from(await pdf(2)).toString('base64');
    const sent = client(key).messages.create({
      model: row.model,
      max_tokens: 100,
      messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data } }, { type: 'text', text: 'Summarise.' }] }],
    });
    if (row.pdfs) {
      await expect(sent).resolves.toMatchObject({ type: 'message' });
      expect(lastSent(row.emulator(h))).toContain(data.slice(0, 200));
    } else {
      await expect(sent).rejects.toMatchObject({ status: 400, error: { error: { code: 'unsupported_content', param: 'messages[0].content[0]' } } });
    }
  });

  it('count_tokens: the hold\'s input estimate, free, no provider call', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    const short = await client(key).messages.countTokens({ model: row.model, messages: [{ role: 'user', content: 'Hi' }] });
    const long = await client(key).messages.countTokens({ model: row.model, system: 'You are a careful assistant.', tools: [weather], messages: [{ role: 'user', content: 'Hi '.repeat(200) }] });
    expect(short.input_tokens).toBeGreaterThan(0);
    expect(long.input_tokens).toBeGreaterThan(short.input_tokens + 200);
    expect(row.emulator(h).requests).toHaveLength(0);
    expect(await money(h.gw, accountId)).toEqual(before);
  });

  it('cache reads billed at the cache-read price, reported as cache_read_input_tokens', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    const p = parts({ uncached: 1_003, read: 4_096, output: 37 });
    row.emulator(h).enqueue({ kind: 'text', text: 'Cached.', usage: row.usage(p) });
    const message = await client(key).messages.create({ model: row.cacheModel, max_tokens: 1_000, messages: [{ role: 'user', content: 'Hi' }] });
    expect(message.usage).toMatchObject({ input_tokens: 1_003, cache_read_input_tokens: 4_096, output_tokens: 37 });
    expect(before.balance - (await money(h.gw, accountId)).balance).toBe(charge(p, { write5m: true, write1h: true }));
  });
  it('a provider failure → the SDK raises InternalServerError (502 upstream_error), refunded in full', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    row.emulator(h).enqueue({ kind: 'error', status: 500 });
    const error = await client(key).messages.create({ model: row.model, max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.InternalServerError);
    expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'api_error', code: 'upstream_error' } });
    expect(await settled(accountId)).toEqual(before);
  });

  it('an error mid-stream → the SDK raises it (one event: error), refunded in full', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    row.emulator(h).enqueue({ kind: 'stream_error', afterChunks: 2, text: 'one two three four five six' });
    const stream = client(key).messages.stream({ model: row.model, max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] });
    await expect(stream.finalMessage()).rejects.toBeInstanceOf(Anthropic.APIError);
    expect(await settled(accountId)).toEqual(before);
  });

  it('the client closing a stream is billed for what was generated, the rest refunded', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    row.emulator(h).enqueue({ kind: 'text', text: 'word '.repeat(40), chunks: 40 }, { chunkDelayMs: 30 });
    const controller = new AbortController();
    const response = await undiciRequest(`${h.gw.url}/api/v1/messages`, {
      method: 'POST', signal: controller.signal,
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: row.model, max_tokens: 1000, messages: [{ role: 'user', content: 'Hi' }], stream: true }),
    });
    let seen = '';
    try {
      for await (const piece of response.body) {
        seen += String(piece);
        if (seen.split('text_delta').length > 4) controller.abort();
      }
    } catch {
      // aborted
    }
    const charged = before.balance - (await settled(accountId)).balance;
    expect(charged).toBeGreaterThan(0);
    // The whole answer (40 words) would cost more: only what was sent before the close is billed.
    expect(charged).toBeLessThan(costMicro(200, 60));
    expect((await h.gw.gateway.store.jobs.getJob(response.headers['x-service-job-id'] as string))?.status).toBe('canceled');
  });
});
