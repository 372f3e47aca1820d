/**
 * GET /metrics in the Prometheus text format, from a registry of the gateway's own (never
 * prom-client's global one). Labels are route (method and pattern, never the raw URL),
 * status, code, provider and catalog model; a value outside the known sets is `other`.
 * No label can carry a key, an account or an address. Label children are cached and the
 * counters tallied in plain numbers until a scrape, so recording a request costs map
 * look-ups and adds.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { ERROR_CODES, GatewayError } from '../shared/errors.ts';
import type { RoutingMetrics, RunLabels, RunMetrics, SettledRun } from '../shared/run-metrics.ts';

export interface MetricsOptions {
  /** Catalog slugs; any other model label is `other`. */
  models: Iterable<string>;
  /** Provider ids; any other provider label is `other`. */
  providers: Iterable<string>;
}

export interface RequestObservation {
  /** `METHOD /pattern`, or `unmatched`. */
  route: string;
  status: number;
  /** Error code answered, if any. */
  code: string | undefined;
  seconds: number;
  /** The gateway's own share of the time, when known. */
  addedSeconds: number | undefined;
}

const OTHER = 'other';
const NO_CODE = 'none';
const KNOWN_CODES = new Set<string>(ERROR_CODES);

/** The reasons the routing counters take (anything else is `other`). */
const RETRY_REASONS = new Set(['throttled', 'failed', 'key_refused', 'unavailable']);
const REST_REASONS = new Set(['throttled', 'refused', 'failing']);

export class GatewayMetrics implements RunMetrics, RoutingMetrics {
  readonly registry = new Registry();
  private readonly models: Set<string>;
  private readonly providers: Set<string>;
  private readonly loopDelay: IntervalHistogram;

