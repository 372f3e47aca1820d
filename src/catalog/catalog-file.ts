/**
 * The catalog file format (catalog/models.json, or CATALOG_FILE).
 * One entry per model: public facts, one price (the single source of truth for
 * every derived pricing field), and for chat models the routing facts the chat
 * route needs. Documented for operators in docs/catalog.md.
 */
import { z } from 'zod';

export const CATEGORIES = [
  'text', 'image', 'video', 'audio', 'speech_tts', 'transcription_stt',
  'embedding', 'code', 'multimodal', 'vla_robotics',
] as const;
export type Category = (typeof CATEGORIES)[number];

export const PROVIDERS = [
  'provider_1', 'provider_2', 'provider_3', 'provider_4', 'provider_5',
  'provider_6', 'provider_7', 'provider_8', 'provider_9', 'provider_10', 'custom',
] as const;
export type ProviderId = (typeof PROVIDERS)[number];

/** "S" parameters of the spec's per-provider table that a model may take. */
export const OPTIONAL_CHAT_PARAMS = [
  'temperature', 'top_p', 'frequency_penalty', 'presence_penalty',
  'logit_bias', 'reasoning_effort', 'verbosity',
] as const;
export type OptionalChatParam = (typeof OPTIONAL_CHAT_PARAMS)[number];

/** A non-negative decimal written as a string, so prices stay exact ("0.075"). */
const decimal = z.string().regex(/^\d+(\.\d{1,12})?$/, 'a decimal number written as a string, e.g. "1.25"');

/**
 * Cache prices (DECISIONS.md "Prompt caching, billed exactly"): null or absent where the provider
 * has no such price, and those tokens are billed at the input price.
 */
const tokenPricing = z.strictObject({
  unit: z.literal('per_token'),
  input_usd_per_1m: decimal,
  output_usd_per_1m: decimal,
  /** Input tokens read from the provider's prompt cache. */
  cache_read_usd_per_1m: decimal.nullable().optional(),
  /** Input tokens written to the cache at the default lifetime (provider_2: 5 minutes; provider_1: GPT-5.6 and later). */
  cache_write_usd_per_1m: decimal.nullable().optional(),
  /** provider_2: input tokens written to the cache for 1 hour. */
  cache_write_1h_usd_per_1m: decimal.nullable().optional(),
  /** Fine-tunable models (tag `fine-tunable`): USD per 1M trained tokens. */
  training_usd_per_1m: decimal.optional(),
});

/** The earlier name of `cache_read_usd_per_1m`: a catalog file that still uses it keeps loading. */
const LEGACY_CACHE_READ = 'cached_input_usd_per_1m';

function renameLegacyCacheRead(pricing: unknown): unknown {
  if (typeof pricing !== 'object' || pricing === null || !(LEGACY_CACHE_READ in pricing)) return pricing;
  const { [LEGACY_CACHE_READ]: legacy, ...rest } = pricing as Record<string, unknown>;
  // Both names at once is left to the schema to refuse (an unknown key), never silently resolved.
  if ('cache_read_usd_per_1m' in rest) return pricing;
  return { ...rest, cache_read_usd_per_1m: legacy };
}

const callPricing = z.strictObject({
  unit: z.enum(['per_image', 'per_video', 'per_output', 'per_second_of_output', 'per_1000_characters']),
  /** USD of one default call (what `basis` describes). */
  usd: decimal,
  basis: z.string().min(1),
});

const gpuPricing = z.strictObject({
  unit: z.literal('per_gpu_second'),
  usd_per_second: decimal,
  /** GPU seconds of a typical run: what a run holds, up to the limit below. */
  estimated_seconds: z.number().positive(),
  /** The model's time limit: a run still going then is stopped at the host and billed for it (at most what it held). */
  hold_seconds: z.number().positive(),
  basis: z.string().min(1),
});

export const pricingSchema = z.preprocess(renameLegacyCacheRead, z.discriminatedUnion('unit', [tokenPricing, callPricing, gpuPricing]));
export type CatalogPricing = z.output<typeof pricingSchema>;

/** How the most an image can cost is computed, in input tokens (docs/catalog.md, "Image cost"). */
export const IMAGE_FORMULAS = ['openai_tiles', 'openai_patches', 'anthropic_pixels', 'gemini_tiles', 'flat'] as const;

