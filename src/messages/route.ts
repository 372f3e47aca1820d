/**
 * POST /api/v1/messages and POST /api/v1/messages/count_tokens: the Anthropic Messages format,
 * as Claude Code and the Anthropic SDKs send it with their base URL at `/api` (DECISIONS "Agent
 * formats: the Messages route"). The key in `x-api-key` or as a bearer token, scope chat, the
 * gate's order and rate-limit headers, every error in that API's envelope. A run is chat's: the
 * same quote, hold, limits, refunds and headers (X-Service-Job-Id, X-Service-Ignored-Params).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { PassthroughHeaders } from '../providers/anthropic/passthrough.ts';
import { invalidApiKey } from '../shared/errors.ts';
import type { RouteAccess } from '../shared/route-access.ts';
import { CHAT_REFUSAL, type ChatRouteDeps } from '../chat/route.ts';
import { prepareMessages, quoteMessages, type MessagesTarget } from './admission.ts';
import type { Deployed } from '../providers/provider-call.ts';
import { countTokens } from './count-tokens.ts';
import { errorEnvelope } from './envelope.ts';
import { runMessage, runMessageStream } from './messages-run.ts';
import { runThroughDoor } from '../chat/door-run.ts';
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
    if (request.gate === undefined) throw invalidApiKey();
    const prepared = prepareMessages(request.body, passthroughHeaders(request), deps.catalog, deps.adapters);
    const jobId = newJobId();
    const { route, held } = await quoteMessages(prepared, jobId, deps.config.media);
    const first = (route.candidates[0]?.deployments[0] as Deployed<MessagesTarget>).target;
    const model = first.admitted.model.entry.slug;
    const who = { id: `msg_${jobId}`, model: prepared.request.model };
    await runThroughDoor(request, reply, deps, Date.now, { jobId, kind: 'messages', model, held, ignored: prepared.ignored, refusal: CHAT_REFUSAL }, { withParam: false, envelope: errorEnvelope },
      (paid, answer, runDeps) => {
        const ctx = { ...answer, route, first, who };
        return prepared.request.stream ? runMessageStream(paid, ctx, runDeps) : runMessage(paid, ctx, runDeps);
      });
  });
}
