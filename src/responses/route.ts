/**
 * POST /api/v1/responses: the Responses door onto a paid chat run. Gate (scope chat, rate-limit
 * headers on every answer after the key check) → the body → the stored conversation it continues
 * (`previous_response_id`: 404 response_not_found unless it is the account's and kept) → models,
 * plans and content support over the whole context → each deployment's request (native row or
 * translated, legs.ts) → the quote → headers → the atomic hold → the run (run.ts).
 * GET /api/v1/responses/{id}, GET …/{id}/input_items and DELETE …/{id} reach the account's
 * stored responses (stored.ts).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { RefusalCodes } from '../billing/hold-refusal.ts';
import { payingKeyOf, type PaidRuns } from '../billing/paid-run.ts';
import type { Catalog } from '../catalog/catalog.ts';
import { prepareChatRequest, quoteRun } from '../chat/admission.ts';
import type { ChatRunDeps } from '../chat/chat-run.ts';
import type { Config } from '../config.ts';
import { answerHeaders } from '../http/answer-headers.ts';
import { ignoredParamsHeader } from '../http/ignored-params-header.ts';
import { endUnfinishedAnswer } from '../http/last-resort.ts';
import type { AdapterTable, NativeResponsesTable } from '../providers/registry.ts';
import type { UpstreamClient } from '../providers/upstream-client.ts';
import type { Routing } from '../routing/routing.ts';
import { invalidApiKey } from '../shared/errors.ts';
import { NO_RUN_METRICS, noteOutcome, type RunMetrics } from '../shared/run-metrics.ts';
import { responsesTarget } from './legs.ts';
import { namedAsSent, parseResponsesRequest, translate } from './request.ts';
import { runNonStream, runStream, type ResponsesRunContext } from './run.ts';
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
    const jobId = randomUUID();
    const target = responsesTarget(deps.natives, { request: parsed, context: translated.context, tools: translated.tools, nativeTools: translated.nativeTools });
    const { prepared, quoted } = await namedAsSent(translated, async () => {
      const models = prepareChatRequest(translated.chat, deps.catalog, deps.adapters);
      return { prepared: models, quoted: await quoteRun(models, jobId, deps.config.media, target) };
    });
    const { admitted, route, held } = quoted;
    const ignored = prepared.ignored.map((name) => RESPONSES_NAMES[name] ?? name);
    const headers = answerHeaders(
      reply.getHeaders(),
      { 'x-service-job-id': jobId, 'x-service-ignored-params': ignoredParamsHeader(ignored) },
      (header, err) => request.log.error({ err, header }, 'answer header dropped'),
    );
    const run = await deps.runs.admit({
      jobId,
      kind: 'responses',
      model: admitted.model.entry.slug,
      key: payingKeyOf(key),
      quote: held,
      clientAddress: pass.clientAddress(),
      refusal: RESPONSES_REFUSAL,
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
    const who = { id: `resp_${jobId}`, createdAt: Math.floor(now() / 1000), request: parsed };
    const ctx: ResponsesRunContext = {
      admitted,
      res: reply.raw,
      headers,
      route,
      who,
      keep: async (state) => {
        if (!parsed.store) return;
        try {
          await deps.stored.keep({ who, accountId: key.accountId, state, at: now() });
        } catch (err) {
          // The answer is still due (and billed); the response is only not kept.
          request.log.error({ err, jobId }, 'a stored response could not be kept');
        }
      },
    };
    try {
      await deps.runs.execute(run, (paid) => (parsed.stream ? runStream(paid, ctx, runDeps) : runNonStream(paid, ctx, runDeps)));
    } catch (err) {
      request.log.error({ err, jobId }, 'responses run failed outside its error handling');
    } finally {
      endUnfinishedAnswer(reply.raw, headers, true);
    }
  });
  registerStoredResponseRoutes(app, deps.stored, now);
}
