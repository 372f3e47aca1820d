/**
 * Prompt caching billed exactly (DECISIONS.md "Prompt caching, billed exactly"), one table for
 * the four chat providers over real HTTP (gateway → the emulator of the provider's own wire
 * format, reporting cached tokens in its real fields): each part of the input at its own price,
 * summed exactly and rounded up once, stream and non-stream, balance before and after.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Emulator, ScenarioUsage } from '../emulators/types.ts';
import { money, startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { assemble } from './helpers/providers.ts';
import { CACHE_MODELS, CENTI_MICRO, charge, parts, promptOf, type Parts } from './helpers/prompt-cache.ts';
import { estimateInputTokens } from '../src/chat/chat-quote.ts';
import { parseChatRequest } from '../src/chat/chat-request.ts';
import { chatChunkSchema, chatCompletionSchema } from '../src/openapi/schemas.ts';

interface CacheRow {
  provider: 'provider_1' | 'provider_2' | 'provider_3' | 'provider_7';
  model: string;
  emulator(h: ChatHarness): Emulator;
  /** The parts in the provider's own usage terms (emulators/types.ts ScenarioUsage). */
  scenario(p: Parts): ScenarioUsage;
  /** Which write prices the model has (the others are null in its catalog entry). */
  priced: { write5m: boolean; write1h: boolean };
  /** Writes the provider reports (and the table bills), beyond reads. */
  writes: Partial<Parts>[];
  /** The provider reports reasoning tokens apart. */
  reportsReasoning: boolean;
}

const CACHE_ROWS: CacheRow[] = [
  {
    provider: 'provider_1',
    model: 'gpt-cached',
    emulator: (h) => h.openai,
    // prompt_tokens is every input token; cached_tokens and cache_write_tokens are parts of it.
    scenario: (p) => ({ input: promptOf(p), cacheRead: p.read, cacheWrite: p.write5m, output: p.output, reasoning: p.reasoning }),
    priced: { write5m: true, write1h: false },
    writes: [{ write5m: 2_047 }],
    reportsReasoning: true,
  },
  {
    provider: 'provider_2',
    model: 'claude-cached',
    emulator: (h) => h.anthropic,
    // input_tokens excludes the cache; writes are split by lifetime in cache_creation.
    scenario: (p) => ({ input: p.uncached, cacheRead: p.read, cacheWrite: p.write5m, cacheWrite1h: p.write1h, output: p.output }),
    priced: { write5m: true, write1h: true },
    writes: [{ write5m: 2_047 }, { write1h: 1_023 }, { write5m: 511, write1h: 3_001 }],
    reportsReasoning: false,
  },
  {
    provider: 'provider_3',
    model: 'gemini-cached',
    emulator: (h) => h.gemini,
    // promptTokenCount holds the cached tokens; candidatesTokenCount excludes the thoughts.
    scenario: (p) => ({ input: promptOf(p), cacheRead: p.read, output: p.output - p.reasoning, reasoning: p.reasoning }),
    priced: { write5m: false, write1h: false },
    writes: [],
    reportsReasoning: true,
  },
  {
    provider: 'provider_7',
    model: 'deepseek-cached',
    emulator: (h) => h.deepseek,
    // prompt_cache_hit_tokens (and prompt_cache_miss_tokens) split prompt_tokens.
    scenario: (p) => ({ input: promptOf(p), cacheRead: p.read, output: p.output, reasoning: p.reasoning }),
    priced: { write5m: false, write1h: false },
    writes: [],
    reportsReasoning: true,
  },
];

let h: ChatHarness;
beforeAll(async () => {
  h = await startChatHarness({}, CACHE_MODELS);
});
afterAll(async () => h.close());
beforeEach(() => {
  for (const e of [h.openai, h.deepseek, h.anthropic, h.gemini]) e.reset();
});

const hi = [{ role: 'user', content: 'Hello again' }];

/** One run of `row` answering with `p`, non-stream or stream; returns the answer's usage object and the micro-credits it cost. */
async function run(row: CacheRow, p: Parts, stream: boolean) {
  const { key, accountId } = await h.gw.account();
  row.emulator(h).enqueue({ kind: 'text', text: 'From the cache.', chunks: 3, usage: row.scenario(p) });
  const before = await money(h.gw, accountId);
  const body = { model: row.model, messages: hi, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) };
  const r = await h.gw.api('/chat/completions', { key, body });
  expect(r.status, r.text).toBe(200);
  const usage = stream ? assemble(r.text).usage : r.json.usage;
  // The published schema (OpenAPI) describes the usage object as answered: parsing keeps every field.
  const published = stream
    ? chatChunkSchema.parse(JSON.parse(r.text.split('\n\n').find((e) => e.includes('"usage":{'))?.slice('data: '.length) ?? 'null')).usage
    : chatCompletionSchema.parse(r.json).usage;
  expect(published).toEqual(usage);
  const after = await money(h.gw, accountId);
  expect(after.held).toBe(0);
  return { usage, cost: before.balance - after.balance, jobId: r.headers['x-service-job-id'] as string };
}

