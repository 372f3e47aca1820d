/**
 * POST /fine_tuning/jobs before any money moves, in the order of checks (DECISIONS.md):
 * strict validation of the body (400 validation_failed with `param` and `details`), then the
 * model: a provider_1-style text model tagged `fine-tunable` with a training price
 * (else 404 model_not_found; unpriced or removed → 503 model_unavailable).
 */
import { z } from 'zod';
import type { Catalog, CatalogModel } from '../catalog/catalog.ts';
import { trainingPrice } from '../catalog/pricing.ts';
import { parseStrictBody } from '../http/strict-body.ts';
import { GatewayError } from '../shared/errors.ts';

/** The epochs held and sent when the client gives none (or "auto"): provider_1's documented default for small files is 3–4; the gateway always sends a number, so the hold is the most the job can train. */
export const DEFAULT_EPOCHS = 3;
export const MAX_EPOCHS = 50;

const auto = z.literal('auto');
const fileUrl = z.string().min(1).refine((v) => v.startsWith('https://') || v.startsWith('data:'), 'must be an https URL or a data: URL of JSONL');

export const createJobSchema = z.strictObject({
  model: z.string().min(1, 'must be a model slug'),
  training_file: fileUrl,
  validation_file: fileUrl.nullish(),
  hyperparameters: z
    .strictObject({
      n_epochs: z.union([auto, z.number().int().min(1).max(MAX_EPOCHS)]).optional(),
      batch_size: z.union([auto, z.number().int().min(1).max(256)]).optional(),
      learning_rate_multiplier: z.union([auto, z.number().gt(0).max(10)]).optional(),
    })
    .optional(),
  suffix: z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, - and _ only').nullish(),
  seed: z.number().int().min(0).max(2_147_483_647).nullish(),
});

export type CreateJobBody = z.infer<typeof createJobSchema>;

export interface FineTunable {
  model: CatalogModel;
  /** Micro-credits per trained token, scaled by 10^12. */
  price: bigint;
}

export function parseCreateJob(body: unknown): CreateJobBody {
  return parseStrictBody(createJobSchema, body);
}

export function resolveFineTunable(name: string, catalog: Catalog): FineTunable {
  const found = catalog.resolve(name);
  if (found === undefined || found.entry.category !== 'text' || !found.entry.tags.includes('fine-tunable')) {
    throw new GatewayError('model_not_found', `The model '${name}' does not exist or cannot be fine-tuned.`, { param: 'model' });
  }
  const price = trainingPrice(found.entry.pricing);
  if (!found.available || price === undefined) {
    const reason = found.unavailableReason ?? 'It has no training price.';
    const instead = found.useInstead === undefined ? '' : ` Use '${found.useInstead}' instead.`;
    throw new GatewayError('model_unavailable', `The model '${name}' cannot run now. ${reason}${instead}`, { param: 'model' });
  }
  return { model: found, price };
}

/** The hyperparameters sent to the provider: `n_epochs` always a number (what the hold counts), "auto" and absent fields left to the provider. */
export function providerHyperparameters(asked: CreateJobBody['hyperparameters']): { epochs: number; sent: Record<string, unknown> } {
  const epochs = typeof asked?.n_epochs === 'number' ? asked.n_epochs : DEFAULT_EPOCHS;
  const sent: Record<string, unknown> = { n_epochs: epochs };
  if (typeof asked?.batch_size === 'number') sent.batch_size = asked.batch_size;
  if (typeof asked?.learning_rate_multiplier === 'number') sent.learning_rate_multiplier = asked.learning_rate_multiplier;
  return { epochs, sent };
}
