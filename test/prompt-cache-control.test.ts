/**
 * `cache_control` on the chat route (DECISIONS.md "Prompt caching, billed exactly"): sent as the
 * `openai` SDK's and LiteLLM's users send it for Anthropic models (on a content part, a message,
 * a tool), it reaches provider_2 on the matching block, shapes the hold, and the provider's
 * writes and reads are billed at their prices; the providers that cache by themselves never see it.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Emulator } from '../emulators/types.ts';
import { estimateInputTokens } from '../src/chat/chat-quote.ts';
import { parseChatRequest } from '../src/chat/chat-request.ts';
import { money, startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { CACHE_MODELS, CENTI_MICRO } from './helpers/prompt-cache.ts';
import type { Wire } from './helpers/providers.ts';

let h: ChatHarness;
beforeAll(async () => {
  h = await startChatHarness({}, CACHE_MODELS);
});
afterAll(async () => h.close());
beforeEach(() => {
  for (const e of [h.openai, h.deepseek, h.anthropic, h.gemini]) e.reset();
});

const ephemeral = { type: 'ephemeral' };
const hour = { type: 'ephemeral', ttl: '1h' };
const weather = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

/** An agent's turn with a breakpoint in every place a client puts one. */
const marked = {
  tools: [{ ...weather, cache_control: hour }],
  messages: [
    { role: 'system', content: [{ type: 'text', text: 'You are terse.', cache_control: hour }, { type: 'text', text: 'Today is Thursday.' }] },
    { role: 'user', content: [{ type: 'text', text: 'A long document.', cache_control: ephemeral }, { type: 'text', text: 'Weather in Oslo?' }] },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: '3C and windy', cache_control: ephemeral },
    { role: 'user', content: 'Thanks. And tomorrow?' },
  ],
};

const lastBody = (e: Emulator): Wire => e.requests[e.requests.length - 1]?.body;

describe('cache_control reaches provider_2 on the matching block', () => {
  it('system part, user part, tool result and tool definition, each with its ttl; nothing else is marked', async () => {
    const { key } = await h.gw.account();
    h.anthropic.enqueue({ kind: 'text', text: 'Sunny.', usage: { input: 10, output: 2 } });
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'claude-cached', ...marked } });
    expect(r.status, r.text).toBe(200);
    expect(r.headers['x-service-ignored-params']).toBeUndefined();
    const body = lastBody(h.anthropic);
    expect(body.tools).toEqual([{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } }, cache_control: hour }]);
    expect(body.system).toEqual([{ type: 'text', text: 'You are terse.', cache_control: hour }, { type: 'text', text: 'Today is Thursday.' }]);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'A long document.', cache_control: ephemeral }, { type: 'text', text: 'Weather in Oslo?' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Oslo' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: '3C and windy', cache_control: ephemeral }, { type: 'text', text: 'Thanks. And tomorrow?' }] },
    ]);
  });

  it('a message-level mark lands on the message\'s last block (a string content, an assistant turn); a system without marks stays a string', async () => {
    const { key } = await h.gw.account();
    h.anthropic.enqueue({ kind: 'text', text: 'ok', usage: { input: 10, output: 2 } });
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'First question', cache_control: hour },
      { role: 'assistant', content: [{ type: 'text', text: 'First answer' }], cache_control: ephemeral },
      { role: 'user', content: [{ type: 'text', text: 'Second' }, { type: 'text', text: 'question' }], cache_control: ephemeral },
    ];
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'claude-cached', messages } });
    expect(r.status, r.text).toBe(200);
    const body = lastBody(h.anthropic);
    expect(body.system).toBe('Be brief.');
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'First question', cache_control: hour }] },
      { role: 'assistant', content: [{ type: 'text', text: 'First answer', cache_control: ephemeral }] },
      { role: 'user', content: [{ type: 'text', text: 'Second' }, { type: 'text', text: 'question', cache_control: ephemeral }] },
    ]);
  });

  it('breakpoints provider_2 refuses (a 1-hour one after a 5-minute one) come back as its 400, refunded', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    const messages = [{ role: 'user', content: [{ type: 'text', text: 'a', cache_control: ephemeral }, { type: 'text', text: 'b', cache_control: hour }] }];
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'claude-cached', messages } });
    expect([r.status, r.json.error.code]).toEqual([400, 'provider_rejected_request']);
    expect(r.json.error.message).toMatch(/ttl='1h' cache_control block must not come after a ttl='5m'/);
    expect(await money(h.gw, accountId)).toEqual(before);
  });

  it('a malformed cache_control is 400 invalid_request naming it, before any money moves', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    for (const [mark, param] of [[{ type: 'persistent' }, 'messages[0].content[0].cache_control'], [{ type: 'ephemeral', ttl: '2h' }, 'messages[0].content[0].cache_control']] as const) {
      const r = await h.gw.api('/chat/completions', { key, body: { model: 'gpt-cached', messages: [{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: mark }] }] } });
      expect([r.status, r.json.error.code, r.json.error.param]).toEqual([400, 'invalid_request', param]);
    }
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'claude-cached', messages: [{ role: 'user', content: 'x' }], tools: [{ ...weather, cache_control: 'yes' }] } });
    expect([r.status, r.json.error.param]).toEqual([400, 'tools[0].cache_control']);
    expect(await money(h.gw, accountId)).toEqual(before);
    expect(h.anthropic.requests).toHaveLength(0);
  });
});

