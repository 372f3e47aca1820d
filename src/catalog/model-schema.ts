/**
 * The shapes the catalog answers with (spec "Model object", "Catalog list response"), as zod
 * schemas: the MCP tools declare them as output schemas (the SDK checks every answer against
 * them), the OpenAPI document publishes them, and a test parses every shipped model with them.
 */
import { z } from 'zod';
import { CATEGORIES, PROVIDERS } from './catalog-file.ts';

export const PRICING_UNITS = ['per_token', 'per_image', 'per_video', 'per_output', 'per_second_of_output', 'per_1000_characters', 'per_gpu_second'] as const;

export const publicPricingSchema = z.object({
  unit: z.enum(PRICING_UNITS),
  usd: z.number().nullable().describe('USD of one default call; null for token models.'),
  credits: z.number().nullable().describe('The same price in credits (1 credit = USD 0.01).'),
  basis: z.string().describe('What `usd` is the price of.'),
  currency: z.literal('credits'),
  credit_usd: z.number().describe('USD per credit (0.01).'),
  input_usd_per_1m: z.number().nullable().optional(),
  output_usd_per_1m: z.number().nullable().optional(),
  input_credits_per_1m: z.number().nullable().optional(),
  output_credits_per_1m: z.number().nullable().optional(),
  cache_read_usd_per_1m: z.number().nullable().optional().describe('Token models: USD per 1M input tokens read from the prompt cache; null where the provider has no such price (billed at the input price).'),
  cache_write_usd_per_1m: z.number().nullable().optional().describe('Token models: USD per 1M input tokens written to the prompt cache (provider_2: 5-minute writes); null where the provider bills no writes (billed at the input price).'),
  cache_write_1h_usd_per_1m: z.number().nullable().optional().describe('Token models: USD per 1M input tokens written to the prompt cache for 1 hour (provider_2); null elsewhere.'),
  cache_read_credits_per_1m: z.number().nullable().optional(),
  cache_write_credits_per_1m: z.number().nullable().optional(),
  cache_write_1h_credits_per_1m: z.number().nullable().optional(),
  training_usd_per_1m: z.number().optional().describe('Fine-tunable models: USD per 1M trained tokens.'),
  training_credits_per_1m: z.number().optional().describe('Fine-tunable models: credits per 1M trained tokens.'),
  usd_per_second: z.number().optional().describe('GPU-time models: USD per GPU-second.'),
  credits_per_second: z.number().optional(),
  estimated_seconds: z.number().optional().describe('GPU-time models: the seconds of a typical run.'),
  hold_seconds: z.number().optional().describe('GPU-time models: the seconds held up front (the run is stopped and billed at this limit).'),
  hold_usd: z.number().optional(),
  hold_credits: z.number().optional(),
  credit_cost_input_per_1k: z.number().nullable().describe('Legacy: credits per 1K input tokens.'),
  credit_cost_output_per_1k: z.number().nullable().describe('Legacy: credits per 1K output tokens.'),
  credit_cost_fixed: z.number().nullable().describe('Legacy: credits per call.'),
});

export const modelSchema = z.object({
  id: z.string().describe('The slug, used as `model` everywhere.'),
  object: z.literal('model'),
  created: z.number().int().describe('Unix seconds.'),
  owned_by: z.enum(PROVIDERS).describe('Infrastructure provider identifier.'),
  name: z.string(),
  description: z.string(),
  category: z.enum(CATEGORIES),
  provider_model_id: z.string(),
  image: z.string().nullable(),
  available: z.boolean().describe('false for models that cannot run now.'),
  unavailable_reason: z.string().optional().describe('Only when `available` is false.'),
  use_instead: z.string().optional().describe('Slug of a runnable alternative, when there is one.'),
  lifecycle: z.object({
    status: z.enum(['deprecated', 'removed', 'duplicate']),
    successor_slug: z.string().nullable(),
    duplicate_of: z.string().nullable(),
  }).optional().describe('Only for deprecated, removed or duplicate entries.'),
  pricing: publicPricingSchema.describe('Always an object; for a model not priced yet the amounts are null and `basis` says so.'),
  capabilities: z.object({
    context_window: z.number().int().nullable(),
    max_output_tokens: z.number().int().nullable(),
    supported_formats: z.array(z.string()),
  }),
  metadata: z.object({
    tags: z.array(z.string()),
    is_new: z.boolean(),
    is_featured: z.boolean(),
    avg_latency_ms: z.number().nullable(),
    estimated_duration_seconds: z.number().nullable(),
  }),
});

/** GET /models/{slug} adds these fields. */
export const modelDetailSchema = modelSchema.extend({
  long_description: z.string(),
  configuration: z.object({
    input_schema: z.record(z.string(), z.unknown()).describe("The model's inputs (JSON-Schema-like)."),
    default_params: z.record(z.string(), z.unknown()),
  }),
  examples: z.array(z.record(z.string(), z.unknown())),
});

export const modelListSchema = z.object({
  object: z.literal('list'),
  data: z.array(modelSchema),
  has_more: z.boolean(),
  total: z.number().int().describe('Models matching the filters, before limit and offset.'),
});
