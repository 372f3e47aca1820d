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

  it('prices cached input apart: uncached, reads, 5-minute and 1-hour writes and output, summed exactly and rounded up once', () => {
    // USD per 1M: input 1.25, read 0.125, 5-minute write 1.5625, 1-hour write 2.5, output 10
    // = 125, 12.5, 156.25, 250 and 1,000 micro-credits per token.
    const prices = tokenPrices({ unit: 'per_token', input_usd_per_1m: '1.25', output_usd_per_1m: '10', cache_read_usd_per_1m: '0.125', cache_write_usd_per_1m: '1.5625', cache_write_1h_usd_per_1m: '2.5' });
    if (prices === undefined) throw new Error('no prices');
    const usage = { promptTokens: 1000, completionTokens: 7, cacheReadTokens: 601, cacheWrite5mTokens: 201, cacheWrite1hTokens: 101 };
    // 97 × 125 + 601 × 12.5 + 201 × 156.25 + 101 × 250 + 7 × 1000 = 12,125 + 7,512.5 + 31,406.25 + 25,250 + 7,000 = 83,293.75 → 83,294
    expect(costOf(prices, usage)).toBe(83_294);
    // Rounded once: the parts rounded one by one would give 83,295.
    expect(Math.ceil(7512.5) + Math.ceil(31406.25) + 12_125 + 25_250 + 7_000).toBe(83_295);
    // Without cache parts, exactly the old price.
    expect(costOf(prices, { promptTokens: 1000, completionTokens: 7 })).toBe(1000 * 125 + 7000);
  });

  it('a null cache price bills those tokens at the input price', () => {
    const prices = tokenPrices({ unit: 'per_token', input_usd_per_1m: '1.25', output_usd_per_1m: '10', cache_read_usd_per_1m: null });
    if (prices === undefined) throw new Error('no prices');
    expect(costOf(prices, { promptTokens: 1000, completionTokens: 0, cacheReadTokens: 600, cacheWrite5mTokens: 300, cacheWrite1hTokens: 50 })).toBe(125_000);
  });

  it('the hold prices the input at the dearest write the run may make, and never below the plain input price', () => {
    const prices = tokenPrices({ unit: 'per_token', input_usd_per_1m: '1.25', output_usd_per_1m: '10', cache_read_usd_per_1m: '0.125', cache_write_usd_per_1m: '1.5625', cache_write_1h_usd_per_1m: '2.5' });
    if (prices === undefined) throw new Error('no prices');
    expect(holdOf(prices, 1000, 100)).toBe(125_000 + 100_000);
    expect(holdOf(prices, 1000, 100, ['5m'])).toBe(156_250 + 100_000);
    expect(holdOf(prices, 1000, 100, ['5m', '1h'])).toBe(250_000 + 100_000);
    const cheapWrites = tokenPrices({ unit: 'per_token', input_usd_per_1m: '1.25', output_usd_per_1m: '10', cache_write_usd_per_1m: '1' });
    if (cheapWrites === undefined) throw new Error('no prices');
    expect(holdOf(cheapWrites, 1000, 100, ['5m', '1h'])).toBe(125_000 + 100_000);
  });
});