describe('the providers that cache by themselves drop it quietly', () => {
  for (const [model, emulator] of [['gpt-cached', () => h.openai], ['gemini-cached', () => h.gemini], ['deepseek-cached', () => h.deepseek]] as const) {
    it(`${model}: 200, no X-Service-Ignored-Params, no cache_control upstream`, async () => {
      const { key } = await h.gw.account();
      emulator().enqueue({ kind: 'text', text: 'ok', usage: { input: 10, output: 2 } });
      const r = await h.gw.api('/chat/completions', { key, body: { model, ...marked } });
      expect(r.status, r.text).toBe(200);
      expect(r.headers['x-service-ignored-params']).toBeUndefined();
      const sent = JSON.stringify(lastBody(emulator()));
      expect(sent).toContain('A long document.');
      expect(sent).not.toContain('cache_control');
      expect(sent).not.toContain('ephemeral');
    });
  }
});

/** The hold is the most a run can cost: one micro-credit short of it is refused (402), the exact balance runs. */
async function expectHold(body: Record<string, unknown>, hold: number) {
  for (const [balance, status] of [[hold - 1, 402], [hold, 200]] as const) {
    const { key } = await h.gw.account({ credits: balance / 1_000_000 });
    h.anthropic.enqueue({ kind: 'text', text: 'ok', usage: { input: 5, output: 1 } });
    const r = await h.gw.api('/chat/completions', { key, body });
    expect([balance, r.status]).toEqual([balance, status]);
  }
}

describe('the hold of a provider_2 request that asks for cache writes', () => {
  const ask = (mark: unknown) => ({ model: 'claude-cached', max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'text', text: 'Cache this document, please.', cache_control: mark }] }] });

  it('holds its input at the 5-minute write price', async () => {
    const input = await estimateInputTokens(parseChatRequest(ask(ephemeral)));
    await expectHold(ask(ephemeral), Math.ceil((input * CENTI_MICRO.write5m + 100 * CENTI_MICRO.output) / 100));
  });

  it('holds its input at the 1-hour write price when any breakpoint asks for an hour', async () => {
    const body = { ...ask(ephemeral), tools: [{ ...weather, cache_control: hour }] };
    const input = await estimateInputTokens(parseChatRequest(body));
    await expectHold(body, Math.ceil((input * CENTI_MICRO.write1h + 100 * CENTI_MICRO.output) / 100));
  });
});

describe('end to end: the provider writes, then reads, and each is billed at its price', () => {
  // 400 system characters (100 tokens, kept 1 hour) + 800 document characters (200 tokens, 5 minutes)
  // + a 40-character question (10 tokens): the emulator counts ~4 characters per token.
  const turn = (question: string) => ({
    model: 'claude-cached',
    messages: [
      { role: 'system', content: [{ type: 'text', text: 'S'.repeat(400), cache_control: hour }] },
      { role: 'user', content: [{ type: 'text', text: 'D'.repeat(800), cache_control: ephemeral }, { type: 'text', text: question }] },
    ],
  });

  it('first turn: 100 tokens written for 1 hour, 200 for 5 minutes; next turn: 300 read', async () => {
    const { key, accountId } = await h.gw.account();
    let before = await money(h.gw, accountId);
    const first = await h.gw.api('/chat/completions', { key, body: turn('Q'.repeat(40)) });
    expect(first.status, first.text).toBe(200);
    const out1 = first.json.usage.completion_tokens as number;
    expect(first.json.usage).toEqual({ prompt_tokens: 310, completion_tokens: out1, total_tokens: 310 + out1, prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 300 } });
    let after = await money(h.gw, accountId);
    expect(before.balance - after.balance).toBe(Math.ceil((10 * CENTI_MICRO.uncached + 200 * CENTI_MICRO.write5m + 100 * CENTI_MICRO.write1h + out1 * CENTI_MICRO.output) / 100));

    before = after;
    const second = await h.gw.api('/chat/completions', { key, body: { ...turn('R'.repeat(80)), stream: true, stream_options: { include_usage: true } } });
    expect(second.status).toBe(200);
    const usage = JSON.parse(second.text.split('\n\n').filter((e) => e.includes('"usage":{')).pop()!.slice('data: '.length)).usage;
    const out2 = usage.completion_tokens as number;
    expect(usage).toEqual({ prompt_tokens: 320, completion_tokens: out2, total_tokens: 320 + out2, prompt_tokens_details: { cached_tokens: 300 } });
    after = await money(h.gw, accountId);
    expect(before.balance - after.balance).toBe(Math.ceil((20 * CENTI_MICRO.uncached + 300 * CENTI_MICRO.read + out2 * CENTI_MICRO.output) / 100));
  });

  it('the official openai client sends cache_control unchanged and reads cached_tokens back', async () => {
    const { key } = await h.gw.account();
    const client = new OpenAI({ apiKey: key, baseURL: `${h.gw.url}/api/v1`, maxRetries: 0 });
    const request = turn('From the SDK, what now?') as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
    await client.chat.completions.create(request);
    const again = await client.chat.completions.create(request);
    expect(again.usage?.prompt_tokens_details?.cached_tokens).toBe(300);
    expect(lastBody(h.anthropic).system).toEqual([{ type: 'text', text: 'S'.repeat(400), cache_control: hour }]);
  });
});
