/**
 * One price per model (the catalog entry) → the public pricing object and the
 * exact per-token prices billing uses. 1 credit = USD 0.01.
 */
import type { CatalogPricing, Category } from './catalog-file.ts';
import { parseDecimal, SCALE, toNumber } from './decimal.ts';

export const CREDIT_USD = 0.01;
const CREDITS_PER_USD = 100n;

/** Exact per-token prices in micro-credits, scaled by 10^12 (see decimal.ts). */
export interface TokenPrices {
  inputMicroPerTokenScaled: bigint;
  outputMicroPerTokenScaled: bigint;
  /** Cache reads, default-lifetime writes and provider_2's 1-hour writes: the input price where the model has none. */
  cacheReadMicroPerTokenScaled: bigint;
  cacheWriteMicroPerTokenScaled: bigint;
  cacheWrite1hMicroPerTokenScaled: bigint;
}

type TokenPricing = Extract<CatalogPricing, { unit: 'per_token' }>;

/** The catalog's cache price fields, in the order the public pricing object shows them. */
const CACHE_PRICES = [
  ['cache_read_usd_per_1m', 'cache_read_credits_per_1m'],
  ['cache_write_usd_per_1m', 'cache_write_credits_per_1m'],
  ['cache_write_1h_usd_per_1m', 'cache_write_1h_credits_per_1m'],
] as const;

/**
 * USD per 1M tokens → micro-credits per token: p USD/1M = p·100 credits/1M = p·100 micro-credits per token.
 */
export function tokenPrices(pricing: CatalogPricing | null): TokenPrices | undefined {
  if (pricing === null || pricing.unit !== 'per_token') return undefined;
  const input = parseDecimal(pricing.input_usd_per_1m) * CREDITS_PER_USD;
  const orInput = (usd: string | null | undefined) => (usd === null || usd === undefined ? input : parseDecimal(usd) * CREDITS_PER_USD);
  return {
    inputMicroPerTokenScaled: input,
    outputMicroPerTokenScaled: parseDecimal(pricing.output_usd_per_1m) * CREDITS_PER_USD,
    cacheReadMicroPerTokenScaled: orInput(pricing.cache_read_usd_per_1m),
    cacheWriteMicroPerTokenScaled: orInput(pricing.cache_write_usd_per_1m),
    cacheWrite1hMicroPerTokenScaled: orInput(pricing.cache_write_1h_usd_per_1m),
  };
}

/** The cache prices as the public pricing object shows them: null where the model has none. */
function cachePricing(pricing: TokenPricing, credits: (usd: bigint) => number): PublicPricing {
  const out: PublicPricing = {};
  for (const [usdField, creditsField] of CACHE_PRICES) {
    const usd = pricing[usdField];
    out[usdField] = usd === null || usd === undefined ? null : toNumber(parseDecimal(usd));
    out[creditsField] = usd === null || usd === undefined ? null : credits(parseDecimal(usd));
  }
  return out;
}

export type PublicPricing = Record<string, string | number | null>;

/** Micro-credits per trained token, scaled by 10^12; undefined for a model without a training price. */
export function trainingPrice(pricing: CatalogPricing | null): bigint | undefined {
  if (pricing === null || pricing.unit !== 'per_token' || pricing.training_usd_per_1m === undefined) return undefined;
  return parseDecimal(pricing.training_usd_per_1m) * CREDITS_PER_USD;
}

function trainingPricing(usd: bigint, credits: (usd: bigint) => number): PublicPricing {
  return { training_usd_per_1m: toNumber(usd), training_credits_per_1m: credits(usd) };
}