  private readonly requests = new TalliedCounter(this.registry, 'gateway_http_requests_total', 'HTTP requests answered, by route pattern, status and error code (none on success).', ['route', 'status', 'code']);
  private readonly duration = new Histogram({
    name: 'gateway_http_request_duration_seconds', help: 'Time from the request arriving to the last byte of the answer, by route pattern.',
    labelNames: ['route'] as const, buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120], registers: [this.registry],
  });
  private readonly added = new Histogram({
    name: 'gateway_added_latency_seconds', help: "The gateway's own time: the request's duration minus the time spent waiting on the provider. Requests that call a provider are observed once the run reports its provider time.",
    labelNames: ['route'] as const, buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1], registers: [this.registry],
  });
  private readonly ttft = new Histogram({
    name: 'gateway_time_to_first_token_seconds', help: 'Streams: time from the request arriving to the first content chunk sent.',
    labelNames: ['provider', 'model'] as const, buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60], registers: [this.registry],
  });
  private readonly inputTokens = new TalliedCounter(this.registry, 'gateway_input_tokens_total', 'Input tokens billed, by provider and catalog model.', ['provider', 'model']);
  private readonly outputTokens = new TalliedCounter(this.registry, 'gateway_output_tokens_total', 'Output tokens billed, by provider and catalog model.', ['provider', 'model']);
  private readonly tokens = new TalliedCounter(
    this.registry, 'gateway_tokens_total',
    'Tokens billed by kind: input (not cached), cache_read, cache_write (every lifetime), output (reasoning included), reasoning; by provider and catalog model.',
    ['provider', 'model', 'kind'],
  );
  /** Counted in micro-credits, published in credits. */
  private readonly credits = new TalliedCounter(this.registry, 'gateway_credits_charged_total', 'Credits charged by settled runs, by provider and catalog model (1 credit = USD 0.01).', ['provider', 'model'], 1_000_000);
  private readonly settled = new TalliedCounter(this.registry, 'gateway_runs_settled_total', 'Runs settled (billed), by provider and catalog model.', ['provider', 'model']);
  private readonly upstreamErrors = new Counter({ name: 'gateway_upstream_errors_total', help: 'Provider failures (5xx, 429, connection, timeout, error inside a stream), by provider and the code answered.', labelNames: ['provider', 'code'] as const, registers: [this.registry] });
  private readonly retries = new Counter({ name: 'gateway_upstream_retries_total', help: 'Provider calls made again after a failed one of the same model, by provider and why (throttled, failed, key_refused, unavailable).', labelNames: ['provider', 'reason'] as const, registers: [this.registry] });
  private readonly fallbacks = new Counter({ name: 'gateway_fallbacks_total', help: 'Fallback models tried (catalog fallbacks, the request\'s models list), by the catalog model tried.', labelNames: ['model'] as const, registers: [this.registry] });
  private readonly rests = new Counter({ name: 'gateway_rests_total', help: 'Provider keys (throttled, refused) and deployments (failing: 3 failures in a row) sent to rest, by provider and why.', labelNames: ['provider', 'reason'] as const, registers: [this.registry] });
  private readonly openStreams = new Gauge({ name: 'gateway_open_streams', help: 'Streamed answers being sent now.', registers: [this.registry] });
  private readonly holds = new Gauge({ name: 'gateway_holds_in_flight', help: 'Holds placed by this process and not yet settled or refunded.', registers: [this.registry] });

  private readonly durationChildren = new Map<string, { observe(v: number): void }>();
  private readonly addedChildren = new Map<string, { observe(v: number): void }>();

  constructor(options: MetricsOptions) {
    this.models = new Set(options.models);
    this.providers = new Set(options.providers);
    this.loopDelay = monitorEventLoopDelay({ resolution: 10 });
    this.loopDelay.enable();
    const loopDelay = this.loopDelay;
    // Since the previous scrape; reset after each one.
    const quantile = (name: string, help: string, read: () => number) => new Gauge({
      name, help, registers: [this.registry],
      collect() {
        this.set(loopDelay.count > 0 ? read() / 1e9 : 0);
      },
    });
    quantile('gateway_event_loop_delay_p50_seconds', 'Event-loop delay, median since the previous scrape.', () => loopDelay.percentile(50));
    quantile('gateway_event_loop_delay_p99_seconds', 'Event-loop delay, 99th percentile since the previous scrape.', () => loopDelay.percentile(99));
    quantile('gateway_event_loop_delay_max_seconds', 'Event-loop delay, maximum since the previous scrape.', () => loopDelay.max);
    new Gauge({ name: 'gateway_resident_memory_bytes', help: 'Resident set size of the process.', registers: [this.registry], collect() { this.set(process.memoryUsage.rss()); } });
    new Gauge({ name: 'gateway_heap_used_bytes', help: 'V8 heap in use.', registers: [this.registry], collect() { this.set(process.memoryUsage().heapUsed); } });
  }

  /** The text of a scrape; resets the event-loop window. */
  async scrape(): Promise<string> {
    const text = await this.registry.metrics();
    this.loopDelay.reset();
    return text;
  }

  close(): void {
    this.loopDelay.disable();
  }

  observeRequest(o: RequestObservation): void {
    const code = o.code === undefined ? NO_CODE : KNOWN_CODES.has(o.code) ? o.code : OTHER;
    this.requests.add(1, o.route, String(o.status), code);
    childOf(this.durationChildren, this.duration, o.route).observe(o.seconds);
    if (o.addedSeconds !== undefined) childOf(this.addedChildren, this.added, o.route).observe(Math.max(0, o.addedSeconds));
  }

  holdOpened(): void {
    this.holds.inc();
  }

  holdClosed(): void {
    this.holds.dec();
  }

  streamOpened(): void {
    this.openStreams.inc();
  }

  streamClosed(): void {
    this.openStreams.dec();
  }

  firstToken(run: RunLabels, ms: number): void {
    this.ttft.labels(this.provider(run.provider), this.model(run.model)).observe(ms / 1000);
  }

  runSettled(run: SettledRun): void {
    const provider = this.provider(run.provider);
    const model = this.model(run.model);
    this.settled.add(1, provider, model);
    if (run.inputTokens !== undefined && run.inputTokens > 0) this.inputTokens.add(run.inputTokens, provider, model);
    if (run.outputTokens !== undefined && run.outputTokens > 0) this.outputTokens.add(run.outputTokens, provider, model);
    const cacheRead = run.cacheReadTokens ?? 0;
    const cacheWrite = run.cacheWriteTokens ?? 0;
    const byKind: [string, number][] = [
      ['input', (run.inputTokens ?? 0) - cacheRead - cacheWrite],
      ['cache_read', cacheRead],
      ['cache_write', cacheWrite],
      ['output', run.outputTokens ?? 0],
      ['reasoning', run.reasoningTokens ?? 0],
    ];
    for (const [kind, count] of byKind) if (count > 0) this.tokens.add(count, provider, model, kind);
    if (run.microCredits > 0) this.credits.add(run.microCredits, provider, model);
  }

  upstreamError(provider: string, code: string): void {
    this.upstreamErrors.labels(this.provider(provider), KNOWN_CODES.has(code) ? code : OTHER).inc();
  }

  retried(provider: string, reason: string): void {
    this.retries.labels(this.provider(provider), RETRY_REASONS.has(reason) ? reason : OTHER).inc();
  }

  fellBack(model: string): void {
    this.fallbacks.labels(this.model(model)).inc();
  }

  rested(provider: string, reason: string): void {
    this.rests.labels(this.provider(provider), REST_REASONS.has(reason) ? reason : OTHER).inc();
  }

  private model(slug: string): string {
    return this.models.has(slug) ? slug : OTHER;
  }

  private provider(id: string): string {
    return this.providers.has(id) ? id : OTHER;
  }
}

