/**
 * What paid runs report for operations: aggregate counters for GET /metrics (`RunMetrics`,
 * implemented in http/metrics.ts) and per-request facts for the request log line and the
 * added-latency histogram (`noteOutcome`). Bottom layer, so the paid-run core (billing/)
 * and every route can call it without knowing Prometheus.
 *
 * Labels are a provider id and a catalog slug only; the recorder collapses anything else to
 * `other`. Never pass a key, an account or an address: there is no parameter for them.
 */

export interface RunLabels {
  /** Catalog provider id (`provider_1` …). */
  provider: string;
  /** Catalog slug of the model that ran (not what the client typed). */
  model: string;
}

export interface SettledRun extends RunLabels {
  /** Token counts billed, for token-priced runs; omit for other units. */
  inputTokens?: number;
  outputTokens?: number;
  /** Of inputTokens: read from and written to (every lifetime) the provider's prompt cache; of outputTokens: reasoning. */
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
  /** Charged, in micro-credits. A refunded run is not settled: it only closes its hold. */
  microCredits: number;
}

export interface RunMetrics {
  /** A hold was placed: credits reserved for a run. Call `holdClosed` exactly once for it. */
  holdOpened(): void;
  /** The hold ended, settled or refunded (also when crash recovery refunds it in this process). */
  holdClosed(): void;
  /** A streamed answer sent its first byte. Call `streamClosed` exactly once for it. */
  streamOpened(): void;
  /** The stream ended, whatever the reason (done, error event, client closed). */
  streamClosed(): void;
  /** Milliseconds from the request's arrival to the first content chunk written to the client. */
  firstToken(run: RunLabels, ms: number): void;
  /** A run was settled: its usage billed. */
  runSettled(run: SettledRun): void;
  /** The provider failed: 5xx, 429, connection failure, timeout, an error inside a stream. `code` is ours (upstream_error …). */
  upstreamError(provider: string, code: string): void;
}

/** What the provider-call glue reports of its routing (GET /metrics). */
export interface RoutingMetrics {
  /** Another attempt follows a failed one of the same model: why (throttled, failed, key_refused, unavailable). */
  retried(provider: string, reason: string): void;
  /** A fallback model (catalog `fallbacks`, the request's `models`) is tried. */
  fellBack(model: string): void;
  /** A key (throttled, refused) or a deployment (failing) starts to rest. */
  rested(provider: string, reason: string): void;
}

export const NO_ROUTING_METRICS: RoutingMetrics = {
  retried() {},
  fellBack() {},
  rested() {},
};

/** For tests and tools that run without metrics. */
export const NO_RUN_METRICS: RunMetrics = {
  holdOpened() {},
  holdClosed() {},
  streamOpened() {},
  streamClosed() {},
  firstToken() {},
  runSettled() {},
  upstreamError() {},
};

/** Facts about one request that only its route knows; the request log line and the added-latency histogram read them. */
export interface RequestOutcome {
  jobId?: string;
  keyId?: string;
  /** Catalog slug of the model, once resolved. */
  model?: string;
  /** The error code answered, when the route wrote the error itself (hijacked answers, errors inside a stream). */
  code?: string;
  /** Why the provider failed, for the operator (GatewayError.logCause): never a key. */
  cause?: string;
  inputTokens?: number;
  outputTokens?: number;
  /** Of inputTokens: cache reads, default-lifetime (5-minute) and 1-hour cache writes; of outputTokens: reasoning. */
  cacheReadTokens?: number;
  cacheWrite5mTokens?: number;
  cacheWrite1hTokens?: number;
  reasoningTokens?: number;
  /** Charged, in micro-credits. */
  microCredits?: number;
  /** Milliseconds spent waiting on the provider; the rest of the request's time is the gateway's own. */
  upstreamMs?: number;
  /** Every provider call (the job record's attempts). */
  attempts?: readonly object[];
}

const OUTCOMES = new WeakMap<object, RequestOutcome>();

/** Adds facts to a request's outcome. `response` is the raw `ServerResponse` (Fastify's `reply.raw`). */
export function noteOutcome(response: object, facts: RequestOutcome): void {
  const known = OUTCOMES.get(response);
  if (known === undefined) OUTCOMES.set(response, { ...facts });
  else Object.assign(known, facts);
}

export function outcomeOf(response: object): RequestOutcome | undefined {
  return OUTCOMES.get(response);
}