/** The spec's pricing object, every field derived from the one catalog price. */
export function publicPricing(pricing: CatalogPricing): PublicPricing {
  const common = { currency: 'credits', credit_usd: CREDIT_USD };
  const credits = (usd: bigint) => toNumber(usd * CREDITS_PER_USD);
  switch (pricing.unit) {
    case 'per_token': {
      const input = parseDecimal(pricing.input_usd_per_1m);
      const output = parseDecimal(pricing.output_usd_per_1m);
      return {
        unit: 'per_token',
        usd: null,
        credits: null,
        basis: 'USD per 1M input and output tokens',
        input_usd_per_1m: toNumber(input),
        output_usd_per_1m: toNumber(output),
        input_credits_per_1m: credits(input),
        output_credits_per_1m: credits(output),
        ...cachePricing(pricing, credits),
        ...common,
        // credits per 1k tokens = USD per 1M × 100 / 1000
        credit_cost_input_per_1k: toNumber(input / 10n),
        credit_cost_output_per_1k: toNumber(output / 10n),
        credit_cost_fixed: 0,
        ...(pricing.training_usd_per_1m === undefined ? {} : trainingPricing(parseDecimal(pricing.training_usd_per_1m), credits)),
      };
    }
    case 'per_gpu_second': {
      const perSecond = parseDecimal(pricing.usd_per_second);
      const usd = scaleBy(perSecond, pricing.estimated_seconds);
      // What a run holds (media-price.ts): the estimate, capped at the time limit.
      const held = scaleBy(perSecond, Math.min(pricing.estimated_seconds, pricing.hold_seconds));
      return {
        unit: 'per_gpu_second',
        usd: toNumber(usd),
        credits: credits(usd),
        basis: pricing.basis,
        usd_per_second: toNumber(perSecond),
        credits_per_second: credits(perSecond),
        estimated_seconds: pricing.estimated_seconds,
        hold_seconds: pricing.hold_seconds,
        hold_usd: toNumber(held),
        hold_credits: credits(held),
        ...common,
        credit_cost_input_per_1k: 0,
        credit_cost_output_per_1k: 0,
        credit_cost_fixed: credits(usd),
      };
    }
    default: {
      const usd = parseDecimal(pricing.usd);
      return {
        unit: pricing.unit,
        usd: toNumber(usd),
        credits: credits(usd),
        basis: pricing.basis,
        ...common,
        credit_cost_input_per_1k: 0,
        credit_cost_output_per_1k: 0,
        credit_cost_fixed: credits(usd),
      };
    }
  }
}

/** The unit a model of each category is priced in, shown before it has a price. */
const UNPRICED_UNIT: Record<Category, CatalogPricing['unit']> = {
  text: 'per_token',
  code: 'per_token',
  embedding: 'per_token',
  image: 'per_image',
  multimodal: 'per_image',
  video: 'per_video',
  audio: 'per_output',
  speech_tts: 'per_1000_characters',
  transcription_stt: 'per_gpu_second',
  vla_robotics: 'per_gpu_second',
};

/**
 * The pricing object of a model that has no price yet (catalog `pricing: null`): still an object, so
 * clients read `pricing.unit` without a null check; every amount is null (DECISIONS.md, Catalog).
 */
export function unpricedPricing(category: Category): PublicPricing {
  const unit = UNPRICED_UNIT[category];
  return {
    unit,
    usd: null,
    credits: null,
    basis: 'Not priced yet: this model cannot run until it has a price.',
    ...(unit === 'per_token' ? { input_usd_per_1m: null, output_usd_per_1m: null, input_credits_per_1m: null, output_credits_per_1m: null, ...unpricedCache() } : {}),
    currency: 'credits',
    credit_usd: CREDIT_USD,
    credit_cost_input_per_1k: null,
    credit_cost_output_per_1k: null,
    credit_cost_fixed: null,
  };
}

function unpricedCache(): PublicPricing {
  return Object.fromEntries(CACHE_PRICES.flat().map((field) => [field, null]));
}

/** A scaled price times a (possibly fractional) number of seconds, exact to 3 decimals of a second. */
function scaleBy(scaled: bigint, seconds: number): bigint {
  return (scaled * BigInt(Math.round(seconds * 1000))) / 1000n;
}

export { SCALE };
