/**
 * The attempts of one run (DECISIONS.md "Routing: key pools, retries, fallbacks"): each
 * candidate model in order; for each, a deployment by weight among the usable ones and the
 * next key of its provider; a throttled (429), failed (5xx, connection) or unavailable
 * (402, 404) attempt is retried at most UPSTREAM_RETRIES times with exponential backoff and
 * jitter, on another deployment when there is one; a refused key (401, 403) rests and the
 * next key is tried; a refusal of the request itself (400-class) is answered at once. When
 * a model's attempts are spent, or it cannot run now, the next candidate runs. Everything
 * within the provider wait: a rest or a backoff longer than what is left of it is not waited.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { PaidRun, RunClose } from '../billing/paid-run.ts';
import type { Routing } from '../routing/routing.ts';
import { GatewayError } from '../shared/errors.ts';
import { noteOutcome } from '../shared/run-metrics.ts';
import type { JobAttempt } from '../store/money-contract.ts';
import type { AttemptSpan, RunSpan } from '../telemetry/run-tracer.ts';
import { pickDeployment } from '../routing/deployments.ts';
import { THROTTLED_REST_MS } from '../routing/key-pool.ts';
import { withKey, type Answered, type CallCandidate, type CallTarget, type Deployed, type ProviderCallDeps, type ProviderRoute, type ReadAnswer } from './call-route.ts';
import { isKeyRefusal } from './upstream-errors.ts';
import { failureBody, transportFailure, type UpstreamResponse } from './upstream-client.ts';

/** How a failed attempt goes on: see the file's comment. */
type FailureKind = 'refusal' | 'throttled' | 'key_refused' | 'unavailable' | 'failed';

/** A failed attempt's error read as a kind, by our code (the adapter mapped the provider's answer). */
function failureKind(error: GatewayError): FailureKind {
  switch (error.code) {
    case 'upstream_rate_limited':
      return 'throttled';
    case 'model_unavailable':
      return isKeyRefusal(error) ? 'key_refused' : 'unavailable';
    case 'upstream_error':
      return 'failed';
    default:
      return 'refusal';
  }
}

/** What one model's attempts came to. */
type ModelOutcome<T extends CallTarget, R> = { answered: Answered<T, R> } | { error: GatewayError; next: boolean };

type Attempted<T extends CallTarget, R> = { answered: Answered<T, R> } | { error: GatewayError; kind: FailureKind; retryAfterMs?: number };

/** The target an attempt goes to now; or when a throttled key wakes; or why none can run. */
type Choice<T extends CallTarget> = { deployed: Deployed<T>; key: string; index: number } | { wakesAt: number } | { skip: 'resting' | 'no_key' };

export class RunAttempts<T extends CallTarget, R> {
  private readonly routing: Routing;
  private readonly attempts: JobAttempt[];
  private span: RunSpan | undefined;
  /** The attempt that answered: its span ends with the run, carrying the billed tokens. */
  private answering: AttemptSpan | undefined;
  /** The latest failed attempt, until what follows it is known. */
  private failed: { record: JobAttempt; span: AttemptSpan | undefined } | undefined;

  constructor(private readonly run: PaidRun, private readonly route: ProviderRoute<T>, private readonly deps: ProviderCallDeps, private readonly read: ReadAnswer<T, R>) {
    this.routing = deps.routing;
    this.attempts = run.route.attempts;
    if (deps.response !== undefined) noteOutcome(deps.response, { attempts: this.attempts });
    if (this.routing.tracing) {
      const span = this.routing.tracer.startRun({ operation: route.operation, requestedModel: route.requestedModel, jobId: run.jobId });
      this.span = span;
      run.observeClose((close) => this.closed(span, close));
    }
  }

  async answer(): Promise<Answered<T, R>> {
    try {
      return await this.attemptCandidates();
    } finally {
      // A run stopped while waiting leaves its last failed attempt open.
      this.endFailed(undefined);
    }
  }

  private async attemptCandidates(): Promise<Answered<T, R>> {
    const candidates = this.route.candidates;
    let failure: GatewayError | undefined;
    for (let i = 0; i < candidates.length; i++) {
      const candidate = candidates[i] as CallCandidate<T>;
      if (i > 0) {
        this.endFailed('fallback');
        this.routing.metrics.fellBack(candidate.model);
      }
      const outcome = await this.attemptModel(candidate, i < candidates.length - 1);
      if ('answered' in outcome) {
        if (i > 0) this.run.route.model = candidate.model;
        return outcome.answered;
      }
      failure = outcome.error;
      if (!outcome.next) break;
    }
    this.endFailed(undefined);
    throw failure ?? new GatewayError('model_unavailable', `The model '${this.route.requestedModel}' cannot run now. Retry later or choose another model.`);
  }

