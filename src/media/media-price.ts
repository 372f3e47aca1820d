/**
 * What a media run costs, one row per catalog pricing unit (DECISIONS.md "Media and GPU
 * hosts"): the quantity held up front (the most the run can use) and the quantity it is
 * settled on. Prices and quantities are exact fractions; a cost is rounded up to whole
 * micro-credits once, never per component.
 */
import type { CatalogPricing } from '../catalog/catalog-file.ts';
import { ceilDiv, parseDecimal, SCALE } from '../catalog/decimal.ts';
import type { UsageUnits } from '../store/money-contract.ts';

export type MediaUnit = Exclude<CatalogPricing['unit'], 'per_token'>;

interface Fraction {
  num: bigint;
  den: bigint;
}

/** How a run is priced, fixed at admission and stored with its job (bigints as decimal strings). */
export interface PriceTerms {
  unit: MediaUnit;
  /** Micro-credits per unit of the row's quantity, exactly. */
  perUnit: { num: string; den: string };
  /** Outputs the run must deliver, all or none (n images, one video). */
  outputs: number;
  /** Predictions the run makes at its host. */
  parts: number;
  /** per_second_of_output: seconds asked for per output (billed when the host reports none). */
  requestedSeconds?: number;
  /** per_gpu_second: the model's time limit per prediction (seconds); a prediction stopped there is billed for it. */
  limitSeconds?: number;
  /** per_gpu_second: the catalog's estimate of one prediction (seconds), held up to the limit (DECISIONS.md). */
  estimatedSeconds?: number;
  /** per_1000_characters: characters of the input text. */
  characters?: number;
}

/** What one prediction delivered. */
export interface PartResult {
  outputs: number;
  /** Seconds of output, when the host reports them. */
  outputSeconds: number | undefined;
  /** GPU seconds the host reports (`metrics.predict_time`), else the measured processing time. */
  predictSeconds: number | undefined;
  /** The gateway stopped it at the model's time limit. */
  stoppedAtLimit: boolean;
}

interface UnitRow {
  held(terms: PriceTerms): Fraction;
  used(terms: PriceTerms, parts: PartResult[]): Fraction;
  usage(terms: PriceTerms, parts: PartResult[]): UsageUnits;
}

const whole = (n: number): Fraction => ({ num: BigInt(n), den: 1n });

/** Beyond any price or length a run can reach: a larger value (a host reporting 1e30 seconds) is taken as this. */
const DECIMAL_BOUND = 1e15;

/** A float from JSON as the exact decimal it was written as (to 9 places). */
function decimal(value: number): Fraction {
  // toFixed writes 1e21 and above in exponent form, which BigInt refuses.
  const x = Number.isFinite(value) ? Math.max(-DECIMAL_BOUND, Math.min(DECIMAL_BOUND, value)) : 0;
  const text = /^\d+(\.\d+)?$/.test(String(x)) ? String(x) : x.toFixed(9);
  const [int = '0', frac = ''] = text.split('.');
  return { num: BigInt(int + frac), den: 10n ** BigInt(frac.length) };
}

const add = (a: Fraction, b: Fraction): Fraction => ({ num: a.num * b.den + b.num * a.den, den: a.den * b.den });
const times = (a: Fraction, n: number): Fraction => ({ num: a.num * BigInt(n), den: a.den });
const min = (a: Fraction, b: Fraction): Fraction => (a.num * b.den <= b.num * a.den ? a : b);
const sum = (items: Fraction[]): Fraction => items.reduce(add, whole(0));
const toNumber = (f: Fraction): number => Number(f.num) / Number(f.den);

const delivered = (terms: PriceTerms, parts: PartResult[]) => Math.min(terms.outputs, parts.reduce((n, p) => n + p.outputs, 0));

/** Per output delivered, capped at the outputs asked for. */
function perOutput(name: string): UnitRow {
  return {
    held: (t) => whole(t.outputs),
    used: (t, parts) => whole(delivered(t, parts)),
    usage: (t, parts) => ({ [name]: delivered(t, parts) }),
  };
}

function outputSeconds(t: PriceTerms, parts: PartResult[]): Fraction {
  const requested = decimal(t.requestedSeconds ?? 0);
  return sum(parts.map((p) => (p.outputSeconds === undefined ? times(requested, p.outputs) : decimal(p.outputSeconds))));
}

/** GPU seconds of each prediction (the host's predict_time), capped only at the time limit; one stopped there counts the limit. */
function gpuSeconds(t: PriceTerms, parts: PartResult[]): Fraction {
  const limit = decimal(t.limitSeconds ?? 0);
  return sum(parts.map((p) => (p.stoppedAtLimit ? limit : min(decimal(p.predictSeconds ?? 0), limit))));
}