const imageCostSchema = z
  .strictObject({
    /**
     * openai_tiles: base + per-512px-tile tokens after fitting in 2048 and scaling the short side down to 768.
     * openai_patches: 32px patches (scaled down to a patch budget) times a multiplier.
     * anthropic_pixels: width*height/750 (or 28px patches) after scaling the long side down to max_long_edge.
     * gemini_tiles: 258 tokens per 768px tile (one tile when both sides are at most 384).
     * flat: max_tokens for every image.
     */
    formula: z.enum(IMAGE_FORMULAS),
    /** The most one image can bill at the default detail, in input tokens (https URLs; each PDF page). */
    max_tokens: z.number().int().positive(),
    /** Tokens of a `detail: "low"` image, whatever its size, where the provider has such a mode. */
    low_detail_tokens: z.number().int().positive().optional(),
    /** openai_tiles: tokens every image costs, and tokens per 512px tile. gemini_tiles: tile_tokens (default 258). */
    base_tokens: z.number().int().nonnegative().optional(),
    tile_tokens: z.number().int().positive().optional(),
    /** openai_patches: tokens per 32px patch (up to 4 decimals) and the patch budget of the default detail. */
    patch_multiplier: z.number().positive().optional(),
    max_patches: z.number().int().positive().optional(),
    /** openai_patches: the patch budget of `detail: "original"`, where the model has it. */
    original_max_patches: z.number().int().positive().optional(),
    /** anthropic_pixels: the longest side the provider keeps (default 1568); larger images are scaled down. */
    max_long_edge: z.number().int().positive().optional(),
    /** anthropic_pixels: count ⌈w/p⌉×⌈h/p⌉ patches of this many pixels instead of w×h/750. */
    patch_px: z.number().int().positive().optional(),
  })
  .superRefine((cost, ctx) => {
    const need = (field: keyof typeof cost) => {
      if (cost[field] === undefined) ctx.addIssue({ code: 'custom', path: [field], message: `required by formula ${cost.formula}` });
    };
    const atLeast = (most: number, what: string) => {
      if (cost.max_tokens < most) ctx.addIssue({ code: 'custom', path: ['max_tokens'], message: `must be at least ${most} (${what})` });
    };
    if (cost.formula === 'openai_tiles') {
      need('base_tokens');
      need('tile_tokens');
      // The most tiles: 2 × 4 (short side 768, long side 2048).
      if (cost.base_tokens !== undefined && cost.tile_tokens !== undefined) atLeast(cost.base_tokens + 8 * cost.tile_tokens, 'base_tokens + 8 × tile_tokens');
    }
    if (cost.formula === 'openai_patches') {
      need('patch_multiplier');
      need('max_patches');
      if (cost.patch_multiplier !== undefined && cost.max_patches !== undefined) {
        atLeast(Math.ceil((cost.max_patches * Math.round(cost.patch_multiplier * 10_000)) / 10_000), 'max_patches × patch_multiplier, rounded up');
      }
    }
  });
export type ImageCost = z.infer<typeof imageCostSchema>;
export type ImageFormula = ImageCost['formula'];

const chatRoutingSchema = z.strictObject({
  /** Which "S" parameters this model takes; the others are dropped and reported. */
  params: z.array(z.enum(OPTIONAL_CHAT_PARAMS)),
  /** Field the provider wants the output cap in (provider_1 reasoning models: max_completion_tokens). */
  max_tokens_field: z.enum(['max_tokens', 'max_completion_tokens']).default('max_tokens'),
  /** Keeps the `developer` role (provider_1 reasoning models); otherwise it is sent as `system`. */
  developer_role: z.boolean().default(false),
  reasoning: z.boolean().default(false),
  /** native: the provider enforces JSON schemas; instruction: the schema is sent as an instruction. */
  json_schema: z.enum(['native', 'instruction']),
  /** The model refuses temperature and top_p together (provider_2 4.5+ models): top_p is then dropped and named. */
  exclusive_sampling: z.boolean().default(false),
  /** instruction: a forced tool_choice becomes an instruction (some newest provider_2 models). */
  forced_tool_choice: z.enum(['native', 'instruction']).default('native'),
  images: imageCostSchema.nullable(),
  pdf: z.boolean(),
});
export type ChatRouting = z.infer<typeof chatRoutingSchema>;