  private async attemptModel(candidate: CallCandidate<T>, hasNext: boolean): Promise<ModelOutcome<T, R>> {
    const tried = new Set<T>();
    let retries = 0;
    let last: GatewayError | undefined;
    for (;;) {
      this.run.throwIfStopped();
      const now = Date.now();
      const choice = this.choose(candidate, tried, hasNext, now);
      if ('skip' in choice) return { error: last ?? unavailable(candidate, choice.skip), next: true };
      if ('wakesAt' in choice) {
        // Every key of every usable deployment is throttled: the next model, if any, runs now; else the first to wake, within the provider wait.
        const wait = choice.wakesAt - now;
        if (hasNext || wait > this.run.waitLeftMs()) return { error: last ?? throttled(), next: true };
        this.endFailed('throttled');
        await sleep(wait, undefined, { signal: this.run.signal });
        continue;
      }
      const outcome = await this.attempt(candidate, choice);
      if ('answered' in outcome) return outcome;
      last = outcome.error;
      const target = choice.deployed.target;
      const at = Date.now();
      if (outcome.kind === 'refusal') return { error: outcome.error, next: false };
      if (outcome.kind === 'key_refused') {
        if (this.routing.keys.refused(target.provider, choice.index, at)) {
          this.routing.metrics.rested(target.provider, 'refused');
          this.deps.logger.error({ provider: target.provider, key: choice.index }, 'provider refused the gateway key (operator error): it rests 5 minutes');
        }
        // A refused key does not spend the retry budget: the next key is tried (none left: the model cannot run).
        this.retry('key_refused', target.provider);
        continue;
      }
      if (outcome.kind === 'throttled') {
        this.routing.keys.throttled(target.provider, choice.index, outcome.retryAfterMs ?? THROTTLED_REST_MS, at);
        this.routing.metrics.rested(target.provider, 'throttled');
      } else if (outcome.kind === 'unavailable') {
        // 402 or 404 with the gateway's own key: the catalog or the provider account needs the operator.
        this.deps.logger.error({ provider: target.provider, deployment: target.providerModelId }, 'provider does not serve the model to the gateway (operator error)');
      }
      if (outcome.kind !== 'throttled' && this.routing.health.failed(target.provider, target.providerModelId, at)) {
        this.routing.metrics.rested(target.provider, 'failing');
        this.deps.logger.warn({ provider: target.provider, deployment: target.providerModelId }, 'deployment failed 3 times in a row: it rests 30 s');
      }
      tried.add(target);
      retries++;
      // A model unknown at every deployment (402, 404) is not asked again.
      const everywhere = outcome.kind === 'unavailable' && candidate.deployments.every((d) => tried.has(d.target));
      if (everywhere || retries > this.routing.retries) return { error: outcome.error, next: true };
      const backoff = this.routing.backoff(retries);
      if (backoff >= this.run.waitLeftMs()) return { error: outcome.error, next: true };
      this.retry(outcome.kind, target.provider);
      await sleep(backoff, undefined, { signal: this.run.signal });
    }
  }

  /** Another attempt of the same model follows the failed one: its record, span and the metrics say why. */
  private retry(reason: FailureKind, provider: string): void {
    this.endFailed(reason);
    this.routing.metrics.retried(provider, reason);
  }

  /** Ends the failed attempt's span, with why another attempt follows (undefined: none does). */
  private endFailed(reason: string | undefined): void {
    const failed = this.failed;
    if (failed === undefined) return;
    this.failed = undefined;
    if (reason !== undefined) failed.record.retry = reason;
    failed.span?.end({ status: failed.record.status, errorType: failed.record.code ?? 'upstream_error', ...(reason === undefined ? {} : { retryReason: reason }) });
  }

  private choose(candidate: CallCandidate<T>, tried: ReadonlySet<T>, hasNext: boolean, now: number): Choice<T> {
    const usable: Deployed<T>[] = [];
    const resting: Deployed<T>[] = [];
    let wakesAt = Infinity;
    for (const deployed of candidate.deployments) {
      const target = deployed.target;
      const keys = this.routing.keys.peek(target.provider, now);
      if ('wakesAt' in keys) wakesAt = Math.min(wakesAt, keys.wakesAt);
      if (!('key' in keys)) continue;
      if (this.routing.health.resting(target.provider, target.providerModelId, now)) resting.push(deployed);
      else usable.push(deployed);
    }
    // Resting deployments run only when nothing else can: no other deployment and no later model.
    const open = usable.length > 0 ? usable : hasNext ? [] : resting;
    if (open.length === 0) return wakesAt !== Infinity ? { wakesAt } : { skip: resting.length > 0 ? 'resting' : 'no_key' };
    const untried = open.filter((d) => !tried.has(d.target));
    const deployed = pickDeployment(untried.length > 0 ? untried : open, this.routing.random) as Deployed<T>;
    const key = this.routing.keys.take(deployed.target.provider, now);
    if (!('key' in key)) return { skip: 'no_key' };
    return { deployed, key: key.key, index: key.index };
  }

