/**
 * Second reading of routing money (issue 28) with prompt caching (issue 25): a model's hold is the
 * largest of its deployments' holds, and each deployment's hold prices the input at the cache-write
 * price its own provider may bill (DECISIONS.md "Prompt caching, billed exactly"): provider_1 writes
 * by itself, provider_2 where the request marks, at the marks' lifetimes. A deployment on another
 * provider than the model's first must not be held at the first provider's cache rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../emulators/types.ts';
import { estimateInputTokens } from '../src/chat/chat-quote.ts';
import { parseChatRequest } from '../src/chat/chat-request.ts';
import { chatEntry } from './fixtures/catalog.ts';
import { startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { CENTI_MICRO } from './helpers/prompt-cache.ts';

const PRICES = { unit: 'per_token', input_usd_per_1m: '1.25', output_usd_per_1m: '10', cache_read_usd_per_1m: '0.125', cache_write_usd_per_1m: '1.5625', cache_write_1h_usd_per_1m: '2.5' };
const CHAT = { params: [], json_schema: 'native', images: null, pdf: false };

/** First on provider_2 (writes only where marked), also deployed on provider_1 (writes its cache by itself). */
const ON_2_AND_1 = chatEntry('mixed-2-1', 'provider_2', {
  provider_model_id: 'mixed-claude', max_output_tokens: 8192, pricing: PRICES, chat: CHAT,
  deployments: [{ provider: 'provider_2', provider_model_id: 'mixed-claude' }, { provider: 'provider_1', provider_model_id: 'mixed-oa' }],
});
/** First on provider_1 (writes 5-minute caches by itself), deployed on provider_2 only (writes where marked, 1 hour when asked). */
const ON_2 = chatEntry('mixed-1-2', 'provider_1', {
  provider_model_id: 'mixed-oa', max_output_tokens: 8192, pricing: PRICES, chat: CHAT,
  deployments: [{ provider: 'provider_2', provider_model_id: 'mixed-claude' }],
});

let h: ChatHarness;
beforeAll(async () => {
  h = await startChatHarness({}, [ON_2_AND_1, ON_2]);
});
afterAll(async () => h.close());

/** A balance one micro-credit short of `hold` is refused (402), the exact balance runs. */
async function expectHold(body: Record<string, unknown>, emulators: Emulator[], hold: number) {
  for (const [balance, status] of [[hold - 1, 402], [hold, 200]] as const) {
    const { key } = await h.gw.account({ credits: balance / 1_000_000 });
    for (const e of emulators) e.enqueue({ kind: 'text', text: 'ok', usage: { input: 5, output: 1 } });
    const r = await h.gw.api('/chat/completions', { key, body });
    expect([balance, r.status, r.json?.error?.code]).toEqual([balance, status, status === 402 ? 'insufficient_credits' : undefined]);
    for (const e of emulators) e.reset();
  }
}

describe('a deployment is held at its own provider’s cache-write rule', () => {
  it('a provider_1 deployment of a provider_2 model, asked for no cache, holds the input at the write price', async () => {
    const body = { model: 'mixed-2-1', messages: [{ role: 'user', content: 'Hello again' }], max_tokens: 100 };
    const input = await estimateInputTokens(parseChatRequest(body));
    await expectHold(body, [h.openai, h.anthropic], Math.ceil((input * CENTI_MICRO.write5m + 100 * CENTI_MICRO.output) / 100));
  });

  it('a provider_2 deployment of a provider_1 model asked for 1-hour writes holds the input at the 1-hour price', async () => {
    const messages = [{ role: 'user', content: [{ type: 'text', text: 'A long stable prefix', cache_control: { type: 'ephemeral', ttl: '1h' } }] }];
    const body = { model: 'mixed-1-2', messages, max_tokens: 100 };
    const input = await estimateInputTokens(parseChatRequest(body));
    await expectHold(body, [h.anthropic], Math.ceil((input * CENTI_MICRO.write1h + 100 * CENTI_MICRO.output) / 100));
  });
});
