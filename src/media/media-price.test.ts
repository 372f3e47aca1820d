/** The pricing-unit table: holds and settlements in exact micro-credits, rounded up once. */
import { describe, expect, it } from 'vitest';
import { priceTerms, quoteOf, settlementOf, type PartResult, type PricedInput, type PriceTerms } from './media-price.ts';

const part = (p: Partial<PartResult> = {}): PartResult => ({ outputs: 1, outputSeconds: undefined, predictSeconds: undefined, stoppedAtLimit: false, ...p });
const base: PricedInput = { input: {}, defaultSeconds: undefined, characters: 0, outputs: 1, parts: 1 };

function terms(pricing: Parameters<typeof priceTerms>[0], priced: Partial<PricedInput> = {}): PriceTerms {
  const t = priceTerms(pricing, { ...base, ...priced });
  if (typeof t === 'string') throw new Error(t);
  return t;
}

describe('media prices', () => {
  it('per_image: n × the price held; images delivered billed (USD 0.04 = 4,000,000 micro-credits)', () => {
    const t = terms({ unit: 'per_image', usd: '0.04', basis: 'b' }, { outputs: 3, parts: 3 });
    expect(quoteOf(t)).toBe(12_000_000);
    expect(settlementOf(t, [part(), part(), part()])).toEqual({ cost: 12_000_000, usage: { images: 3 } });
    // More outputs than asked for are not billed.
    expect(settlementOf(t, [part({ outputs: 5 })]).cost).toBe(12_000_000);
  });

  it('per_video and per_output count what was delivered', () => {
    expect(settlementOf(terms({ unit: 'per_video', usd: '0.98', basis: 'b' }), [part()])).toEqual({ cost: 98_000_000, usage: { videos: 1 } });
    const outputs = terms({ unit: 'per_output', usd: '0.2', basis: 'b' }, { outputs: 2, parts: 1 });
    expect(quoteOf(outputs)).toBe(40_000_000);
    expect(settlementOf(outputs, [part({ outputs: 2 })])).toEqual({ cost: 40_000_000, usage: { outputs: 2 } });
  });

  it("per_second_of_output: the rate is usd ÷ the default duration, exactly; the host's seconds, else those asked for", () => {
    const t = terms({ unit: 'per_second_of_output', usd: '0.4625', basis: 'b' }, { input: { duration: 7 }, defaultSeconds: 5 });
    // 7 × 0.0925 USD = 0.6475 USD
    expect(quoteOf(t)).toBe(64_750_000);
    expect(settlementOf(t, [part()])).toEqual({ cost: 64_750_000, usage: { output_seconds: 7 } });
    expect(settlementOf(t, [part({ outputSeconds: 6.04 })])).toEqual({ cost: 55_870_000, usage: { output_seconds: 6.04 } });
    // A default that does not divide evenly: 1 USD per 3 s, 1 s → 33.333… credits, rounded up once.
    const third = terms({ unit: 'per_second_of_output', usd: '1', basis: 'b' }, { input: { duration: 1 }, defaultSeconds: 3 });
    expect(quoteOf(third)).toBe(33_333_334);
    expect(priceTerms({ unit: 'per_second_of_output', usd: '1', basis: 'b' }, { ...base, input: { duration: 1 } })).toMatch(/default duration/);
  });

  it('a host reporting an absurd length (1e30 seconds) is priced without throwing (the close then caps the charge at the hold)', () => {
    const t = terms({ unit: 'per_second_of_output', usd: '0.4625', basis: 'b' }, { input: { duration: 7 }, defaultSeconds: 5 });
    expect(() => settlementOf(t, [part({ outputSeconds: 1e30 })])).not.toThrow();
    expect(settlementOf(t, [part({ outputSeconds: 1e30 })]).cost).toBeGreaterThan(quoteOf(t));
  });

  it('per_1000_characters: input characters ÷ 1000, exact', () => {
    const t = terms({ unit: 'per_1000_characters', usd: '0.1', basis: 'b' }, { characters: 1234 });
    expect(quoteOf(t)).toBe(12_340_000);
    expect(settlementOf(t, [part()]).usage).toEqual({ characters: 1234 });
  });

  // Issue 33: the time limit was held (2 × 180 s); DECISIONS.md holds the estimate, capped by the limit.
  it('per_gpu_second: the estimate held per prediction (capped by the limit); predict_time billed, capped only at the limit; a run stopped there billed the limit', () => {
    const t = terms({ unit: 'per_gpu_second', usd_per_second: '0.000975', estimated_seconds: 20, hold_seconds: 180, basis: 'b' }, { parts: 2, outputs: 2 });
    // 2 × 20 s × 0.000975 USD = 0.039 USD
    expect(quoteOf(t)).toBe(3_900_000);
    const overLimit = terms({ unit: 'per_gpu_second', usd_per_second: '0.000975', estimated_seconds: 500, hold_seconds: 180, basis: 'b' }, { parts: 1, outputs: 1 });
    expect(quoteOf(overLimit)).toBe(180 * 97_500);
    // 12.683421 s × 0.000975 USD = 0.012366335475 USD = 1,236,633.5475 micro → 1,236,634
    expect(settlementOf(t, [part({ predictSeconds: 12.683421 }), part({ predictSeconds: 0 })]).cost).toBe(1_236_634);
    expect(settlementOf(t, [part({ predictSeconds: 500 }), part({ predictSeconds: 1 })]).cost).toBe(Math.ceil((180 + 1) * 97_500));
    expect(settlementOf(t, [part({ stoppedAtLimit: true, predictSeconds: 3 }), part({ predictSeconds: 2 })])).toEqual({ cost: 182 * 97_500, usage: { gpu_seconds: 182 } });
  });

  it('rounds up once per settlement, never per prediction', () => {
    const t = terms({ unit: 'per_gpu_second', usd_per_second: '0.001', estimated_seconds: 1, hold_seconds: 10, basis: 'b' }, { parts: 2, outputs: 2 });
    // 0.0000015 s × 100,000 micro/s = 0.15 micro each: 0.3 together → 1, not 2.
    expect(settlementOf(t, [part({ predictSeconds: 0.0000015 }), part({ predictSeconds: 0.0000015 })]).cost).toBe(1);
  });
});
