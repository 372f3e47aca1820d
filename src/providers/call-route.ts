/**
 * What a door gives the provider-call glue (provider-call.ts): its candidate models, each
 * with the deployments it runs on and the door's request for each, built before the hold.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { ProviderId } from '../catalog/catalog-file.ts';
import type { Routing } from '../routing/routing.ts';
import type { GatewayError } from '../shared/errors.ts';
import type { UpstreamRequest } from './adapter.ts';
import type { UpstreamClient, UpstreamResponse } from './upstream-client.ts';

/** One place a candidate model runs (a catalog deployment), with the door's request for it. */
export interface CallTarget {
  provider: ProviderId;
  /** The model's id at this provider. */
  providerModelId: string;
  /** The door's request for this deployment with `apiKey`, by its adapter. */
  build(apiKey: string): UpstreamRequest;
  /** An upstream non-2xx answer → our error (the adapter's mapping). */
  mapError(status: number, body: unknown, text: string): GatewayError;
  /** A throttled key's rest as the provider's error body says (where it does not send retry-after). */
  retryDelayMs?(body: unknown): number | undefined;
}

/** A model that may answer: its catalog slug (its prices bill the run when it answers) and its deployments. */
export interface CallCandidate<T extends CallTarget> {
  model: string;
  /** In the catalog's order (catalog.ts `deploymentsOf`), with their weights and priorities (routing/deployments.ts). */
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
  /** The request's raw response (Fastify's reply.raw): its log line lists the attempts. */
  response?: object;
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

/** The request with `key` in the slot it was built with (headers and path; a key never travels in a body). */
export function withKey(request: UpstreamRequest, key: string): UpstreamRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name] = value.includes(KEY_SLOT) ? value.replace(KEY_SLOT, key) : value;
  const path = request.path.includes(KEY_SLOT) ? request.path.replace(KEY_SLOT, encodeURIComponent(key)) : request.path;
  return { path, headers, body: request.body };
}
