/**
 * POST /api/v1/chat/completions: gate (scope chat, rate-limit headers on every answer
 * after the key check) → validation, model, plan, content support → the adapter (before
 * any money moves) → the quote → the answer's headers, checked → the paid-run core's
 * atomic hold → the run.
 */
import type { FastifyInstance } from 'fastify';
import { payingKeyOf, type PaidRuns } from '../billing/paid-run.ts';
import type { RefusalCodes } from '../billing/hold-refusal.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { Config } from '../config.ts';
import { answerHeaders } from '../http/answer-headers.ts';
import { ignoredParamsHeader } from '../http/ignored-params-header.ts';
import { endUnfinishedAnswer } from '../http/last-resort.ts';
import type { AdapterTable } from '../providers/registry.ts';
import type { UpstreamClient } from '../providers/upstream-client.ts';
import type { Routing } from '../routing/routing.ts';
import { invalidApiKey } from '../shared/errors.ts';
import { NO_RUN_METRICS, noteOutcome, type RunMetrics } from '../shared/run-metrics.ts';
import { prepareChat, quoteChat } from './admission.ts';
import { runNonStream, runStream, type ChatRunDeps } from './chat-run.ts';
import { newJobId } from '../shared/job-id.ts';

export interface ChatRouteDeps {
  catalog: Catalog;
  config: Config;
  adapters: AdapterTable;
  upstream: UpstreamClient;
  routing: Routing;
  runs: PaidRuns;
  metrics?: RunMetrics;
  now?: () => number;
}

/** A chat run's refusal codes and wording (the Messages route's runs are chat runs). */
export const CHAT_REFUSAL: RefusalCodes = {
  spendingLimit: 'spending_limit_reached',
  holdMadeOf: 'input estimate plus max_tokens output',
  lowerBy: 'lower max_tokens',
};

export function registerChatRoute(app: FastifyInstance, deps: ChatRouteDeps): void {
  const now = deps.now ?? Date.now;
  app.post('/api/v1/chat/completions', {
    config: { access: { scope: 'chat', auth: 'required', rateHeaders: 'always' }, errorParam: true },
  }, async (request, reply) => {
    const pass = request.gate;
    if (pass === undefined) throw invalidApiKey();
    // Everything the provider calls and the answer's headers need is decided, and checked (every
    // candidate's request built), before any money moves: nothing that fails later can leave a held run unanswered.
    const prepared = prepareChat(request.body, deps.catalog, deps.adapters);
    const jobId = newJobId();
    const { admitted, route, held } = await quoteChat(prepared, jobId, deps.config.media);
    const headers = answerHeaders(
      reply.getHeaders(),
      { 'x-service-job-id': jobId, 'x-service-ignored-params': ignoredParamsHeader(prepared.ignored) },
      (header, err) => request.log.error({ err, header }, 'answer header dropped'),
    );
    const key = pass.key.record;
    const run = await deps.runs.admit({
      jobId,
      kind: 'chat',
      model: admitted.model.entry.slug,
      key: payingKeyOf(key),
      quote: held,
      clientAddress: pass.clientAddress(),
      refusal: CHAT_REFUSAL,
    });
    noteOutcome(reply.raw, { jobId, keyId: key.id, model: admitted.model.entry.slug });
    reply.hijack();
    const runDeps: ChatRunDeps = {
      upstream: deps.upstream,
      routing: deps.routing,
      timeouts: { nonstreamKeepaliveMs: deps.config.nonstreamKeepaliveMs, streamKeepaliveMs: deps.config.streamKeepaliveMs },
      logger: request.log,
      now,
      metrics: deps.metrics ?? NO_RUN_METRICS,
      arrivedAt: performance.now() - reply.elapsedTime,
    };
    const ctx = { admitted, res: reply.raw, headers, route };
    try {
      await deps.runs.execute(run, (paid) => (admitted.request.stream ? runStream(paid, ctx, runDeps) : runNonStream(paid, ctx, runDeps)));
    } catch (err) {
      request.log.error({ err, jobId }, 'chat run failed outside its error handling');
    } finally {
      endUnfinishedAnswer(reply.raw, headers, true);
    }
  });
}
