/**
 * Everything before a media run's money moves, in the order of checks (DECISIONS.md):
 * the body's `model`, the model (404 model_not_found for an unknown slug or another
 * category, 503 model_unavailable when it cannot run), strict validation of the body
 * against the route's fields plus the model's `configuration.input_schema` (400
 * validation_failed with `param` and `details`), then the image fields.
 */
import { z } from 'zod';
import type { Catalog, CatalogModel } from '../catalog/catalog.ts';
import type { CatalogEntry, CatalogPricing } from '../catalog/catalog-file.ts';
import { isMediaHost, type MediaHostId } from '../providers/predictions/media-host.ts';
import { GatewayError } from '../shared/errors.ts';
import { inputFields } from './input-schema.ts';
import type { MediaJobKind } from './job-runner.ts';

export type MediaKind = 'image' | 'video';

interface RouteField {
  schema: z.ZodType;
  required: boolean;
}

/** A media route's own fields and rules; one row per route. */
export interface MediaRoute {
  kind: MediaJobKind;
  /** The catalog category it runs; `multimodal` models whose formats include `format` run too. */
  category: 'image' | 'video' | 'speech_tts' | 'transcription_stt';
  format: 'image' | 'video' | 'speech' | 'transcription';
  /** How the 404 names the kind of model asked for ("an image", "a speech"). */
  noun: string;
  /** The route's fields. A field the model also declares must satisfy both; `model` and `n` never reach the host unless the model declares them. */
  fields: Record<string, RouteField>;
  /** Route-only fields: what the route reads, not the host. */
  routeOnly: readonly string[];
  /** Fields the route knows but the host must take: refused, naming the field, when the model has no input for them. */
  modelInputs: readonly string[];
  /** [field, needs]: a field that is refused without another (a last frame needs a first frame). */
  needs: readonly (readonly [string, string])[];
  /** Inputs the route supplies or checks itself (with its own error codes): never required by the schema check. */
  ownChecks?: readonly string[];
}

const model = { schema: z.string().min(1, 'must be a model slug'), required: true };
const prompt = { schema: z.string().min(1, 'must not be empty'), required: true };

export const IMAGE_ROUTE: MediaRoute = {
  kind: 'image',
  category: 'image',
  format: 'image',
  noun: 'an image',
  fields: { model, prompt, n: { schema: z.number().int().min(1).max(10), required: false } },
  routeOnly: ['model', 'n'],
  modelInputs: ['image'],
  needs: [],
};

export const VIDEO_ROUTE: MediaRoute = {
  kind: 'video',
  category: 'video',
  format: 'video',
  noun: 'a video',
  fields: { model, prompt },
  routeOnly: ['model'],
  modelInputs: ['image', 'end_image', 'duration'],
  needs: [['end_image', 'image']],
};

export type MediaPricing = Exclude<CatalogPricing, { unit: 'per_token' }>;

export interface PreparedMedia {
  model: CatalogModel;
  pricing: MediaPricing;
  host: MediaHostId;
  /** What the host gets for one prediction: the model's defaults, then the client's inputs. */
  input: Record<string, unknown>;
  /** Outputs asked for (`n` images; one video). */
  count: number;
  /** The model makes `count` outputs in one prediction (its input schema declares `n`); otherwise one prediction per output. */
  countIsInput: boolean;
}

export function prepareMedia(body: unknown, route: MediaRoute, catalog: Catalog): PreparedMedia {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid('The request body must be a JSON object.', { formErrors: ['The request body must be a JSON object.'], fieldErrors: {} }, null);
  }
  const fields = body as Record<string, unknown>;
  const slug = fields.model;
  if (typeof slug !== 'string' || slug === '') {
    throw invalid('model: a model slug is required.', { formErrors: [], fieldErrors: { model: ['a model slug is required'] } }, 'model');
  }
  const found = resolveMediaModel(slug, route, catalog);
  const values = validate(fields, route, found.entry);
  checkImageFields(values);
  const declared = inputFields(found.entry.configuration.input_schema).fields;
  const input: Record<string, unknown> = { ...found.entry.configuration.default_params };
  for (const [name, value] of Object.entries(values)) if (!route.routeOnly.includes(name) || Object.hasOwn(declared, name)) input[name] = value;
  const count = typeof values.n === 'number' ? values.n : 1;
  return { model: found, pricing: found.entry.pricing as MediaPricing, host: found.entry.provider as MediaHostId, input, count, countIsInput: 'n' in declared };
}

function runsOn(route: MediaRoute, entry: CatalogEntry): boolean {
  return entry.category === route.category || (entry.category === 'multimodal' && entry.supported_formats.includes(route.format));
}

