/**
 * What the provider-call glue keeps across runs, one per gateway: where each provider is, its
 * key pool, the deployments' health, the retry budget and backoff, the metrics and the tracer.
 */
import type { ProviderId } from '../catalog/catalog-file.ts';
import { GatewayError } from '../shared/errors.ts';
import { NO_ROUTING_METRICS, type RoutingMetrics } from '../shared/run-metrics.ts';
import { NO_TRACER, type RunTracer } from '../telemetry/run-tracer.ts';
import { DeploymentHealth } from './deployments.ts';
import { KeyPools } from './key-pool.ts';
import { LocalRests, type Rests } from './rests.ts';

/** A provider's base URL and its keys, in the configured order. */
export interface PoolEndpoint {
  baseUrl: string;
  apiKeys: readonly string[];
}

export interface RoutingOptions {
  endpoints: Partial<Record<ProviderId, PoolEndpoint>>;
  /** Where rests are kept: this process (LocalRests), or every process (RedisRests). */
  rests?: Rests;
  /** UPSTREAM_RETRIES: attempts of one model after its first, at most. */
  retries?: number;
  /** UPSTREAM_BACKOFF_MS: the wait before the first retry, doubling after each. */
  backoffMs?: number;
  metrics?: RoutingMetrics;
  tracer?: RunTracer;
  /** Each provider's name in the GenAI conventions (its descriptor's `telemetryName`). */
  providerNames?: Partial<Record<ProviderId, string>>;
  /** Weighted choice and backoff jitter (tests pass their own). */
  random?: () => number;
}

export const DEFAULT_RETRIES = 2;
export const DEFAULT_BACKOFF_MS = 250;
/** No single backoff waits longer than this. */
const MAX_BACKOFF_MS = 8_000;

export class Routing {
  readonly keys: KeyPools;
  readonly health: DeploymentHealth;
  readonly retries: number;
  readonly metrics: RoutingMetrics;
  readonly tracer: RunTracer;
  readonly random: () => number;
  private readonly backoffMs: number;

  constructor(private readonly options: RoutingOptions) {
    const rests = options.rests ?? new LocalRests();
    const keys: Partial<Record<ProviderId, readonly string[]>> = {};
    for (const [provider, endpoint] of Object.entries(options.endpoints) as [ProviderId, PoolEndpoint][]) keys[provider] = endpoint.apiKeys;
    this.keys = new KeyPools(keys, rests);
    this.health = new DeploymentHealth(rests);
    this.retries = options.retries ?? DEFAULT_RETRIES;
    this.backoffMs = options.backoffMs ?? DEFAULT_BACKOFF_MS;
    this.metrics = options.metrics ?? NO_ROUTING_METRICS;
    this.tracer = options.tracer ?? NO_TRACER;
    this.random = options.random ?? Math.random;
  }

  /** Whether runs are traced (else the glue follows no run to its close). */
  get tracing(): boolean {
    return this.tracer !== NO_TRACER;
  }

  /** A provider's endpoint; a provider without one is a wiring error the door should have caught (503). */
  endpoint(provider: ProviderId): PoolEndpoint {
    const endpoint = this.options.endpoints[provider];
    if (endpoint === undefined) throw new GatewayError('model_unavailable', `The provider ${provider} is not configured.`);
    return endpoint;
  }

  providerName(provider: ProviderId): string {
    return this.options.providerNames?.[provider] ?? provider;
  }

  /** The wait before retry number `retry` (from 1): exponential, with jitter (half to all of it). */
  backoff(retry: number): number {
    const full = Math.min(this.backoffMs * 2 ** (retry - 1), MAX_BACKOFF_MS);
    return Math.round(full * (0.5 + this.random() / 2));
  }
}
