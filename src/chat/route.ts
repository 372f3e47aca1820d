/**
 * POST /api/v1/chat/completions: gate (scope chat, rate-limit headers on every answer
 * after the key check) → admission (validation, model, plan, content, hold) → run.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Catalog } from '../catalog/catalog.ts';
import type { ChatProviderId } from '../catalog/catalog-file.ts';
import type { Config } from '../config.ts';
import { answerHeaders } from '../http/answer-headers.ts';
import { GatewayError } from '../http/errors.ts';
import { ignoredParamsHeader } from '../http/ignored-params-header.ts';
import { endUnfinishedAnswer } from '../http/last-resort.ts';
import type { AdapterTable } from '../providers/registry.ts';
import type { UpstreamClient } from '../providers/upstream-client.ts';
import type { Store } from '../store/types.ts';
import { holdChat, prepareChat } from './admission.ts';
import { runNonStream, runStream, type RunDeps } from './chat-run.ts';
import type { InFlightRuns } from './in-flight.ts';

export interface ChatRouteDeps {
  catalog: Catalog;
  store: Store;
  config: Config;
  adapters: AdapterTable;
  upstream: UpstreamClient;
  inFlight: InFlightRuns;
  instanceId: string;
  now?: () => number;
}

export function registerChatRoute(app: FastifyInstance, deps: ChatRouteDeps): void {
  const now = deps.now ?? Date.now;
  app.post('/api/v1/chat/completions', {
    config: { access: { scope: 'chat', auth: 'required', rateHeaders: 'always' }, errorParam: true },
  }, async (request, reply) => {
    const pass = request.gate;
    if (pass === undefined) throw new GatewayError('invalid_api_key', 'Invalid API key');
    // Everything the provider call and the answer's headers need is decided, and checked,
    // before any money moves: nothing that fails later can leave a held run unanswered.
    const prepared = prepareChat(request.body, deps.catalog);
    const provider = prepared.plan.provider as ChatProviderId;
    const adapter = deps.adapters[provider];
    if (adapter === undefined) {
      throw new GatewayError('model_unavailable', `The model '${prepared.request.model}' cannot run now: its provider is not connected yet.`, { param: 'model' });
    }
    const upstreamRequest = adapter.buildRequest(prepared.plan.call, deps.config.providers[provider].apiKey ?? '');
    const jobId = randomUUID();
    const headers = answerHeaders(
      reply.getHeaders(),
      { 'x-service-job-id': jobId, 'x-service-ignored-params': ignoredParamsHeader(prepared.plan.ignored) },
      (header, err) => request.log.error({ err, header }, 'answer header dropped'),
    );
    const admitted = await holdChat(prepared, pass, { catalog: deps.catalog, store: deps.store, instanceId: deps.instanceId, now }, jobId);
    reply.hijack();
    const runDeps: RunDeps = {
      store: deps.store,
      upstream: deps.upstream,
      adapter,
      endpoint: deps.config.providers[provider],
      inFlight: deps.inFlight,
      timeouts: { providerMs: deps.config.providerTimeoutMs, nonstreamKeepaliveMs: deps.config.nonstreamKeepaliveMs, streamKeepaliveMs: deps.config.streamKeepaliveMs },
      logger: request.log,
      now,
    };
    const ctx = { admitted, keyId: pass.key.record.id, keyExpiresAt: pass.key.record.expiresAt, res: reply.raw, headers, upstreamRequest };
    try {
      await (admitted.request.stream ? runStream(ctx, runDeps) : runNonStream(ctx, runDeps));
    } catch (err) {
      request.log.error({ err, jobId }, 'chat run failed outside its error handling');
      endUnfinishedAnswer(reply.raw, headers, true);
    }
  });
}
