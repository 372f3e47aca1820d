/**
 * POST /api/v1/embeddings: gate (scope embeddings) → the request's own checks (strict
 * body, model, dimensions: no rate-limit headers) → the generation step, every answer
 * of which carries the rate-limit headers: the model runs now, at most 2,000,000 values,
 * the quote, the paid-run core's atomic hold (X-Job-Id from here on), the run.
 * Synchronous: the vectors exist only in this answer (docs/decisions.md).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { RefusalCodes } from '../billing/hold-refusal.ts';
import { payingKeyOf, type PaidRuns } from '../billing/paid-run.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { Config, ProviderEndpoint } from '../config.ts';
import type { Routing } from '../routing/routing.ts';
import { rateLimitHeaders } from '../gate/access-gate.ts';
import type { EmbeddingsAdapterTable } from '../providers/embeddings-registry.ts';
import type { UpstreamClient } from '../providers/upstream-client.ts';
import { GatewayError, internalError, invalidApiKey } from '../shared/errors.ts';
import { checkRunnable, prepareEmbeddings } from './embeddings-request.ts';
import { quoteEmbeddings, runEmbeddings, type EmbeddingsOutcome } from './embeddings-run.ts';

export interface EmbeddingsRouteDeps {
  catalog: Catalog;
  config: Config;
  adapters: EmbeddingsAdapterTable;
  upstream: UpstreamClient;
  routing: Routing;
  runs: PaidRuns;
}

const EMBEDDINGS_REFUSAL: RefusalCodes = {
  spendingLimit: 'monthly_limit_exceeded',
  holdMadeOf: 'the input tokens',
  lowerBy: 'send fewer or shorter inputs',
};

export function registerEmbeddingsRoute(app: FastifyInstance, deps: EmbeddingsRouteDeps): void {
  app.post('/api/v1/embeddings', {
    config: { access: { scope: 'embeddings', auth: 'required', rateHeaders: 'route' } },
  }, async (request, reply) => {
    const pass = request.gate;
    if (pass === undefined) throw invalidApiKey();
    const prepared = prepareEmbeddings(request.body, deps.catalog, deps.adapters);
    // The generation step: from here every answer, errors included, carries the rate-limit headers.
    reply.headers(rateLimitHeaders(pass.rate));
    const job = checkRunnable(prepared);
    if ((deps.config.providers as Partial<Record<string, ProviderEndpoint>>)[job.model.entry.provider] === undefined) throw new GatewayError('model_unavailable', `The model '${job.request.model}' cannot run now: its provider is not configured.`, { param: 'model' });
    const quoted = await quoteEmbeddings(job);
    const key = pass.key.record;
    const run = await deps.runs.admit({
      jobId: randomUUID(),
      kind: 'embeddings',
      model: job.model.entry.slug,
      key: payingKeyOf(key),
      quote: quoted.quote,
      clientAddress: pass.clientAddress(),
      refusal: EMBEDDINGS_REFUSAL,
    });
    reply.header('x-job-id', run.jobId);
    let outcome: EmbeddingsOutcome | undefined;
    await deps.runs.execute(run, async (paid) => {
      outcome = await runEmbeddings(paid, quoted, { upstream: deps.upstream, routing: deps.routing, logger: request.log, response: reply.raw });
    });
    if (outcome === undefined) throw internalError();
    if (!outcome.ok) throw outcome.error;
    return outcome.answer;
  });
}
