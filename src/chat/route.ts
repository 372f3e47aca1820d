/**
 * POST /api/v1/chat/completions: gate (scope chat, rate-limit headers on every answer
 * after the key check) → admission (validation, model, plan, content, hold) → run.
 */
import type { FastifyInstance } from 'fastify';
import type { Catalog } from '../catalog/catalog.ts';
import type { ChatProviderId } from '../catalog/catalog-file.ts';
import type { Config } from '../config.ts';
import { GatewayError } from '../shared/errors.ts';
import type { AdapterTable } from '../providers/registry.ts';
import type { UpstreamClient } from '../providers/upstream-client.ts';
import type { Store } from '../store/types.ts';
import { resolveClientAddress } from '../gate/client-address.ts';
import { admitChat } from './admission.ts';
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
    const client = resolveClientAddress(request.socket.remoteAddress, request.headers['x-forwarded-for'], deps.config.trustProxy).parsed;
    const clientAddress = client === undefined ? null : client.toString();
    const admitted = await admitChat(request.body, pass, { catalog: deps.catalog, store: deps.store, instanceId: deps.instanceId, clientAddress, now });
    const provider = admitted.plan.provider as ChatProviderId;
    const adapter = deps.adapters[provider];
    if (adapter === undefined) {
      await deps.store.refund(admitted.jobId, { status: 'failed', errorCode: 'model_unavailable', at: now() });
      throw new GatewayError('model_unavailable', `The model '${admitted.request.model}' cannot run now: its provider is not connected yet.`, { param: 'model' });
    }
    reply.header('x-service-job-id', admitted.jobId);
    if (admitted.plan.ignored.length > 0) reply.header('x-service-ignored-params', admitted.plan.ignored.join(', '));
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = String(value);
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
    const ctx = { admitted, keyId: pass.key.record.id, keyExpiresAt: pass.key.record.expiresAt, res: reply.raw, headers };
    await (admitted.request.stream ? runStream(ctx, runDeps) : runNonStream(ctx, runDeps));
  });
}
