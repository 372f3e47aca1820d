/**
 * The Responses route with the official `openai` SDK (responses.create, responses.stream,
 * responses.retrieve, responses.inputItems.list, responses.delete), one table across a model
 * of each of the four chat providers over real HTTP: provider_1's model on its own Responses
 * endpoint (native), the others translated through their chat protocols. Balances are read to
 * the micro-credit before and after.
 */
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Emulator, ScenarioUsage } from '../emulators/types.ts';
import { costMicro, money, startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { waitFor } from './helpers/media-host.ts';
import { CACHE_MODELS, charge, parts, promptOf, type Parts } from './helpers/prompt-cache.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- upstream bodies are inspected freely
type Wire = any;

interface Row {
  provider: 'provider_1' | 'provider_2' | 'provider_3' | 'provider_7';
  model: string;
  /** The same provider's model with cache prices (helpers/prompt-cache.ts). */
  cachedModel: string;
  emulator(h: ChatHarness): Emulator;
  /** Cached parts in the provider's own usage terms. */
  scenario(p: Parts): ScenarioUsage;
  /** The provider's own finish value for an answer cut at its output limit. */
  lengthFinish: string;
  /** The path the gateway called (native Responses or the chat protocol). */
  path: RegExp;
}

const ROWS: Row[] = [
  { provider: 'provider_1', model: 'gpt-test', cachedModel: 'gpt-cached', emulator: (h) => h.openai, scenario: (p) => ({ input: promptOf(p), cacheRead: p.read, output: p.output }), lengthFinish: 'length', path: /^\/v1\/responses$/ },
  { provider: 'provider_2', model: 'claude-test', cachedModel: 'claude-cached', emulator: (h) => h.anthropic, scenario: (p) => ({ input: p.uncached, cacheRead: p.read, output: p.output }), lengthFinish: 'max_tokens', path: /\/v1\/messages$/ },
  { provider: 'provider_3', model: 'gemini-test', cachedModel: 'gemini-cached', emulator: (h) => h.gemini, scenario: (p) => ({ input: promptOf(p), cacheRead: p.read, output: p.output }), lengthFinish: 'MAX_TOKENS', path: /generateContent/ },
  { provider: 'provider_7', model: 'deepseek-test', cachedModel: 'deepseek-cached', emulator: (h) => h.deepseek, scenario: (p) => ({ input: promptOf(p), cacheRead: p.read, output: p.output }), lengthFinish: 'length', path: /\/chat\/completions$/ },
];

const WEATHER = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Current weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

let h: ChatHarness;
beforeAll(async () => {
  h = await startChatHarness({}, CACHE_MODELS);
});
afterAll(async () => h.close());
beforeEach(() => {
  for (const e of [h.openai, h.deepseek, h.anthropic, h.gemini]) e.reset();
});

function clientOf(key: string): OpenAI {
  return new OpenAI({ apiKey: key, baseURL: `${h.gw.url}/api/v1`, maxRetries: 0 });
}

async function customer() {
  const { key, accountId } = await h.gw.account();
  return { client: clientOf(key), accountId, before: await money(h.gw, accountId) };
}

function lastBody(emulator: Emulator): Wire {
  return emulator.requests[emulator.requests.length - 1]?.body;
}

describe.each(ROWS)('$provider ($model)', (row) => {
  const emu = () => row.emulator(h);

  it('responses.create: text, resp_ + job id, the usage billed to the micro-credit', async () => {
    const { client, accountId, before } = await customer();
    emu().enqueue({ kind: 'text', text: 'Hello from the gateway.', usage: { input: 12, output: 5 } });
    const { data: response, response: raw } = await client.responses.create({ model: row.model, input: 'Say hello' }).withResponse();
    expect(response.output_text).toBe('Hello from the gateway.');
    expect(response.status).toBe('completed');
    expect(response.object).toBe('response');
    expect(response.model).toBe(row.model);
    expect(response.id).toBe(`resp_${raw.headers.get('x-service-job-id')}`);
    expect(response.usage).toMatchObject({ input_tokens: 12, output_tokens: 5, total_tokens: 17 });
    expect(emu().requests.at(-1)?.path).toMatch(row.path);
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - costMicro(12, 5), held: 0 });
  });

  it('responses.stream: the text in deltas, sequence numbers from 0 without gaps, the final response; billed', async () => {
    const { client, accountId, before } = await customer();
    emu().enqueue({ kind: 'text', text: 'one two three four five', chunks: 5, usage: { input: 9, output: 5 } });
    const stream = client.responses.stream({ model: row.model, input: 'Count' });
    const types: string[] = [];
    const sequence: number[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      sequence.push(event.sequence_number);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    const final = await stream.finalResponse();
    expect(text).toBe('one two three four five');
    expect(final.output_text).toBe('one two three four five');
    expect(sequence).toEqual(sequence.map((_, i) => i));
    expect(types.slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
    expect(types.at(-1)).toBe('response.completed');
    expect(types).toContain('response.output_item.added');
    expect(types).toContain('response.output_text.done');
    expect(final.usage).toMatchObject({ input_tokens: 9, output_tokens: 5 });
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - costMicro(9, 5), held: 0 });
  });

  it('a function-tool round trip: function_call out, function_call_output back to the provider', async () => {
    const { client } = await customer();
    emu().enqueue({ kind: 'tool_calls', calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }], usage: { input: 30, output: 12 } });
    const first = await client.responses.create({ model: row.model, input: 'Weather in Paris?', tools: [WEATHER], store: false });
    const call = first.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather' });
    if (call?.type !== 'function_call') throw new Error('no call');
    expect(JSON.parse(call.arguments)).toEqual({ city: 'Paris' });
    emu().enqueue({ kind: 'text', text: 'It is 21C in Paris.' });
    const second = await client.responses.create({
      model: row.model,
      tools: [WEATHER],
      store: false,
      input: [{ role: 'user', content: 'Weather in Paris?' }, call, { type: 'function_call_output', call_id: call.call_id, output: '21C' }],
    });
    expect(second.output_text).toBe('It is 21C in Paris.');
    const sent = JSON.stringify(lastBody(emu()));
    expect(sent).toContain('21C');
    expect(sent).toContain('get_weather');
  });

  it('json_schema output: the answer parses against the schema', async () => {
    const { client } = await customer();
    emu().enqueue({ kind: 'text', text: '{"city":"Oslo","celsius":3}' });
    const response = await client.responses.create({
      model: row.model,
      input: 'Weather in Oslo as JSON',
      text: { format: { type: 'json_schema', name: 'weather', strict: true, schema: { type: 'object', properties: { city: { type: 'string' }, celsius: { type: 'number' } }, required: ['city', 'celsius'], additionalProperties: false } } },
    });
    expect(JSON.parse(response.output_text)).toEqual({ city: 'Oslo', celsius: 3 });
    expect(response.text?.format).toMatchObject({ type: 'json_schema', name: 'weather' });
  });

  it('previous_response_id over three turns: the provider receives the whole conversation; the hold counts it', async () => {
    const { client, accountId } = await customer();
    emu().enqueue({ kind: 'text', text: 'First answer.' });
    const one = await client.responses.create({ model: row.model, input: 'First question' });
    emu().enqueue({ kind: 'text', text: 'Second answer.' });
    const two = await client.responses.create({ model: row.model, input: 'Second question', previous_response_id: one.id });
    emu().enqueue({ kind: 'text', text: 'Third answer.' });
    const three = await client.responses.create({ model: row.model, input: 'Third question', previous_response_id: two.id });
    expect(three.output_text).toBe('Third answer.');
    expect(three.previous_response_id).toBe(two.id);
    const sent = JSON.stringify(lastBody(emu()));
    for (const text of ['First question', 'First answer.', 'Second question', 'Second answer.', 'Third question']) expect(sent).toContain(text);
    expect(sent.indexOf('First question')).toBeLessThan(sent.indexOf('Second answer.'));
    // The hold counts the whole conversation: each turn held more than the one before (the same output cap).
    const ledger = (await h.gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger`)).json as { kind: string; credits: number }[];
    const holds = ledger.filter((e) => e.kind === 'hold').map((e) => e.credits).reverse();
    expect(holds).toHaveLength(3);
    expect(holds[1]).toBeGreaterThan(holds[0] as number);
    expect(holds[2]).toBeGreaterThan(holds[1] as number);
    // Stored responses: retrieve, input items, delete; then continuing from the deleted one is refused.
    expect((await client.responses.retrieve(two.id)).output_text).toBe('Second answer.');
    const items = await client.responses.inputItems.list(three.id);
    expect(items.data).toHaveLength(1);
    expect(JSON.stringify(items.data[0])).toContain('Third question');
    expect(await client.responses.delete(two.id)).toEqual({ id: two.id, object: 'response', deleted: true });
    const gone = await client.responses.retrieve(two.id).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(APIError);
    expect((gone as APIError).status).toBe(404);
    expect((gone as APIError).code).toBe('response_not_found');
    const broken = await client.responses.create({ model: row.model, input: 'Fourth', previous_response_id: three.id }).catch((e: unknown) => e);
    expect((broken as APIError).code).toBe('response_not_found');
  });

  it('max_output_tokens reached: status incomplete with reason max_output_tokens', async () => {
    const { client } = await customer();
    emu().enqueue({ kind: 'text', text: 'A long answer that was cut', finish: row.lengthFinish, usage: { input: 10, output: 16 } });
    const response = await client.responses.create({ model: row.model, input: 'Write a lot', max_output_tokens: 16 });
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
  });

  it('billing to the micro-credit with cached tokens: reads at the cache-read price, input_tokens_details.cached_tokens', async () => {
    const { client, accountId, before } = await customer();
    const p = parts({ uncached: 1_001, read: 4_093, output: 17 });
    emu().enqueue({ kind: 'text', text: 'From the cache.', usage: row.scenario(p) });
    const response = await client.responses.create({ model: row.cachedModel, input: 'Hello again' });
    expect(response.usage).toMatchObject({ input_tokens: promptOf(p), input_tokens_details: { cached_tokens: 4_093 }, output_tokens: 17 });
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - charge(p, { write5m: false, write1h: false }), held: 0 });
  });

  it('a provider failure is refunded in full (502 upstream_error)', async () => {
    const { client, accountId, before } = await customer();
    emu().enqueue({ kind: 'error', status: 500 });
    const error = await client.responses.create({ model: row.model, input: 'Hi' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(502);
    expect((error as APIError).code).toBe('upstream_error');
    expect(await money(h.gw, accountId)).toEqual(before);
  });

  it('a mid-stream error: an error event then response.failed; refunded', async () => {
    const { client, accountId, before } = await customer();
    emu().enqueue({ kind: 'stream_error', afterChunks: 2, text: 'one two three four five six' });
    const stream = client.responses.stream({ model: row.model, input: 'Count' });
    const types: string[] = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'error') expect(event.code).toBe('upstream_error');
    }
    // The SDK ends the stream at the error event.
    expect(types).toContain('response.output_text.delta');
    expect(types.at(-1)).toBe('error');
    expect(await money(h.gw, accountId)).toEqual(before);
    // On the wire, response.failed follows, numbered on.
    emu().enqueue({ kind: 'stream_error', afterChunks: 2, text: 'one two three four five six' });
    const { key } = await h.gw.account();
    const raw = await h.gw.api('/responses', { key, body: { model: row.model, input: 'Count', stream: true } });
    const events = raw.text.split('\n\n').filter((e) => e.startsWith('event:')).map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 6)));
    expect(events.slice(-2).map((e) => e.type)).toEqual(['error', 'response.failed']);
    expect(events.at(-1).response).toMatchObject({ status: 'failed', error: { code: 'upstream_error' } });
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  });

  it('a client that closes a stream is billed for what was generated (less than the hold)', async () => {
    const { client, accountId, before } = await customer();
    emu().enqueue({ kind: 'text', text: 'a b c d e f g h i j k l m n o p', chunks: 16 }, { chunkDelayMs: 50 });
    const stream = client.responses.stream({ model: row.model, input: 'Count slowly' });
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') {
        stream.abort();
        break;
      }
    }
    const after = await waitFor(() => money(h.gw, accountId), (m) => m.held === 0);
    const charged = before.balance - after.balance;
    expect(charged).toBeGreaterThan(0);
    expect(charged).toBeLessThan(costMicro(4096, 4096));
  });

  it("another account's response is never revealed: 404 response_not_found for retrieve, input items, delete and previous_response_id", async () => {
    const owner = await customer();
    emu().enqueue({ kind: 'text', text: 'Private.' });
    const mine = await owner.client.responses.create({ model: row.model, input: 'Secret' });
    const other = await customer();
    for (const attempt of [
      () => other.client.responses.retrieve(mine.id),
      () => other.client.responses.inputItems.list(mine.id),
      () => other.client.responses.delete(mine.id),
      () => other.client.responses.create({ model: row.model, input: 'Go on', previous_response_id: mine.id }),
    ]) {
      const error = await attempt().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(APIError);
      expect((error as APIError).status).toBe(404);
      expect((error as APIError).code).toBe('response_not_found');
    }
    expect(await money(h.gw, other.accountId)).toEqual(other.before);
    expect((await owner.client.responses.retrieve(mine.id)).output_text).toBe('Private.');
  });
});
