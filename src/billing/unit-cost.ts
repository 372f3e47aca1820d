/**
 * The cost of a run priced per call unit (DECISIONS.md "Media and GPU hosts"): `per_image` ×
 * images, `per_video` × videos, `per_output` × outputs, `per_second_of_output` × output seconds,
 * `per_1000_characters` × characters / 1000, `per_gpu_second` × GPU seconds (a run is stopped,
 * and billed, at `hold_seconds`). Exact decimals, rounded up once to a micro-credit, like the
 * token cost in chat/chat-quote.ts. Settlement of these units and the MCP `estimate_cost` tool
 * both price through here.
 */
import type { CatalogEntry, CatalogPricing } from '../catalog/catalog-file.ts';
import { ceilDiv, parseDecimal, SCALE } from '../catalog/decimal.ts';

export type UnitPricing = Exclude<CatalogPricing, { unit: 'per_token' }>;
export type PricingUnit = UnitPricing['unit'];

/** USD → micro-credits: 1 USD = 100 credits = 100,000,000 micro-credits. */
const MICRO_PER_USD = 100_000_000n;
/** Quantities are exact to 3 decimals (seconds), as in the public pricing object. */
const MILLI = 1000n;

/** What one unit of usage is called, per pricing unit (the field name in usage reports). */
export const USAGE_FIELD: Record<PricingUnit, string> = {
  per_image: 'images',
  per_video: 'videos',
  per_output: 'outputs',
  per_second_of_output: 'seconds',
  per_1000_characters: 'characters',
  per_gpu_second: 'gpu_seconds',
};

/**
 * Seconds of output that the catalog's per-call `usd` of a `per_second_of_output` model covers:
 * the model's default `duration` (or `duration_seconds`). The catalog writes the price of
 * one default call, so the per-second rate is that price over these seconds.
 */
export function defaultOutputSeconds(entry: CatalogEntry): number | undefined {
  const params = entry.configuration.default_params;
  const seconds = params.duration ?? params.duration_seconds;
  return typeof seconds === 'number' && seconds > 0 ? seconds : undefined;
}

/** The quantity one default call stands for (what the public `usd` is the price of). */
export function defaultQuantity(entry: CatalogEntry, pricing: UnitPricing): number | undefined {
  switch (pricing.unit) {
    case 'per_second_of_output':
      return defaultOutputSeconds(entry);
    case 'per_1000_characters':
      return 1000;
    case 'per_gpu_second':
      return pricing.estimated_seconds;
    default:
      return 1;
  }
}

/**
 * Micro-credits for `quantity` units of the model's pricing unit, or undefined when the
 * catalog does not say enough to price it (a per-second model without a default duration).
 * GPU seconds are capped at `hold_seconds`.
 */
export function unitCost(entry: CatalogEntry, pricing: UnitPricing, quantity: number): number | undefined {
  const milli = (value: number) => BigInt(Math.round(value * 1000));
  switch (pricing.unit) {
    case 'per_gpu_second': {
      const seconds = Math.min(quantity, pricing.hold_seconds);
      return toMicro(parseDecimal(pricing.usd_per_second) * milli(seconds), MILLI);
    }
    case 'per_second_of_output': {
      const perCall = defaultOutputSeconds(entry);
      if (perCall === undefined) return undefined;
      return toMicro(parseDecimal(pricing.usd) * milli(quantity), milli(perCall));
    }
    case 'per_1000_characters':
      return toMicro(parseDecimal(pricing.usd) * milli(quantity), 1000n * MILLI);
    default:
      return toMicro(parseDecimal(pricing.usd) * milli(quantity), MILLI);
  }
}

/** A scaled USD amount divided by `divisor` → micro-credits, rounded up once. */
function toMicro(scaledUsdTimes: bigint, divisor: bigint): number {
  return Number(ceilDiv(scaledUsdTimes * MICRO_PER_USD, SCALE * divisor));
}