const embeddingSchema = z.strictObject({
  dimensions: z.number().int().positive(),
  /** Whether `dimensions` may shorten the vector. */
  shortenable: z.boolean(),
});

/** Routing facts of a transcription model (docs/catalog.md "Transcription routing"). */
const transcriptionSchema = z.strictObject({
  /** The model cannot detect the spoken language (SeamlessM4T): a request without a supported one is refused. */
  needs_language: z.boolean(),
  /** The languages it takes, ISO-639-1 → the model's own code (SeamlessM4T's three-letter codes). */
  languages: z.record(z.string().regex(/^[a-z]{2}$/), z.string().min(1)).optional(),
});

/** One place a chat model runs besides (or instead of) its provider (docs/catalog.md "Deployments"). */
const deploymentSchema = z.strictObject({
  provider: z.enum(PROVIDERS),
  provider_model_id: z.string().min(1),
  /** Share of the model's requests among the deployments of its priority (default 1). */
  weight: z.number().positive().default(1),
  /** 0 runs first (default); a larger number only when every deployment before it rests or failed. */
  priority: z.number().int().nonnegative().default(0),
});

const lifecycleSchema = z.discriminatedUnion('status', [
  z.strictObject({ status: z.literal('deprecated'), successor_slug: z.string().min(1) }),
  z.strictObject({ status: z.literal('removed'), successor_slug: z.string().min(1).optional() }),
  z.strictObject({ status: z.literal('duplicate'), duplicate_of: z.string().min(1) }),
]);

export const catalogEntrySchema = z.strictObject({
  slug: z.string().regex(/^[a-z0-9][a-z0-9._:/-]*$/, 'lowercase letters, digits and . _ : / -'),
  name: z.string().min(1),
  description: z.string().min(1),
  long_description: z.string().min(1),
  category: z.enum(CATEGORIES),
  provider: z.enum(PROVIDERS),
  provider_model_id: z.string().min(1),
  /** Release date, ISO 8601 (YYYY-MM-DD). */
  created: z.iso.date(),
  image: z.string().url().nullable().default(null),
  tags: z.array(z.string()).default([]),
  is_new: z.boolean().default(false),
  is_featured: z.boolean().default(false),
  avg_latency_ms: z.number().nonnegative().nullable().default(null),
  estimated_duration_seconds: z.number().nonnegative().nullable().default(null),
  context_window: z.number().int().positive().nullable(),
  max_output_tokens: z.number().int().positive().nullable(),
  supported_formats: z.array(z.string().min(1)).min(1),
  /** null: not priced yet (listed only with include_unavailable; runs answer 503). */
  pricing: pricingSchema.nullable(),
  lifecycle: lifecycleSchema.optional(),
  /** Operator-marked unavailability (besides the derived reasons). */
  unavailable: z.strictObject({ reason: z.string().min(1), use_instead: z.string().min(1).optional() }).optional(),
  /** Present only when one of the chat providers serves this model. */
  chat: chatRoutingSchema.optional(),
  /** Chat models: where the model runs, when not only at `provider` under `provider_model_id`. */
  deployments: z.array(deploymentSchema).min(1).optional(),
  /** Chat models: slugs of chat models tried in order when this one cannot run or its attempts fail. */
  fallbacks: z.array(z.string().min(1)).optional(),
  embedding: embeddingSchema.optional(),
  transcription: transcriptionSchema.optional(),
  configuration: z.strictObject({
    input_schema: z.record(z.string(), z.unknown()),
    default_params: z.record(z.string(), z.unknown()),
  }),
  examples: z.array(z.record(z.string(), z.unknown())).default([]),
});
export type CatalogEntry = z.infer<typeof catalogEntrySchema>;

export const catalogFileSchema = z.strictObject({
  /** Date the prices were last checked against the providers' list prices. */
  prices_checked_at: z.iso.date(),
  models: z.array(catalogEntrySchema).min(1),
});
export type CatalogFile = z.infer<typeof catalogFileSchema>;
