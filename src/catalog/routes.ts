/**
 * GET /models and GET /models/{slug}: public and free; with a key, scope `read` and the
 * request counts toward the key's rate limit, without rate-limit headers (spec Limits).
 * Answers come from memory: each model is serialised once per catalog load, each
 * distinct list answer once, with an ETag for If-None-Match → 304.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../shared/errors.ts';
import type { RouteAccess } from '../shared/route-access.ts';
import { CATEGORIES, PROVIDERS, type Category, type ProviderId } from './catalog-file.ts';
import type { Catalog, CatalogModel } from './catalog.ts';
import { modelView } from './model-view.ts';

const ACCESS: RouteAccess = { scope: 'read', auth: 'optional', rateHeaders: 'never' };
const MAX_PAGE = 500;
const CACHE_CONTROL = 'public, max-age=300';
const MAX_CACHED_LISTS = 512;

interface Serialized {
  body: string;
  etag: string;
}

interface ListQuery {
  category: Category | undefined;
  provider: ProviderId | undefined;
  featured: boolean;
  includeUnavailable: boolean;
  limit: number | undefined;
  offset: number;
}

/** Listed by default: available (priced, not duplicate, not removed, runnable). Deprecated models stay listed. */
function listed(model: CatalogModel, query: ListQuery): boolean {
  if (!query.includeUnavailable && !model.available) return false;
  if (query.category !== undefined && model.entry.category !== query.category) return false;
  if (query.provider !== undefined && model.entry.provider !== query.provider) return false;
  if (query.featured && !model.entry.is_featured) return false;
  return true;
}

export function registerCatalogRoutes(app: FastifyInstance, catalog: Catalog): void {
  const listJson = new Map<CatalogModel, string>();
  const detailJson = new Map<string, Serialized>();
  for (const model of catalog.models) {
    listJson.set(model, JSON.stringify(modelView(model, false)));
    const body = JSON.stringify(modelView(model, true));
    detailJson.set(model.entry.slug, { body, etag: etagOf(body) });
  }
  const lists = new Map<string, Serialized>();

  const send = (request: FastifyRequest, reply: FastifyReply, answer: Serialized) => {
    reply.header('etag', answer.etag).header('cache-control', CACHE_CONTROL);
    if (matchesEtag(request.headers['if-none-match'], answer.etag)) return reply.code(304).send();
    return reply.type('application/json; charset=utf-8').send(answer.body);
  };

  app.get('/api/v1/models', { config: { access: ACCESS, errorParam: true } }, async (request, reply) => {
    const query = parseListQuery(request.query as Record<string, unknown>);
    const cacheKey = JSON.stringify(query);
    let answer = lists.get(cacheKey);
    if (answer === undefined) {
      const matching = catalog.models.filter((m) => listed(m, query));
      const page = matching.slice(query.offset, query.limit === undefined ? undefined : query.offset + query.limit);
      const body = `{"object":"list","data":[${page.map((m) => listJson.get(m)).join(',')}],"has_more":${query.offset + page.length < matching.length},"total":${matching.length}}`;
      answer = { body, etag: etagOf(body) };
      if (lists.size >= MAX_CACHED_LISTS) lists.clear();
      lists.set(cacheKey, answer);
    }
    return send(request, reply, answer);
  });

  app.get('/api/v1/models/*', { config: { access: ACCESS, errorParam: true } }, async (request, reply) => {
    // The router has already decoded the path once; decoding again would misread a '%' in it (and throw on '%E0').
    const slug = (request.params as { '*': string })['*'];
    const model = catalog.resolve(slug);
    if (model === undefined) throw new GatewayError('model_not_found', `The model '${slug}' does not exist.`, { param: 'model' });
    return send(request, reply, detailJson.get(model.entry.slug) as Serialized);
  });
}

function parseListQuery(raw: Record<string, unknown>): ListQuery {
  const single = (name: string): string | undefined => {
    const value = raw[name];
    if (value === undefined) return undefined;
    if (Array.isArray(value)) throw invalid(name, `'${name}' may be given once.`);
    return String(value);
  };
  const category = single('category');
  if (category !== undefined && !(CATEGORIES as readonly string[]).includes(category)) {
    throw new GatewayError('invalid_category', `Invalid category '${category}'. Allowed values: ${CATEGORIES.join(', ')}.`, { param: 'category' });
  }
  const provider = single('provider');
  if (provider !== undefined && !(PROVIDERS as readonly string[]).includes(provider)) {
    throw new GatewayError('invalid_provider', `Invalid provider '${provider}'. Allowed values: ${PROVIDERS.join(', ')}.`, { param: 'provider' });
  }
  return {
    category: category as Category | undefined,
    provider: provider as ProviderId | undefined,
    featured: parseBoolean('featured', single('featured')),
    includeUnavailable: parseBoolean('include_unavailable', single('include_unavailable')),
    limit: parseInteger('limit', single('limit'), 0, MAX_PAGE),
    offset: parseInteger('offset', single('offset'), 0, Number.MAX_SAFE_INTEGER) ?? 0,
  };
}

function parseBoolean(name: string, value: string | undefined): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw invalid(name, `'${name}' must be true or false.`);
}

function parseInteger(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw invalid(name, `'${name}' must be an integer from ${min} to ${max === Number.MAX_SAFE_INTEGER ? 'any size' : max}.`);
  }
  return Number(value);
}

function invalid(param: string, message: string): GatewayError {
  return new GatewayError('invalid_request', message, { param });
}

function etagOf(body: string): string {
  return `"${createHash('sha1').update(body).digest('base64url')}"`;
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