describe.each(CACHE_ROWS)('$provider ($model)', (row) => {
  const withReasoning = (p: Partial<Parts>) => parts({ ...p, reasoning: row.reportsReasoning ? Math.min(9, p.output ?? 0) : 0 });

  it.each([false, true])('cache reads (stream: %s) are billed at the read price, to the micro-credit', async (stream) => {
    // 3 uncached at 125 + 4,097 read at 12.5 (51,212.5) + 41 out at 1,000 = 92,587.5 → 92,588.
    const p = withReasoning({ uncached: 3, read: 4_097, output: 41 });
    const { usage, cost } = await run(row, p, stream);
    expect(cost).toBe(charge(p, row.priced));
    expect(cost).toBe(92_588);
    // prompt_tokens stays the whole input; the details say how much of it the cache served.
    expect(usage).toEqual({
      prompt_tokens: 4_100,
      completion_tokens: 41,
      total_tokens: 4_141,
      prompt_tokens_details: { cached_tokens: 4_097 },
      ...(row.reportsReasoning ? { completion_tokens_details: { reasoning_tokens: 9 } } : {}),
    });
  });

  it.each([false, true])('a run without cache fields (stream: %s) is billed at the input price, as before', async (stream) => {
    const p = parts({ uncached: 1_234, output: 56 });
    const { usage, cost } = await run(row, p, stream);
    expect(cost).toBe(1_234 * 125 + 56 * 1_000);
    expect(usage).toEqual({ prompt_tokens: 1_234, completion_tokens: 56, total_tokens: 1_290 });
  });
});

const WRITE_CASES = CACHE_ROWS.flatMap((row) => row.writes.flatMap((w) => [false, true].map((stream) => ({ row, w, stream, name: `${row.provider} ${JSON.stringify(w)} stream: ${stream}` }))));

describe('cache writes at their own prices', () => {
  it.each(WRITE_CASES)('$name', async ({ row, w, stream }) => {
    const p = parts({ uncached: 7, read: 1_001, output: 13, ...w });
    const { usage, cost } = await run(row, p, stream);
    expect(cost).toBe(charge(p, row.priced));
    expect(usage).toEqual({ prompt_tokens: promptOf(p), completion_tokens: 13, total_tokens: promptOf(p) + 13, prompt_tokens_details: { cached_tokens: 1_001, cache_write_tokens: p.write5m + p.write1h } });
  });

  it('provider_2 5-minute and 1-hour writes, worked: 7 × 125 + 1,001 × 12.5 + 511 × 156.25 + 3,001 × 250 + 13 × 1,000 = 856,481.25 → 856,482', async () => {
    const row = CACHE_ROWS.find((r) => r.provider === 'provider_2') as CacheRow;
    const { cost } = await run(row, parts({ uncached: 7, read: 1_001, write5m: 511, write1h: 3_001, output: 13 }), false);
    expect(cost).toBe(856_482);
  });

  it('a model without cache prices bills reported cache reads and writes at the input price', async () => {
    const { key, accountId } = await h.gw.account();
    h.anthropic.enqueue({ kind: 'text', text: 'ok', usage: { input: 10, cacheRead: 500, cacheWrite: 200, cacheWrite1h: 100, output: 3 } });
    const before = await money(h.gw, accountId);
    const r = await h.gw.api('/chat/completions', { key, body: { model: 'claude-legacy', messages: hi } });
    expect(r.status).toBe(200);
    expect(before.balance - (await money(h.gw, accountId)).balance).toBe(810 * 125 + 3 * 1_000);
  });
});

/** The hold is the most a run can cost: a balance one micro-credit short of it is refused (402), the exact balance runs. */
async function expectHold(body: Record<string, unknown>, emulator: Emulator, hold: number) {
  for (const [balance, status] of [[hold - 1, 402], [hold, 200]] as const) {
    const { key } = await h.gw.account({ credits: balance / 1_000_000 });
    emulator.enqueue({ kind: 'text', text: 'ok', usage: { input: 5, output: 1 } });
    const r = await h.gw.api('/chat/completions', { key, body });
    expect([balance, r.status, r.json?.error?.code]).toEqual([balance, status, status === 402 ? 'insufficient_credits' : undefined]);
  }
}

describe('the hold', () => {
  it('provider_1 writes its cache by itself: a model with a write price holds its input at that price', async () => {
    const body = { model: 'gpt-cached', messages: hi, max_tokens: 100 };
    const input = await estimateInputTokens(parseChatRequest(body));
    await expectHold(body, h.openai, Math.ceil((input * CENTI_MICRO.write5m + 100 * CENTI_MICRO.output) / 100));
  });

  it('providers without write prices hold their input at the input price, as before', async () => {
    for (const [model, emulator] of [['gemini-cached', h.gemini], ['deepseek-cached', h.deepseek], ['claude-cached', h.anthropic]] as const) {
      const body = { model, messages: hi, max_tokens: 100 };
      const input = await estimateInputTokens(parseChatRequest(body));
      await expectHold(body, emulator, input * 125 + 100 * 1_000);
    }
  });
});
