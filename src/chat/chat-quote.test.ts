import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { tokenPrices } from '../catalog/pricing.ts';
import { parseChatRequest } from './chat-request.ts';
import { costOf, estimateInputTokens, holdOf } from './chat-quote.ts';

describe('chat cost', () => {
  it('is exact and rounded up once per settlement, never per component', () => {
    // USD 0.075 / 0.3 per 1M → 7.5 / 30 micro-credits per token.
    const prices = tokenPrices({ unit: 'per_token', input_usd_per_1m: '0.075', output_usd_per_1m: '0.3' });
    if (prices === undefined) throw new Error('no prices');
    expect(costOf(prices, { promptTokens: 1, completionTokens: 0 })).toBe(8);
    expect(costOf(prices, { promptTokens: 1, completionTokens: 1 })).toBe(38); // 37.5 → 38, not 8 + 30
    expect(costOf(prices, { promptTokens: 3, completionTokens: 0 })).toBe(23); // 22.5 → 23, not 3 × 8
    expect(holdOf(prices, 1000, 4096)).toBe(7500 + 122880);
  });

  it('a huge prompt is counted in pieces and never below the whole-text count', async () => {
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(5000);
    const request = parseChatRequest({ model: 'm', messages: [{ role: 'user', content: text }] });
    const estimate = await estimateInputTokens(request);
    const exact = countTokens(text);
    expect(estimate).toBeGreaterThanOrEqual(exact);
    expect(estimate).toBeLessThan(exact * 1.01 + 50);
  });
});