  /** One provider call: its record and span, and the answer read or the failure classified. */
  private async attempt(candidate: CallCandidate<T>, choice: { deployed: Deployed<T>; key: string; index: number }): Promise<Attempted<T, R>> {
    const target = choice.deployed.target;
    const endpoint = this.routing.endpoint(target.provider);
    const record: JobAttempt = { model: candidate.model, provider: target.provider, deployment: target.providerModelId, key: choice.index, status: 0, ms: 0 };
    this.attempts.push(record);
    const span = this.span?.attempt({
      operation: this.route.operation, model: candidate.model, provider: target.provider, providerName: this.routing.providerName(target.provider),
      providerModelId: target.providerModelId, keyIndex: choice.index, number: this.attempts.length, ...serverOf(endpoint.baseUrl),
    });
    const started = performance.now();
    const built = this.route.built.get(target) as NonNullable<ReturnType<ProviderRoute<T>['built']['get']>>;
    const request = withKey(built, choice.key);
    const failed = (error: GatewayError, kind: FailureKind, retryAfterMs?: number): Attempted<T, R> => {
      record.code = error.code;
      record.ms = Math.round(performance.now() - started);
      this.failed = { record, span };
      return retryAfterMs === undefined ? { error, kind } : { error, kind, retryAfterMs };
    };
    try {
      const response = await this.deps.upstream.post(endpoint.baseUrl, request.path, request.headers, request.body, this.run.signal);
      record.status = response.status;
      if (response.status < 200 || response.status >= 300) {
        const body = await failureBody(response);
        const error = target.mapError(response.status, body.json, body.text);
        return failed(error, failureKind(error), retryAfterMs(response) ?? target.retryDelayMs?.(body.json));
      }
      const value = await this.read(response, target);
      record.ms = Math.round(performance.now() - started);
      this.routing.health.succeeded(target.provider, target.providerModelId);
      this.answering = span;
      return { answered: { value, model: candidate.model, target } };
    } catch (thrown) {
      // A connection that failed or broke, or a 2xx answer that could not be read: a failed attempt like a 5xx.
      const error = this.run.stopReason !== undefined ? undefined : (transportFailure(thrown) ?? (thrown instanceof GatewayError && thrown.code === 'upstream_error' ? thrown : undefined));
      if (error !== undefined) return failed(error, 'failed');
      // The run stopped (client gone, provider wait over, key revoked), or a fault of ours: nothing follows.
      failed(this.run.stopReason !== undefined ? this.run.errorFor(thrown) : thrown instanceof GatewayError ? thrown : new GatewayError('internal_error', 'internal error'), 'refusal');
      this.endFailed(undefined);
      throw thrown;
    }
  }

  private closed(span: RunSpan, close: RunClose): void {
    const tokens = close.settled ? { inputTokens: close.usage.prompt_tokens, outputTokens: close.usage.completion_tokens } : {};
    const answered = this.attempts.at(-1);
    this.answering?.end({ status: answered?.status ?? 0, ...definedOnly(tokens), ...(close.settled ? {} : { errorType: close.errorCode }) });
    span.end({
      ...definedOnly(tokens),
      ...(close.settled ? { responseModel: this.run.route.model ?? this.route.candidates[0]?.model } : { errorType: close.errorCode }),
    });
  }
}

function definedOnly(facts: { inputTokens?: number | undefined; outputTokens?: number | undefined }): { inputTokens?: number; outputTokens?: number } {
  const out: { inputTokens?: number; outputTokens?: number } = {};
  if (facts.inputTokens !== undefined) out.inputTokens = facts.inputTokens;
  if (facts.outputTokens !== undefined) out.outputTokens = facts.outputTokens;
  return out;
}

/** The provider's wait before the key is used again: retry-after-ms, else retry-after (seconds or a date); undefined when it sent none. */
function retryAfterMs(response: UpstreamResponse): number | undefined {
  const first = (name: string) => {
    const value = response.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const ms = Number(first('retry-after-ms'));
  if (Number.isFinite(ms) && ms >= 0 && first('retry-after-ms') !== undefined) return ms;
  const after = first('retry-after');
  if (after === undefined) return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function serverOf(baseUrl: string): { serverAddress: string; serverPort: number } {
  const url = new URL(baseUrl);
  return { serverAddress: url.hostname, serverPort: url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port) };
}

function unavailable(candidate: CallCandidate<CallTarget>, why: 'resting' | 'no_key'): GatewayError {
  const model = candidate.model;
  if (why === 'resting') return new GatewayError('model_unavailable', `The model '${model}' cannot run now: its deployments are resting after failures. Retry later or choose another model.`);
  // Waiting will not help: the operator must give the provider a key it takes.
  const providers = [...new Set(candidate.deployments.map((d) => d.target.provider))].join(' and ');
  return new GatewayError('model_unavailable', `The model '${model}' cannot run now: ${providers} refused every API key the gateway has for it; the gateway's operator must set one it takes (PROVIDER_…_API_KEY). Choose another model meanwhile.`);
}

function throttled(): GatewayError {
  return new GatewayError('upstream_rate_limited', 'The model provider is throttling requests. Retry with exponential backoff.');
}