/** Whether the route runs the entry at all: its kind of model, on a media host, priced per call (the catalog's availability reads it). */
export function mediaRouteRuns(route: MediaRoute, entry: CatalogEntry): boolean {
  return runsOn(route, entry) && isMediaHost(entry.provider) && entry.pricing?.unit !== 'per_token';
}

function resolveMediaModel(name: string, route: MediaRoute, catalog: Catalog): CatalogModel {
  const found = catalog.resolve(name);
  if (found === undefined || !runsOn(route, found.entry)) {
    throw new GatewayError('model_not_found', `The model '${name}' does not exist or is not ${route.noun} model.`, { param: 'model' });
  }
  if (!found.available || found.entry.pricing === null) {
    const reason = found.unavailableReason ?? 'It has no price.';
    const instead = found.useInstead === undefined ? '' : ` Use '${found.useInstead}' instead.`;
    throw new GatewayError('model_unavailable', `The model '${name}' cannot run now. ${reason}${instead}`, { param: 'model' });
  }
  if (found.entry.pricing.unit === 'per_token' || !isMediaHost(found.entry.provider)) {
    throw new GatewayError('model_unavailable', `The model '${name}' cannot run now: its provider is not connected to this route.`, { param: 'model' });
  }
  return found;
}

function validate(body: Record<string, unknown>, route: MediaRoute, entry: CatalogEntry): Record<string, unknown> {
  const declared = inputFields(entry.configuration.input_schema);
  const shape: Record<string, z.ZodType> = {};
  const names = new Set([...Object.keys(route.fields), ...Object.keys(declared.fields)]);
  for (const name of names) {
    const ours = route.fields[name];
    const theirs = declared.fields[name];
    const schema = ours !== undefined && theirs !== undefined ? ours.schema.pipe(theirs) : ((ours?.schema ?? theirs) as z.ZodType);
    const required = ours?.required === true || (declared.required.has(name) && route.ownChecks?.includes(name) !== true);
    shape[name] = required ? schema : schema.optional();
  }
  // No prototype: a field named `constructor` or `__proto__` is a field like any other.
  const fieldErrors = Object.create(null) as Record<string, string[]>;
  for (const name of Object.keys(body)) {
    if (Object.hasOwn(shape, name)) continue;
    fieldErrors[name] = [route.modelInputs.includes(name) ? `the model '${entry.slug}' has no ${name} input` : `unknown field: the model '${entry.slug}' takes no such input`];
  }
  const parsed = z.object(shape).safeParse(body);
  if (!parsed.success) {
    for (const [name, messages] of Object.entries(z.flattenError(parsed.error).fieldErrors as Record<string, string[]>)) {
      fieldErrors[name] = [...(fieldErrors[name] ?? []), ...messages];
    }
  }
  for (const [field, needs] of route.needs) {
    if (body[field] !== undefined && body[needs] === undefined && fieldErrors[field] === undefined) {
      fieldErrors[field] = [`${field} needs ${needs} (${field === 'end_image' ? 'a last frame needs a first frame' : `send ${needs} too`})`];
    }
  }
  const names_ = Object.keys(fieldErrors);
  if (names_.length > 0) {
    // `param` is the first field at fault in the body's own order (a missing field after those sent).
    const order = [...Object.keys(body), ...names];
    const param = order.find((name) => fieldErrors[name] !== undefined) ?? (names_[0] as string);
    const message = names_.map((name) => `${name}: ${(fieldErrors[name] as string[]).join('; ')}`).join('. ');
    throw invalid(`Invalid request: ${message}.`, { formErrors: [], fieldErrors }, param);
  }
  return parsed.success ? (parsed.data as Record<string, unknown>) : {};
}

/** Media files travel as an https URL or a base64 data URL (reference/providers.md §7). */
const FILE_URL = /^(https:\/\/[^\s]+|data:[\w.+-]+\/[\w.+-]+(;[\w-]+=[^;,]*)*;base64,[A-Za-z0-9+/=\s]+)$/;

function checkImageFields(values: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(values)) {
    if (!(name === 'image' || name.endsWith('_image'))) continue;
    if (typeof value === 'string' && FILE_URL.test(value)) continue;
    const why = `${name} must be an https URL or a base64 data URL`;
    throw invalid(`Invalid request: ${why}.`, { formErrors: [], fieldErrors: { [name]: [why] } }, name);
  }
}

function invalid(message: string, details: { formErrors: string[]; fieldErrors: Record<string, string[]> }, param: string | null): GatewayError {
  return new GatewayError('validation_failed', message, { param, details });
}
