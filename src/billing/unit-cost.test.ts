import { describe, expect, it } from 'vitest';
import { catalogEntrySchema } from '../catalog/catalog-file.ts';
import { defaultQuantity, unitCost, type UnitPricing } from './unit-cost.ts';

const entry = (pricing: UnitPricing, defaultParams: Record<string, unknown> = {}) => catalogEntrySchema.parse({
  slug: 'm', name: 'm', description: 'd', long_description: 'l', category: 'video', provider: 'provider_5', provider_model_id: 'm',
  created: '2026-01-01', context_window: null, max_output_tokens: null, supported_formats: ['video'], pricing,
  configuration: { input_schema: {}, default_params: defaultParams },
});

describe('per-call unit cost (micro-credits, exact, rounded up once)', () => {
  it('per image, video and output: the price times the count', () => {
    const pricing: UnitPricing = { unit: 'per_image', usd: '0.04', basis: 'one image' };
    expect(unitCost(entry(pricing), pricing, 1)).toBe(4_000_000);
    expect(unitCost(entry(pricing), pricing, 3)).toBe(12_000_000);
    expect(defaultQuantity(entry(pricing), pricing)).toBe(1);
  });

  it('per second of output: the default call over its default duration', () => {
    const pricing: UnitPricing = { unit: 'per_second_of_output', usd: '0.4625', basis: 'a default 5-second clip' };
    expect(unitCost(entry(pricing, { duration: 5 }), pricing, 5)).toBe(46_250_000);
    expect(unitCost(entry(pricing, { duration: 5 }), pricing, 8)).toBe(74_000_000);
    expect(unitCost(entry(pricing, { duration_seconds: 10 }), pricing, 1)).toBe(4_625_000);
    expect(unitCost(entry(pricing), pricing, 5)).toBeUndefined();
  });

  it('per 1,000 characters: an exact fraction, rounded up once', () => {
    const pricing: UnitPricing = { unit: 'per_1000_characters', usd: '0.1', basis: '1,000 characters' };
    expect(unitCost(entry(pricing), pricing, 1000)).toBe(10_000_000);
    // 0.1 USD / 1000 × 7 characters = 0.0007 USD = 70,000 micro-credits exactly
    expect(unitCost(entry(pricing), pricing, 7)).toBe(70_000);
    // 0.000003 USD per 1000 characters × 1 character = 0.3 micro-credits → 1
    const tiny: UnitPricing = { unit: 'per_1000_characters', usd: '0.000003', basis: '1,000 characters' };
    expect(unitCost(entry(tiny), tiny, 1)).toBe(1);
  });

  it('per GPU second: exact to the millisecond, capped at the hold', () => {
    const pricing: UnitPricing = { unit: 'per_gpu_second', usd_per_second: '0.000975', estimated_seconds: 8, hold_seconds: 60, basis: 'one episode' };
    expect(unitCost(entry(pricing), pricing, 20)).toBe(1_950_000);
    expect(unitCost(entry(pricing), pricing, 0.001)).toBe(98); // 97.5 → 98
    expect(unitCost(entry(pricing), pricing, 600)).toBe(unitCost(entry(pricing), pricing, 60));
    expect(defaultQuantity(entry(pricing), pricing)).toBe(8);
  });
});
