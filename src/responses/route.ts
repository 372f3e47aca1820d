/**
 * POST /api/v1/responses: the Responses door onto a paid chat run. Gate (scope chat, rate-limit
 * headers on every answer after the key check) → the body → the stored conversation it continues
 * (`previous_response_id`: 404 response_not_found unless it is the account's and kept) → models,
 * plans and content support over the whole context → each deployment's request (native row or
 * translated, legs.ts) → the quote → headers → the atomic hold → the run (run.ts).
 * GET /api/v1/responses/{id}, GET …/{id}/input_items and DELETE …/{id} reach the account's
 * stored responses (stored.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { RefusalCodes } from '../billing/hold-refusal.ts';
import type { PaidRuns } from '../billing/paid-run.ts';
import type { Catalog } from '../catalog/catalog.ts';
import { prepareChatRequest, quoteRun } from '../chat/admission.ts';
import { runThroughDoor } from '../chat/door-run.ts';
import type { Config } from '../config.ts';
import type { AdapterTable, NativeResponsesTable } from '../providers/registry.ts';
import type { UpstreamClient } from '../providers/upstream-client.ts';
import type { Routing } from '../routing/routing.ts';
import { invalidApiKey } from '../shared/errors.ts';
import { newJobId } from '../shared/job-id.ts';
import type { RunMetrics } from '../shared/run-metrics.ts';
import { responsesTarget } from './legs.ts';
import { namedAsSent, parseResponsesRequest, translate } from './request.ts';
import { runNonStream, runStream, type ResponsesRunContext } from './run.ts';
import type { ResponseState } from './response-view.ts';
import { registerStoredResponseRoutes, type StoredResponses } from './stored.ts';

export interface ResponsesRouteDeps {
  catalog: Catalog;
  config: Config;
  adapters: AdapterTable;
  natives: NativeResponsesTable;
  upstream: UpstreamClient;
  routing: Routing;
  runs: PaidRuns;
  stored: StoredResponses;
  metrics?: RunMetrics;
  now?: () => number;
}

const RESPONSES_REFUSAL: RefusalCodes = {
  spendingLimit: 'spending_limit_reached',
  holdMadeOf: 'input estimate (the whole conversation) plus max_output_tokens output',
  lowerBy: 'lower max_output_tokens',
};

/** The plan's names of dropped parameters, as this format spells them. */
const RESPONSES_NAMES: Record<string, string> = { reasoning_effort: 'reasoning.effort', verbosity: 'text.verbosity', response_format: 'text.format' };

export function registerResponsesRoutes(app: FastifyInstance, deps: ResponsesRouteDeps): void {
  const now = deps.now ?? Date.now;
  app.post('/api/v1/responses', {
    config: { access: { scope: 'chat', auth: 'required', rateHeaders: 'always' }, errorParam: true },
  }, async (request, reply) => {
    const pass = request.gate;
    if (pass === undefined) throw invalidApiKey();
    const key = pass.key.record;
    const parsed = parseResponsesRequest(request.body);
    const earlier = parsed.previousResponseId === undefined ? [] : await deps.stored.conversation(parsed.previousResponseId, key.accountId, now());
    const translated = translate(parsed, earlier);
    const jobId = newJobId();
    const target = responsesTarget(deps.natives, { request: parsed, context: translated.context, tools: translated.tools, nativeTools: translated.nativeTools });
    const { prepared, quoted } = await namedAsSent(translated, async () => {
      const models = prepareChatRequest(translated.chat, deps.catalog, deps.adapters);
      return { prepared: models, quoted: await quoteRun(models, jobId, deps.config.media, target) };
    });
    const { admitted, route, held } = quoted;
    const ignored = prepared.ignored.map((name) => RESPONSES_NAMES[name] ?? name);
    const who = { id: `resp_${jobId}`, createdAt: Math.floor(now() / 1000), request: parsed };
    const keep = async (state: ResponseState) => {
      if (!parsed.store) return;
      try {
        await deps.stored.keep({ who, accountId: key.accountId, state, at: now() });
      } catch (err) {
        // The answer is still due (and billed); the response is only not kept.
        request.log.error({ err, jobId }, 'a stored response could not be kept');
      }
    };
    const quote = { jobId, kind: 'responses' as const, model: admitted.model.entry.slug, held, ignored, refusal: RESPONSES_REFUSAL };
    await runThroughDoor(request, reply, deps, now, quote, { withParam: true }, (paid, answer, runDeps) => {
      const ctx: ResponsesRunContext = { admitted, route, who, keep, ...answer };
      return parsed.stream ? runStream(paid, ctx, runDeps) : runNonStream(paid, ctx, runDeps);
    });
  });
  registerStoredResponseRoutes(app, deps.stored, now);
}
