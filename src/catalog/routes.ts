/**
 * GET /models and GET /models/{slug}: public and free; with a key, scope `read` and the
 * request counts toward the key's rate limit, without rate-limit headers (spec Limits).
 * Answers come from memory (CatalogAnswers), with an ETag for If-None-Match → 304.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RouteAccess } from '../shared/route-access.ts';
import type { Catalog } from './catalog.ts';
import { CatalogAnswers, parseListQuery, type Serialized } from './listing.ts';

const ACCESS: RouteAccess = { scope: 'read', auth: 'optional', rateHeaders: 'never' };
const CACHE_CONTROL = 'public, max-age=300';

export function registerCatalogRoutes(app: FastifyInstance, catalog: Catalog, answers = new CatalogAnswers(catalog)): void {
  const send = (request: FastifyRequest, reply: FastifyReply, answer: Serialized) => {
    reply.header('etag', answer.etag).header('cache-control', CACHE_CONTROL);
    if (matchesEtag(request.headers['if-none-match'], answer.etag)) return reply.code(304).send();
    return reply.type('application/json; charset=utf-8').send(answer.body);
  };

  app.get('/api/v1/models', { config: { access: ACCESS, errorParam: true } }, async (request, reply) => {
    return send(request, reply, answers.list(parseListQuery(request.query as Record<string, unknown>)));
  });

  app.get('/api/v1/models/*', { config: { access: ACCESS, errorParam: true } }, async (request, reply) => {
    // The router has already decoded the path once; decoding again would misread a '%' in it (and throw on '%E0').
    const slug = (request.params as { '*': string })['*'];
    return send(request, reply, answers.detail(slug));
  });
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
