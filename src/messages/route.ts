/**
 * POST /api/v1/messages and POST /api/v1/messages/count_tokens: the Anthropic Messages format,
 * as Claude Code and the Anthropic SDKs send it with their base URL at `/api` (DECISIONS "Agent
 * formats: the Messages route"). The key in `x-api-key` or as a bearer token, scope chat, the
 * gate's order and rate-limit headers, every error in that API's envelope. A run is chat's: the
 * same quote, hold, limits, refunds and headers (X-Service-Job-Id, X-Service-Ignored-Params).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { payingKeyOf } from '../billing/paid-run.ts';
import { answerHeaders } from '../http/answer-headers.ts';
import { ignoredParamsHeader } from '../http/ignored-params-header.ts';
import { endUnfinishedAnswer } from '../http/last-resort.ts';
import type { PassthroughHeaders } from '../providers/anthropic/passthrough.ts';
import { invalidApiKey } from '../shared/errors.ts';
import type { RouteAccess } from '../shared/route-access.ts';
import { NO_RUN_METRICS, noteOutcome } from '../shared/run-metrics.ts';
import { CHAT_REFUSAL, type ChatRouteDeps } from '../chat/route.ts';
import { prepareMessages, quoteMessages, type MessagesTarget } from './admission.ts';
import type { Deployed } from '../providers/provider-call.ts';
import { countTokens } from './count-tokens.ts';
import { errorEnvelope } from './envelope.ts';
import { runMessage, runMessageStream, type MessagesRunDeps } from './messages-run.ts';
import { newJobId } from '../shared/job-id.ts';

/** What the chat route needs, the same for this door. */
export type MessagesRouteDeps = Omit<ChatRouteDeps, 'now'>;

const ACCESS: RouteAccess = { scope: 'chat', auth: 'required', rateHeaders: 'always', keyHeader: 'x-api-key' };
const ROUTE_CONFIG = { access: ACCESS, errorEnvelope };

/** The client's protocol headers that travel on to provider_2 (a repeated header is joined, as HTTP reads it). */
function passthroughHeaders(request: FastifyRequest): PassthroughHeaders {
  const one = (name: string) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value.join(',') : value;
  };
  return { version: one('anthropic-version'), beta: one('anthropic-beta') };
}

export function registerMessagesRoutes(app: FastifyInstance, deps: MessagesRouteDeps): void {
  app.post('/api/v1/messages/count_tokens', { config: ROUTE_CONFIG }, async (request) => {
    if (request.gate === undefined) throw invalidApiKey();
    return { input_tokens: await countTokens(request.body, deps.catalog, deps.adapters, deps.config.media) };
  });

  app.post('/api/v1/messages', { config: ROUTE_CONFIG }, async (request, reply) => {
    const pass = request.gate;
    if (pass === undefined) throw invalidApiKey();
    const prepared = prepareMessages(request.body, passthroughHeaders(request), deps.catalog, deps.adapters);
    const jobId = newJobId();
    const { route, held } = await quoteMessages(prepared, jobId, deps.config.media);
    const first = (route.candidates[0]?.deployments[0] as Deployed<MessagesTarget>).target;
    const headers = answerHeaders(
      reply.getHeaders(),
      { 'x-service-job-id': jobId, 'x-service-ignored-params': ignoredParamsHeader(prepared.ignored) },
      (header, err) => request.log.error({ err, header }, 'answer header dropped'),
    );
    const key = pass.key.record;
    const model = first.admitted.model.entry.slug;
    const run = await deps.runs.admit({ jobId, kind: 'messages', model, key: payingKeyOf(key), quote: held, clientAddress: pass.clientAddress(), refusal: CHAT_REFUSAL });
    noteOutcome(reply.raw, { jobId, keyId: key.id, model });
    reply.hijack();
    const runDeps: MessagesRunDeps = {
      upstream: deps.upstream,
      routing: deps.routing,
      timeouts: { nonstreamKeepaliveMs: deps.config.nonstreamKeepaliveMs, streamKeepaliveMs: deps.config.streamKeepaliveMs },
      logger: request.log,
      metrics: deps.metrics ?? NO_RUN_METRICS,
      arrivedAt: performance.now() - reply.elapsedTime,
    };
    const ctx = { res: reply.raw, headers, route, first, who: { id: `msg_${jobId}`, model: prepared.request.model } };
    try {
      await deps.runs.execute(run, (paid) => (prepared.request.stream ? runMessageStream(paid, ctx, runDeps) : runMessage(paid, ctx, runDeps)));
    } catch (err) {
      request.log.error({ err, jobId }, 'messages run failed outside its error handling');
    } finally {
      endUnfinishedAnswer(reply.raw, headers, false, errorEnvelope);
    }
  });
}
