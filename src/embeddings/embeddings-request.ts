/**
 * Everything about an embeddings request before money moves, in the spec's order:
 * the strict body (400 validation_failed), the model (404 model_not_found; 400
 * validation_failed for an embedding model this route does not run), `dimensions`
 * against the model (400 unsupported_parameter, invalid_value) — the request's own
 * errors, answered without rate-limit headers — then the generation step's checks:
 * the model can run now (503 model_unavailable) and at most 2,000,000 values (413).
 */
import { z } from 'zod';
import { modelUnavailable, type Catalog, type CatalogModel } from '../catalog/catalog.ts';
import type { TokenPrices } from '../catalog/pricing.ts';
import type { CatalogEntry } from '../catalog/catalog-file.ts';
import { parseStrictBody } from '../http/strict-body.ts';
import type { EmbeddingsAdapter } from '../providers/embeddings-adapter.ts';
import type { EmbeddingsAdapterTable } from '../providers/embeddings-registry.ts';
import type { EmbeddingsInput, EncodingFormat } from '../shared/embeddings-wire.ts';
import { GatewayError } from '../shared/errors.ts';

export const DEFAULT_EMBEDDINGS_MODEL = 'text-embedding-3-small';
/** Spec Limits: values per request (inputs × dimensions). */
export const MAX_EMBEDDING_VALUES = 2_000_000;
const MAX_USER_CHARS = 512;

const INPUT_RULE = 'input must be a string, an array of strings, an array of token ids, or an array of token-id arrays';

const isTokenId = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/**
 * The first fault of `input`, checked by hand rather than as a zod union: a union would
 * report every element of a long array against every alternative.
 */
function inputFault(input: unknown): { path: number[]; message: string } | undefined {
  if (typeof input === 'string') return undefined;
  if (input === undefined) return { path: [], message: `Required: ${INPUT_RULE}.` };
  if (!Array.isArray(input)) return { path: [], message: `${INPUT_RULE}.` };
  if (input.length === 0) return { path: [], message: 'input must hold at least one item.' };
  const first: unknown = input[0];
  if (typeof first === 'string') {
    const at = input.findIndex((item) => typeof item !== 'string');
    return at === -1 ? undefined : { path: [at], message: 'Expected a string, as the other items.' };
  }
  if (typeof first === 'number') {
    const at = input.findIndex((item) => !isTokenId(item));
    return at === -1 ? undefined : { path: [at], message: 'Expected a token id (a non-negative integer), as the other items.' };
  }
  if (Array.isArray(first)) {
    for (let i = 0; i < input.length; i++) {
      const item: unknown = input[i];
      if (!Array.isArray(item)) return { path: [i], message: 'Expected an array of token ids, as the other items.' };
      const at = item.findIndex((token) => !isTokenId(token));
      if (at !== -1) return { path: [i, at], message: 'Expected a token id (a non-negative integer).' };
    }
    return undefined;
  }
  return { path: [0], message: `${INPUT_RULE}.` };
}

/** `null` counts as not set on every optional field. */
export const embeddingsBodySchema = z.strictObject({
  model: z.string().min(1).nullish(),
  input: z.unknown().superRefine((input, ctx) => {
    const fault = inputFault(input);
    if (fault !== undefined) ctx.addIssue({ code: 'custom', path: fault.path, message: fault.message });
  }),
  encoding_format: z.enum(['float', 'base64']).nullish(),
  dimensions: z.number().int().min(1).nullish(),
  user: z.string().max(MAX_USER_CHARS).nullish(),
});

export interface EmbeddingsRequest {
  model: string;
  input: EmbeddingsInput;
  encoding: EncodingFormat;
  /** Only when the client asked to shorten. */
  dimensions: number | undefined;
  user: string | undefined;
}

export interface PreparedEmbeddings {
  request: EmbeddingsRequest;
  model: CatalogModel;
  adapter: EmbeddingsAdapter;
  /** Vectors the answer holds: one per input. */
  count: number;
  /** Size of each vector. */
  dimensions: number;
}