/**
 * What one prediction holds: the catalog's estimate, capped at the time limit (DECISIONS.md "Media and GPU
 * hosts"). Terms stored before the estimate was (a job resumed after an upgrade) hold the limit.
 */
function heldSeconds(t: PriceTerms): Fraction {
  const limit = decimal(t.limitSeconds ?? 0);
  return t.estimatedSeconds === undefined ? limit : min(decimal(t.estimatedSeconds), limit);
}

const UNITS: Record<MediaUnit, UnitRow> = {
  per_image: perOutput('images'),
  per_video: perOutput('videos'),
  per_output: perOutput('outputs'),
  per_second_of_output: {
    held: (t) => times(decimal(t.requestedSeconds ?? 0), t.outputs),
    used: outputSeconds,
    usage: (t, parts) => ({ output_seconds: toNumber(outputSeconds(t, parts)) }),
  },
  per_1000_characters: {
    held: (t) => whole(t.characters ?? 0),
    used: (t) => whole(t.characters ?? 0),
    usage: (t) => ({ characters: t.characters ?? 0 }),
  },
  per_gpu_second: {
    held: (t) => times(heldSeconds(t), t.parts),
    used: gpuSeconds,
    usage: (t, parts) => ({ gpu_seconds: toNumber(gpuSeconds(t, parts)) }),
  },
};

/** USD → micro-credits, scaled by 10^12: 1 USD = 100 credits = 10^8 micro-credits. */
const MICRO_PER_USD = 100_000_000n;

export interface PricedInput {
  /** The input sent to the host, defaults included. */
  input: Record<string, unknown>;
  /** The model's default duration of one output (per_second_of_output: `usd` is the price of that default call). */
  defaultSeconds: number | undefined;
  /** Characters of the input text (per_1000_characters). */
  characters: number;
  outputs: number;
  parts: number;
}

/** The terms of one run, or a reason the model's price cannot be applied (an operator error). */
export function priceTerms(pricing: Exclude<CatalogPricing, { unit: 'per_token' }>, priced: PricedInput): PriceTerms | string {
  const common = { outputs: priced.outputs, parts: priced.parts };
  const perUnit = (usd: string, den: bigint = 1n) => ({ num: (parseDecimal(usd) * MICRO_PER_USD).toString(), den: (SCALE * den).toString() });
  switch (pricing.unit) {
    case 'per_image':
    case 'per_video':
    case 'per_output':
      return { unit: pricing.unit, perUnit: perUnit(pricing.usd), ...common };
    case 'per_1000_characters':
      return { unit: pricing.unit, perUnit: perUnit(pricing.usd, 1000n), characters: priced.characters, ...common };
    case 'per_second_of_output': {
      const base = priced.defaultSeconds;
      const requested = priced.input.duration;
      if (base === undefined || !(base > 0)) return 'its per-second price has no default duration to divide by';
      if (typeof requested !== 'number' || !(requested > 0)) return 'it has no output duration to bill by';
      // `usd` is the price of one default call: the rate is usd ÷ the default duration, kept as a fraction.
      const rate = decimal(base);
      const price = perUnit(pricing.usd);
      return {
        unit: pricing.unit,
        perUnit: { num: (BigInt(price.num) * rate.den).toString(), den: (BigInt(price.den) * rate.num).toString() },
        requestedSeconds: requested,
        ...common,
      };
    }
    case 'per_gpu_second':
      return { unit: pricing.unit, perUnit: perUnit(pricing.usd_per_second), limitSeconds: pricing.hold_seconds, estimatedSeconds: pricing.estimated_seconds, ...common };
  }
}

function cost(terms: PriceTerms, quantity: Fraction): number {
  const num = BigInt(terms.perUnit.num) * quantity.num;
  const den = BigInt(terms.perUnit.den) * quantity.den;
  return Number(ceilDiv(num, den));
}

/** The hold: the most the run can cost (micro-credits). */
export function quoteOf(terms: PriceTerms): number {
  return cost(terms, UNITS[terms.unit].held(terms));
}

/** The settlement: what the run delivered, at the model's price, and the usage it is billed on. */
export function settlementOf(terms: PriceTerms, parts: PartResult[]): { cost: number; usage: UsageUnits } {
  const row = UNITS[terms.unit];
  return { cost: cost(terms, row.used(terms, parts)), usage: row.usage(terms, parts) };
}
