/**
 * Second reading of prompt-cache settlement (issue 25): a stream the client closes is billed
 * what it used so far. provider_2 reports the input exactly, cache reads and writes apart, in
 * `message_start`, before any text: a canceled stream bills that input at its own prices (an
 * agent's long cached prefix at the read price), not the tokenizer's estimate at the full input
 * price, and its output at least what was sent.
 */
import { request as undiciRequest } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { money, startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { CACHE_MODELS, CENTI_MICRO } from './helpers/prompt-cache.ts';

let h: ChatHarness;
beforeAll(async () => {
  h = await startChatHarness({}, CACHE_MODELS);
});
afterAll(async () => h.close());

async function settled(accountId: string): Promise<{ balance: number; held: number }> {
  for (let i = 0; i < 300; i++) {
    const m = await money(h.gw, accountId);
    if (m.held === 0) return m;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the hold was never closed');
}

describe('a provider_2 stream the client closes, after a long cached prefix', () => {
  it('bills the reported input at its own prices (cache reads at the read price) and the output sent so far', async () => {
    const { key, accountId } = await h.gw.account({ credits: 100 });
    const before = await money(h.gw, accountId);
    // An agent's turn: a long stable prefix the provider serves from its cache.
    const prefix = 'lorem '.repeat(6_000);
    h.anthropic.enqueue({ kind: 'text', text: 'word '.repeat(40), chunks: 40, usage: { input: 3, cacheRead: 6_000, output: 200 } }, { chunkDelayMs: 30 });
    const controller = new AbortController();
    const response = await undiciRequest(`${h.gw.url}/api/v1/chat/completions`, {
      method: 'POST', signal: controller.signal,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-cached', messages: [{ role: 'user', content: prefix }], stream: true }),
    });
    let seen = '';
    try {
      for await (const piece of response.body) {
        seen += String(piece);
        if (seen.split('data: ').length > 6) controller.abort();
      }
    } catch {
      // aborted
    }
    const after = await settled(accountId);
    const charged = before.balance - after.balance;
    const job = await h.gw.gateway.store.jobs.getJob(response.headers['x-service-job-id'] as string);
    expect(job?.status).toBe('canceled');
    expect(job?.usage).toMatchObject({ prompt_tokens: 6_003, cache_read_tokens: 6_000 });
    const output = Number(job?.usage?.completion_tokens);
    // At least the text the client was sent (about 4 characters a token), far less than the 200 the whole answer has.
    expect(output).toBeGreaterThan(0);
    expect(output).toBeLessThan(50);
    expect(charged).toBe(Math.ceil((3 * CENTI_MICRO.uncached + 6_000 * CENTI_MICRO.read + output * CENTI_MICRO.output) / 100));
  });
});
