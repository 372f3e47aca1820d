/**
 * The glue every door onto a paid run uses to reach a provider, written once. A door gives
 * its candidates (the model asked for, then its fallbacks), each with the deployments it
 * runs on and the door's request for each; the glue runs the attempts under the run's abort
 * signal (client close, provider wait, key revoked): a key from the provider's pool, a
 * non-2xx answer mapped by the door's adapter, a provider refusing the gateway's own key
 * logged as an operator error, a transport failure (refused, reset, cut) mapped to 502.
 *
 * A door's part, before the hold: `prepareRoute` builds every candidate's request once (a
 * request that cannot be built fails there, before any money moves). After the hold:
 * `callProvider` with how to read a 2xx answer; it answers with the value read and the
 * candidate and deployment that gave it (whose model is billed and named in the answer).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { PaidRun } from '../billing/paid-run.ts';
import type { ProviderId } from '../catalog/catalog-file.ts';
import { deploymentsOf, type CatalogModel, type Deployment } from '../catalog/catalog.ts';
import type { Routing } from '../routing/routing.ts';
import { GatewayError } from '../shared/errors.ts';
import type { UpstreamRequest } from './adapter.ts';
import { transportFailure, upstreamFailure, type UpstreamClient, type UpstreamResponse } from './upstream-client.ts';

/** One place a candidate model runs (a catalog deployment), with the door's request for it. */
export interface CallTarget {
  provider: ProviderId;
  /** The model's id at this provider. */
  providerModelId: string;
  /** The door's request for this deployment with `apiKey`, by its adapter. */
  build(apiKey: string): UpstreamRequest;
  /** An upstream non-2xx answer → our error (the adapter's mapping). */
  mapError(status: number, body: unknown, text: string): GatewayError;
}

/** A model that may answer: its catalog slug (its prices bill the run when it answers) and its deployments. */
export interface CallCandidate<T extends CallTarget> {
  model: string;
  /** In the catalog's order; with their weights and priorities (routing/deployments.ts). */
  deployments: readonly Deployed<T>[];
}

/** A target with its place among the model's deployments. */
export interface Deployed<T extends CallTarget> {
  target: T;
  /** Share of the model's requests among the deployments of its priority. */
  weight: number;
  /** 0 runs first; a larger number only when every deployment before it rests or failed. */
  priority: number;
}

/**
 * A catalog model as a candidate: each of its deployments the door can run (`target` answers
 * undefined where it cannot: no adapter for the provider, content the provider cannot take);
 * undefined when it can run nowhere.
 */
export function candidateOf<T extends CallTarget>(model: CatalogModel, target: (deployment: Deployment) => T | undefined): CallCandidate<T> | undefined {
  const deployments: Deployed<T>[] = [];
  for (const deployment of deploymentsOf(model.entry)) {
    const made = target(deployment);
    if (made !== undefined) deployments.push({ target: made, weight: deployment.weight, priority: deployment.priority });
  }
  return deployments.length === 0 ? undefined : { model: model.entry.slug, deployments };
}

/** Where the key goes in a request built before the hold; each attempt puts a key of the provider's pool in its place. */
export const KEY_SLOT = '{{provider-key}}';

/** The candidates of one run, their requests built and checked (before the hold). */
export interface ProviderRoute<T extends CallTarget> {
  /** What the client asked for: the GenAI operation (`chat`, `embeddings`) and model, for the traces. */
  operation: string;
  requestedModel: string;
  candidates: readonly CallCandidate<T>[];
  /** Each target's request, built with KEY_SLOT. */
  built: ReadonlyMap<T, UpstreamRequest>;
}

/**
 * Builds every candidate's request once, before the hold: a request that cannot be built
 * throws here, while nothing is held (nothing that fails later may leave a held run unanswered).
 */
export function prepareRoute<T extends CallTarget>(operation: string, requestedModel: string, candidates: readonly CallCandidate<T>[]): ProviderRoute<T> {
  const built = new Map<T, UpstreamRequest>();
  for (const candidate of candidates) for (const { target } of candidate.deployments) built.set(target, target.build(KEY_SLOT));
  return { operation, requestedModel, candidates, built };
}

export interface ProviderCallDeps {
  upstream: UpstreamClient;
  logger: FastifyBaseLogger;
  /** The providers' endpoints and key pools, the deployments' health, retries and traces (one per gateway). */
  routing: Routing;
}

/** The answer of the attempt that succeeded. */
export interface Answered<T extends CallTarget, R> {
  /** What `read` made of the 2xx answer. */
  value: R;
  /** The catalog slug that answered: the run is billed at its prices and the answer names it. */
  model: string;
  target: T;
}

/**
 * Reads a 2xx answer inside its attempt: a non-stream body read here that breaks is a
 * failed attempt like any. A stream returns the response as it is (nothing is retried
 * once its first byte reaches the client).
 */
export type ReadAnswer<T extends CallTarget, R> = (response: UpstreamResponse, target: T) => Promise<R>;

/** For streams: the 2xx response itself. */
export function asResponse(response: UpstreamResponse): Promise<UpstreamResponse> {
  return Promise.resolve(response);
}

/** The first candidate's answer; any failure is thrown as our error. */
export async function callProvider<T extends CallTarget, R>(run: PaidRun, route: ProviderRoute<T>, deps: ProviderCallDeps, read: ReadAnswer<T, R>): Promise<Answered<T, R>> {
  const candidate = route.candidates[0];
  const deployed = candidate?.deployments[0];
  if (candidate === undefined || deployed === undefined) throw new GatewayError('model_unavailable', `The model '${route.requestedModel}' cannot run now.`);
  const target = deployed.target;
  const endpoint = deps.routing.endpoint(target.provider);
  const request = withKey(route.built.get(target) ?? target.build(KEY_SLOT), endpoint.apiKeys[0] ?? '');
  const response = await deps.upstream.post(endpoint.baseUrl, request.path, request.headers, request.body, run.signal);
  if (response.status >= 200 && response.status < 300) return { value: await read(response, target), model: candidate.model, target };
  const error = await upstreamFailure(response, (status, body, text) => target.mapError(status, body, text));
  if (error.code === 'model_unavailable') deps.logger.error({ status: response.status, provider: target.provider }, 'provider refused the gateway (operator error)');
  throw error;
}

/** The request with `key` in the slot it was built with (headers and path; a key never travels in a body). */
export function withKey(request: UpstreamRequest, key: string): UpstreamRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name] = value.includes(KEY_SLOT) ? value.replace(KEY_SLOT, key) : value;
  const path = request.path.includes(KEY_SLOT) ? request.path.replace(KEY_SLOT, encodeURIComponent(key)) : request.path;
  return { path, headers, body: request.body };
}

/** The error a run ended on: its stop reason's, a transport failure as 502, else what was thrown. */
export function runFailure(run: PaidRun, thrown: unknown): GatewayError {
  return run.errorFor(transportFailure(thrown) ?? thrown);
}
