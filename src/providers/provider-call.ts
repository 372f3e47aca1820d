/**
 * The glue every door onto a paid run uses to reach a chat or embeddings provider, written
 * once: the call under the run's abort signal (client close, provider wait, key revoked),
 * a non-2xx answer mapped by the adapter, a provider refusing the gateway's own key logged
 * as an operator error, and a transport failure (refused, reset, cut) mapped to 502.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { PaidRun } from '../billing/paid-run.ts';
import type { ProviderId } from '../catalog/catalog-file.ts';
import type { GatewayError } from '../shared/errors.ts';
import type { UpstreamRequest } from './adapter.ts';
import { transportFailure, upstreamFailure, type UpstreamClient, type UpstreamResponse } from './upstream-client.ts';

/** Where one provider call goes (config's ProviderEndpoint, which sits above this layer), and how its refusals read. */
export interface ProviderTarget {
  provider: ProviderId;
  endpoint: { baseUrl: string; apiKey: string | undefined };
  /** An upstream non-2xx answer → our error (the adapter's mapping). */
  mapError(status: number, body: unknown, text: string): GatewayError;
}

export interface ProviderCallDeps {
  upstream: UpstreamClient;
  logger: FastifyBaseLogger;
}

/** The provider's 2xx answer; any other status is thrown as the adapter's error. */
export async function callProvider(run: PaidRun, target: ProviderTarget, request: UpstreamRequest, deps: ProviderCallDeps): Promise<UpstreamResponse> {
  const response = await deps.upstream.post(target.endpoint.baseUrl, request.path, request.headers, request.body, run.signal);
  if (response.status >= 200 && response.status < 300) return response;
  const error = await upstreamFailure(response, (status, body, text) => target.mapError(status, body, text));
  if (error.code === 'model_unavailable') deps.logger.error({ status: response.status, provider: target.provider }, 'provider refused the gateway (operator error)');
  throw error;
}

/** The error a run ended on: its stop reason's, a transport failure as 502, else what was thrown. */
export function runFailure(run: PaidRun, thrown: unknown): GatewayError {
  return run.errorFor(transportFailure(thrown) ?? thrown);
}