/**
 * A counter added to on the request path with one map look-up and an add (prom-client's
 * own `inc` hashes the labels object on every call); the sums reach prom-client when a
 * scrape collects, so a scrape shows every add made before it.
 */
class TalliedCounter {
  private readonly cells = new Map<string, { labels: string[]; pending: number }>();

  constructor(registry: Registry, name: string, help: string, labelNames: string[], scale = 1) {
    const cells = this.cells;
    new Counter({
      name, help, labelNames, registers: [registry],
      collect() {
        for (const cell of cells.values()) {
          if (cell.pending === 0) continue;
          this.labels(...cell.labels).inc(cell.pending / scale);
          cell.pending = 0;
        }
      },
    });
  }

  add(amount: number, a: string, b: string, c?: string): void {
    const key = c === undefined ? `${a}\u0000${b}` : `${a}\u0000${b}\u0000${c}`;
    const cell = this.cells.get(key);
    if (cell !== undefined) cell.pending += amount;
    else this.cells.set(key, { labels: c === undefined ? [a, b] : [a, b, c], pending: amount });
  }
}

function childOf(cache: Map<string, { observe(v: number): void }>, histogram: Histogram<'route'>, route: string): { observe(v: number): void } {
  let child = cache.get(route);
  if (child === undefined) {
    child = histogram.labels(route);
    cache.set(route, child);
  }
  return child;
}

/**
 * GET /metrics with `Authorization: Bearer <METRICS_TOKEN or ADMIN_TOKEN>`; not registered
 * (so 404) when neither token is set.
 */
export function registerMetricsRoute(app: FastifyInstance, metrics: GatewayMetrics, tokens: (string | undefined)[]): void {
  const hashes = tokens.filter((t): t is string => t !== undefined).map(sha256);
  if (hashes.length === 0) return;
  app.get('/metrics', async (request, reply) => {
    const match = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '');
    const given = sha256(match?.[1] ?? '');
    // Every configured token is compared, so the time taken does not tell which one matched.
    const allowed = hashes.map((h) => timingSafeEqual(h, given)).includes(true);
    if (match === null || !allowed) throw new GatewayError('invalid_metrics_token', 'Invalid metrics token');
    const text = await metrics.scrape();
    return reply.type(metrics.registry.contentType).header('cache-control', 'no-store').send(text);
  });
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
