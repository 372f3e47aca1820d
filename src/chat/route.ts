/**
 * POST /api/v1/chat/completions: gate (scope chat, rate-limit headers on every answer
 * after the key check) → validation, model, plan, content support → the adapter (before
 * any money moves) → the quote → the answer's headers, checked → the paid-run core's
 * atomic hold → the run.
 */
import type { FastifyInstance } from 'fastify';
import type { PaidRuns } from '../billing/paid-run.ts';
import type { RefusalCodes } from '../billing/hold-refusal.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { Config } from '../config.ts';
import type { AdapterTable } from '../providers/registry.ts';
import type { UpstreamClient } from '../providers/upstream-client.ts';
import type { Routing } from '../routing/routing.ts';
import { invalidApiKey } from '../shared/errors.ts';
import type { RunMetrics } from '../shared/run-metrics.ts';
import { prepareChat, quoteChat } from './admission.ts';
import { runNonStream, runStream } from './chat-run.ts';
import { runThroughDoor } from './door-run.ts';
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
    if (request.gate === undefined) throw invalidApiKey();
    // Everything the provider calls and the answer's headers need is decided, and checked (every
    // candidate's request built), before any money moves: nothing that fails later can leave a held run unanswered.
    const prepared = prepareChat(request.body, deps.catalog, deps.adapters);
    const jobId = newJobId();
    const { admitted, route, held } = await quoteChat(prepared, jobId, deps.config.media);
    await runThroughDoor(request, reply, deps, now, { jobId, kind: 'chat', model: admitted.model.entry.slug, held, ignored: prepared.ignored, refusal: CHAT_REFUSAL }, { withParam: true },
      (paid, answer, runDeps) => {
        const run = { admitted, route, ...answer };
        return admitted.request.stream ? runStream(paid, run, runDeps) : runNonStream(paid, run, runDeps);
      });
  });
}
