/**
 * The most one image can bill, in input tokens, by each provider's published rule (one
 * row per catalog `formula`; sources and choices in docs/catalog.md, "Image cost").
 * Every rule is computed with integers or exact fractions and rounded up, so a hold is
 * never below what the provider's own arithmetic gives.
 */
import type { ImageCost, ImageFormula } from '../../catalog/catalog-file.ts';
import type { PixelSize } from './image-size.ts';

/** The chat-completions `detail` of an image part: `low`, `high`, `auto` (the default), or provider_1's `original`. */
export type ImageDetail = string | undefined;

type Rule = (cost: ImageCost, size: PixelSize, detail: ImageDetail) => number;

const RULES: Record<ImageFormula, Rule> = {
  openai_tiles: (cost, size) => (cost.base_tokens ?? 0) + openAiTiles(size) * (cost.tile_tokens ?? 0),
  openai_patches: (cost, size, detail) => patchTokens(openAiPatches(size, patchBudget(cost, detail)), cost.patch_multiplier ?? 1),
  anthropic_pixels: (cost, size) => Math.min(cost.max_tokens, anthropicTokens(size, cost.max_long_edge ?? 1568, cost.patch_px)),
  gemini_tiles: (cost, size) => Math.min(cost.max_tokens, geminiTiles(size) * (cost.tile_tokens ?? 258)),
  flat: (cost) => cost.max_tokens,
};

/** Tokens of one image: from its pixel size for a data URL, the most the model bills at that detail for an https URL. */
export function imageTokens(cost: ImageCost, size: PixelSize | undefined, detail: ImageDetail): number {
  if (detail === 'low' && cost.low_detail_tokens !== undefined) return cost.low_detail_tokens;
  if (size === undefined) return maxImageTokens(cost, detail);
  return RULES[cost.formula](cost, size, detail);
}

/** The most any image can bill at this detail (an https URL, whose size is not known before the provider fetches it). */
export function maxImageTokens(cost: ImageCost, detail: ImageDetail): number {
  if (detail === 'low' && cost.low_detail_tokens !== undefined) return cost.low_detail_tokens;
  if (cost.formula === 'openai_patches' && detail === 'original' && cost.original_max_patches !== undefined) {
    return Math.max(cost.max_tokens, patchTokens(cost.original_max_patches, cost.patch_multiplier ?? 1));
  }
  return cost.max_tokens;
}

/**
 * provider_1, GPT-4o-style tiles (`detail: high`/`auto`): fit in 2048×2048, scale the short side
 * down to 768, count 512px tiles. Computed on exact fractions: each side is n/d pixels.
 */
export function openAiTiles({ width, height }: PixelSize): number {
  let w = BigInt(width);
  let h = BigInt(height);
  let d = 1n;
  const long = w > h ? w : h;
  if (long > 2048n) {
    w *= 2048n;
    h *= 2048n;
    d = long;
  }
  const short = w < h ? w : h;
  if (short > 768n * d) {
    // side × 768 / short, with the common denominator d cancelled out.
    w *= 768n;
    h *= 768n;
    d = short;
  }
  return Number(ceilDiv(w, 512n * d) * ceilDiv(h, 512n * d));
}

/**
 * provider_1 patch models: 32px patches; above the budget the image is shrunk so that it fits
 * (OpenAI's published steps), and the count is capped at the budget.
 */
export function openAiPatches({ width, height }: PixelSize, budget: number): number {
  const raw = Math.ceil(width / 32) * Math.ceil(height / 32);
  if (raw <= budget) return raw;
  const shrink = Math.sqrt((budget * 32 * 32) / (width * height));
  const fit = shrink * Math.min(Math.floor((width * shrink) / 32) / ((width * shrink) / 32), Math.floor((height * shrink) / 32) / ((height * shrink) / 32));
  if (!(fit > 0)) return budget; // a sliver thinner than one patch after shrinking: hold the whole budget
  // The fitted side is a whole number of patches in exact arithmetic; the epsilon absorbs floating-point noise.
  const patches = Math.ceil((width * fit) / 32 - 1e-9) * Math.ceil((height * fit) / 32 - 1e-9);
  return Math.min(patches, budget);
}

function patchBudget(cost: ImageCost, detail: ImageDetail): number {
  const budget = cost.max_patches ?? 0;
  return detail === 'original' && cost.original_max_patches !== undefined ? Math.max(budget, cost.original_max_patches) : budget;
}

/** Patches × multiplier, rounded up; the multiplier is taken to 4 decimals so the product is exact. */
function patchTokens(patches: number, multiplier: number): number {
  const scaled = Math.round(multiplier * 10_000);
  return Number(ceilDiv(BigInt(patches) * BigInt(scaled), 10_000n));
}

/**
 * provider_2: scaled down so the long side is at most `maxLongEdge` (each side rounded up), then
 * w×h/750 tokens, or ⌈w/p⌉×⌈h/p⌉ patches for models that count p-pixel patches. The caller caps
 * the result at the model's maximum (Anthropic's pixel budget).
 */
export function anthropicTokens({ width, height }: PixelSize, maxLongEdge: number, patchPx: number | undefined): number {
  const long = Math.max(width, height);
  let w = width;
  let h = height;
  if (long > maxLongEdge) {
    w = Math.ceil((width * maxLongEdge) / long);
    h = Math.ceil((height * maxLongEdge) / long);
  }
  if (patchPx !== undefined) return Math.ceil(w / patchPx) * Math.ceil(h / patchPx);
  return Math.ceil((w * h) / 750);
}

/** provider_3 (Gemini 2.x): one tile when both sides are at most 384 px, else 768px tiles. */
export function geminiTiles({ width, height }: PixelSize): number {
  if (width <= 384 && height <= 384) return 1;
  return Math.ceil(width / 768) * Math.ceil(height / 768);
}

function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}
