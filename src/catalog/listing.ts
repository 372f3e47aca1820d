/**
 * The catalog's answers, shared by GET /models, GET /models/{slug} and the MCP tools
 * `list_models` / `get_model`, so every door gives the same bytes. The filters are one zod
 * schema: the route validates query strings with it, the MCP tool takes it as its input
 * schema, and the OpenAPI document is generated from it.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { GatewayError } from '../shared/errors.ts';
import { CATEGORIES, PROVIDERS } from './catalog-file.ts';
import type { Catalog, CatalogModel } from './catalog.ts';
import { modelView } from './model-view.ts';

export const MAX_PAGE = 500;
const MAX_CACHED_LISTS = 512;

/** The list filters (spec "GET /models", query parameters). */
export const listFiltersSchema = z.object({
  category: z.enum(CATEGORIES).optional().describe('Only models of this category.'),
  provider: z.enum(PROVIDERS).optional().describe('Only models of this infrastructure provider.'),
  featured: z.boolean().optional().describe('`true` returns featured models only.'),
  include_unavailable: z.boolean().optional()
    .describe('Default false. `true` adds models that cannot run, with `available: false`, `unavailable_reason` and, when there is one, `use_instead`.'),
  limit: z.number().int().min(0).max(MAX_PAGE).optional().describe(`Page size, at most ${MAX_PAGE}. Default: every listed model in one page.`),
  offset: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().describe('Models to skip. Default 0.'),
});
export type ListFilters = z.infer<typeof listFiltersSchema>;

/** A serialised answer and its ETag. */
export interface Serialized {
  body: string;
  etag: string;
}

/**
 * Query strings → filters, with the route's errors: an unknown category or provider is
 * 400 invalid_category / invalid_provider (the message lists the allowed values); any other
 * bad value is 400 invalid_request naming the parameter.
 */
export function parseListQuery(raw: Record<string, unknown>): ListFilters {
  const typed: Record<string, unknown> = {};
  for (const name of Object.keys(listFiltersSchema.shape)) {
    const value = raw[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) throw new GatewayError('invalid_request', `'${name}' may be given once.`, { param: name });
    typed[name] = fromQueryString(String(value));
  }
  const parsed = listFiltersSchema.safeParse(typed);
  if (parsed.success) return parsed.data;
  const param = String(parsed.error.issues[0]?.path[0] ?? 'query');
  throw filterError(param, String(raw[param]));
}

/** Digits become numbers and true/false booleans; anything else stays a string, which the schema then refuses. */
function fromQueryString(value: string): unknown {
  if (/^\d+$/.test(value)) return Number(value);
  if (value === 'true') return true;
  if (value === 'false') return false;
  return value;
}

function filterError(param: string, value: string): GatewayError {
  switch (param) {
    case 'category':
      return new GatewayError('invalid_category', `Invalid category '${value}'. Allowed values: ${CATEGORIES.join(', ')}.`, { param });
    case 'provider':
      return new GatewayError('invalid_provider', `Invalid provider '${value}'. Allowed values: ${PROVIDERS.join(', ')}.`, { param });
    case 'featured':
    case 'include_unavailable':
      return new GatewayError('invalid_request', `'${param}' must be true or false.`, { param });
    case 'limit':
      return new GatewayError('invalid_request', `'limit' must be an integer from 0 to ${MAX_PAGE}.`, { param });
    default:
      return new GatewayError('invalid_request', `'${param}' must be a non-negative integer.`, { param });
  }
}

/** Listed by default: available (priced, not duplicate, not removed, runnable). Deprecated models stay listed. */
function listed(model: CatalogModel, filters: ListFilters): boolean {
  if (filters.include_unavailable !== true && !model.available) return false;
  if (filters.category !== undefined && model.entry.category !== filters.category) return false;
  if (filters.provider !== undefined && model.entry.provider !== filters.provider) return false;
  if (filters.featured === true && !model.entry.is_featured) return false;
  return true;
}

/**
 * Answers from memory: each model is serialised once per catalog load, each distinct list
 * answer once.
 */
export class CatalogAnswers {
  private readonly listJson = new Map<CatalogModel, string>();
  private readonly detailJson = new Map<string, Serialized>();
  private readonly lists = new Map<string, Serialized>();

  constructor(private readonly catalog: Catalog) {
    for (const model of catalog.models) {
      this.listJson.set(model, JSON.stringify(modelView(model, false)));
      const body = JSON.stringify(modelView(model, true));
      this.detailJson.set(model.entry.slug, { body, etag: etagOf(body) });
    }
  }

  /** The catalog list response: `{object:'list', data, has_more, total}`. */
  list(filters: ListFilters): Serialized {
    const offset = filters.offset ?? 0;
    const cacheKey = `${filters.category}|${filters.provider}|${filters.featured === true}|${filters.include_unavailable === true}|${filters.limit}|${offset}`;
    let answer = this.lists.get(cacheKey);
    if (answer === undefined) {
      const matching = this.catalog.models.filter((m) => listed(m, filters));
      const page = matching.slice(offset, filters.limit === undefined ? undefined : offset + filters.limit);
      const body = `{"object":"list","data":[${page.map((m) => this.listJson.get(m)).join(',')}],"has_more":${offset + page.length < matching.length},"total":${matching.length}}`;
      answer = { body, etag: etagOf(body) };
      if (this.lists.size >= MAX_CACHED_LISTS) this.lists.clear();
      this.lists.set(cacheKey, answer);
    }
    return answer;
  }

  /** One model with the single-model fields, by slug or provider model id; 404 model_not_found otherwise. */
  detail(name: string): Serialized {
    const model = this.catalog.resolve(name);
    if (model === undefined) throw new GatewayError('model_not_found', `The model '${name}' does not exist.`, { param: 'model' });
    return this.detailJson.get(model.entry.slug) as Serialized;
  }
}

function etagOf(body: string): string {
  return `"${createHash('sha1').update(body).digest('base64url')}"`;
}