export interface RunnableEmbeddings extends PreparedEmbeddings {
  prices: TokenPrices;
}

/** The route runs the catalog's embedding models that have embedding facts and whose provider has an embeddings adapter. */
export function embeddingsRouteRuns(entry: CatalogEntry, adapters: EmbeddingsAdapterTable): boolean {
  return entry.category === 'embedding' && entry.embedding !== undefined && adapters[entry.provider] !== undefined;
}

function runsHere(model: CatalogModel, adapters: EmbeddingsAdapterTable): boolean {
  return embeddingsRouteRuns(model.entry, adapters);
}

/** The models to name when another is asked for: those the route runs that are available now. */
function allowedModels(catalog: Catalog, adapters: EmbeddingsAdapterTable): string {
  return catalog.models.filter((m) => m.available && runsHere(m, adapters)).map((m) => m.entry.slug).join(', ');
}

export function inputCount(input: EmbeddingsInput): number {
  return typeof input === 'string' || typeof input[0] === 'number' ? 1 : input.length;
}

/** Validation, model lookup and `dimensions`: the request's own errors, before the generation step. */
export function prepareEmbeddings(body: unknown, catalog: Catalog, adapters: EmbeddingsAdapterTable): PreparedEmbeddings {
  const parsed = parseStrictBody(embeddingsBodySchema, body);
  const request: EmbeddingsRequest = {
    model: parsed.model ?? DEFAULT_EMBEDDINGS_MODEL,
    input: parsed.input as EmbeddingsInput,
    encoding: parsed.encoding_format ?? 'float',
    dimensions: parsed.dimensions ?? undefined,
    user: parsed.user ?? undefined,
  };
  const model = catalog.resolve(request.model);
  if (model === undefined || model.entry.category !== 'embedding') {
    throw new GatewayError('model_not_found', `The model '${request.model}' does not exist or is not an embedding model.`, { param: 'model' });
  }
  const facts = model.entry.embedding;
  const adapter = adapters[model.entry.provider];
  if (facts === undefined || adapter === undefined) {
    const allowed = `Allowed models: ${allowedModels(catalog, adapters)}.`;
    throw new GatewayError('validation_failed', `model: '${request.model}' does not run on the embeddings route. ${allowed}`, {
      param: 'model',
      details: { formErrors: [], fieldErrors: { model: [allowed] } },
    });
  }
  if (request.dimensions !== undefined) {
    const fault = (message: string) => ({ param: 'dimensions', details: { formErrors: [], fieldErrors: { dimensions: [message] } } });
    if (!facts.shortenable) {
      const message = `The model '${model.entry.slug}' cannot shorten its vectors: leave out dimensions (its vectors have ${facts.dimensions}).`;
      throw new GatewayError('unsupported_parameter', message, fault(message));
    }
    if (request.dimensions > facts.dimensions) {
      const message = `dimensions is at most ${facts.dimensions} for '${model.entry.slug}'; ${request.dimensions} was asked.`;
      throw new GatewayError('invalid_value', message, fault(message));
    }
  }
  return { request, model, adapter, count: inputCount(request.input), dimensions: request.dimensions ?? facts.dimensions };
}

/** The generation step's checks before the hold: the model can run now, and the answer stays within the values limit. */
export function checkRunnable(prepared: PreparedEmbeddings): RunnableEmbeddings {
  const { model } = prepared;
  if (!model.available || model.prices === undefined) throw modelUnavailable(prepared.request.model, model);
  const values = prepared.count * prepared.dimensions;
  if (values > MAX_EMBEDDING_VALUES) {
    throw new GatewayError(
      'too_many_embedding_values',
      `This request asks for ${values.toLocaleString('en-US')} values (${prepared.count} inputs × ${prepared.dimensions} dimensions); at most ${MAX_EMBEDDING_VALUES.toLocaleString('en-US')} per request. Nothing was charged: send fewer inputs per request or lower dimensions.`,
    );
  }
  return { ...prepared, prices: model.prices };
}
