/**
 * estimate_cost: a model and its expected usage, in the model's own unit → credits and USD,
 * priced by the code that bills (chat-quote's token cost; billing/unit-cost for per-call
 * units), rounded up once to a micro-credit as a settlement is.
 */
import { z } from 'zod';
import { microToCredits } from '../billing/money.ts';
import { defaultQuantity, unitCost, USAGE_FIELD, type UnitPricing } from '../billing/unit-cost.ts';
import type { Catalog } from '../catalog/catalog.ts';
import { CREDIT_USD } from '../catalog/pricing.ts';
import { PRICING_UNITS } from '../catalog/model-schema.ts';
import { costOf } from '../chat/chat-quote.ts';
import { GatewayError } from '../shared/errors.ts';

const count = (what: string) => z.number().int().min(0).max(1e12).optional().describe(what);
const amount = (what: string) => z.number().min(0).max(1e9).optional().describe(what);

export const estimateInput = {
  model: z.string().min(1).describe('A model slug (or a provider model id), as in GET /api/v1/models.'),
  usage: z.object({
    input_tokens: count('Token models: prompt tokens.'),
    output_tokens: count('Token models: output tokens (reasoning included).'),
    images: count('per_image models: images delivered. Default 1.'),
    videos: count('per_video models: videos delivered. Default 1.'),
    outputs: count('per_output models: outputs delivered. Default 1.'),
    seconds: amount('per_second_of_output models: seconds of output. Default: the model\'s default duration.'),
    characters: count('per_1000_characters models: input characters. Default 1,000.'),
    gpu_seconds: amount('per_gpu_second models: GPU seconds (billed at most hold_seconds). Default: the estimated seconds.'),
  }).default({}).describe("Expected usage in the model's pricing unit; fields of other units are ignored."),
};

export const estimateOutput = {
  model: z.string().describe('The catalog slug that was priced.'),
  unit: z.enum(PRICING_UNITS),
  usage: z.record(z.string(), z.number()).describe('The usage that was priced, in the unit\'s own field names.'),
  ignored: z.array(z.string()).describe('Usage fields that do not apply to this unit.'),
  credits: z.number().describe('Cost in credits, rounded up to a micro-credit as billing does.'),
  usd: z.number().describe('The same cost in USD (1 credit = USD 0.01).'),
  available: z.boolean().describe('Whether the model can run now.'),
  note: z.string().describe('How the amount was worked out.'),
};

type EstimateInput = z.infer<z.ZodObject<typeof estimateInput>>;
type EstimateOutput = z.infer<z.ZodObject<typeof estimateOutput>>;

export function estimateCost(catalog: Catalog, input: EstimateInput): EstimateOutput {
  const model = catalog.resolve(input.model);
  if (model === undefined) throw new GatewayError('model_not_found', `The model '${input.model}' does not exist.`, { param: 'model' });
  const entry = model.entry;
  const pricing = entry.pricing;
  if (pricing === null) throw new GatewayError('model_unavailable', `The model '${entry.slug}' is not priced yet, so it cannot run.`, { param: 'model' });
  const given = Object.entries(input.usage).filter(([, v]) => v !== undefined) as [string, number][];

  let micro: number | undefined;
  let usage: Record<string, number>;
  let note: string;
  if (pricing.unit === 'per_token' && model.prices !== undefined) {
    usage = { input_tokens: input.usage.input_tokens ?? 0, output_tokens: input.usage.output_tokens ?? 0 };
    micro = costOf(model.prices, { promptTokens: usage.input_tokens as number, completionTokens: usage.output_tokens as number });
    note = `input tokens × USD ${pricing.input_usd_per_1m}/1M + output tokens × USD ${pricing.output_usd_per_1m}/1M. A chat run holds its input estimate plus min(max_tokens or 4096, the model's output limit) output tokens up front and bills the real usage.`;
  } else {
    const unitPricing = pricing as UnitPricing;
    const field = USAGE_FIELD[unitPricing.unit];
    const quantity = (input.usage as Record<string, number | undefined>)[field] ?? defaultQuantity(entry, unitPricing);
    if (quantity === undefined) {
      throw new GatewayError('model_unavailable', `The model '${entry.slug}' has no default duration in the catalog, so a per-second price cannot be worked out.`, { param: 'model' });
    }
    micro = unitCost(entry, unitPricing, quantity);
    if (micro === undefined) throw new GatewayError('model_unavailable', `The model '${entry.slug}' cannot be priced per ${field}.`, { param: 'model' });
    usage = { [field]: quantity };
    note = unitPricing.unit === 'per_gpu_second'
      ? `GPU seconds × USD ${unitPricing.usd_per_second}; a run is stopped and billed at ${unitPricing.hold_seconds} s, which is also what is held up front.`
      : `${field} × the catalog price (USD ${unitPricing.usd} for ${unitPricing.basis}).`;
  }
  const applies = new Set(Object.keys(usage));
  const credits = microToCredits(micro);
  return {
    model: entry.slug,
    unit: pricing.unit,
    usage,
    ignored: given.map(([k]) => k).filter((k) => !applies.has(k)),
    credits,
    usd: Number((credits * CREDIT_USD).toFixed(8)),
    available: model.available,
    note,
  };
}
