/**
 * Media jobs: runs that outlive their HTTP request, inside the paid-run core.
 *   admitted (hold) → the predictions created at the host → stored `processing` with the
 *   host's prediction ids → polled with backoff in the background → settled on what was
 *   delivered, or refunded, exactly once.
 * A job whose host has taken the run is never refunded as an orphan: when its process
 * dies, the next process adopts and resumes it (docs/decisions.md "Media jobs").
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import { BackgroundRuns } from '../billing/background-runs.ts';
import type { PaidRun, PaidRuns } from '../billing/paid-run.ts';
import { apiKeyVariable, type MediaHostEndpoint } from '../config.ts';
import { HostError, isTerminal, type HostEndpoint, type MediaHost, type MediaHostId, type Prediction } from '../providers/predictions/media-host.ts';
import { transportFailure } from '../providers/upstream-client.ts';
import { GatewayError, internalError, isErrorCode } from '../shared/errors.ts';
import type { MediaJobRecord, MediaJobStore } from '../store/media-jobs.ts';
import { settlementOf, type PartResult, type PriceTerms } from './media-price.ts';

/** What a job settles by, stored with it so any process can finish it. */
export interface MediaPlan {
  kind: MediaJobKind;
  host: MediaHostId;
  /** The catalog's provider_model_id (`owner/name` at the host). */
  model: string;
  terms: PriceTerms;
  /** files (default): each output is a file URL; value: one output of any shape per prediction (a transcript). */
  output?: 'files' | 'value';
}

export type MediaJobKind = 'image' | 'video' | 'speech' | 'transcription';

/**
 * What a route makes of the delivered outputs (file URLs, or the hosts' values) before the run is
 * billed: downloading the audio it answers with, reading a transcript. A throw refunds the run.
 * It reads nothing but the outputs, so any process can run it again for a job it resumes.
 */
export type CollectOutputs = (outputs: readonly unknown[], signal: AbortSignal) => Promise<unknown>;

/**
 * The output check of each job kind that has one (a row per route, wired in by the gateway), looked up
 * by the plan's kind for every job: one this process started and one it resumed after another process
 * died are checked alike, so a broken output is refunded, never billed, whoever finishes the job.
 */
export type OutputChecks = Partial<Record<MediaJobKind, CollectOutputs>>;

export type MediaOutcome =
  | { kind: 'delivered'; urls: string[]; collected?: unknown }
  /** Refunded, or (`billed`) stopped at the model's time limit and billed for it. */
  | { kind: 'failed'; error: GatewayError; billed: boolean }
  /** The process is shutting down: the job stays held for the next process to resume. */
  | { kind: 'left' };

export interface MediaJobHandle {
  jobId: string;
  /** undefined once the host has taken every prediction; else the error the creation failed on (refunded). */
  created: Promise<GatewayError | undefined>;
  finished: Promise<MediaOutcome>;
}

export interface NewMediaJob {
  run: PaidRun;
  plan: MediaPlan;
  /** One input per prediction. */
  inputs: Record<string, unknown>[];
  /** `Prefer: wait` for the create calls (images); none: the host answers at once (videos). */
  waitSeconds?: number;
}

export interface MediaJobRunnerDeps {
  host: MediaHost;
  jobs: MediaJobStore;
  runs: PaidRuns;
  endpoints: Record<MediaHostId, MediaHostEndpoint>;
  /** What is collected (and checked) from a job's outputs before it is billed, by job kind. */
  outputChecks: OutputChecks;
  instanceId: string;
  pollMs: number;
  jobTimeoutMs: number;
  logger: FastifyBaseLogger;
  now: () => number;
}

interface Part {
  id: string;
  /** As last seen; undefined for a resumed job until its first poll. */
  prediction: Prediction | undefined;
  /** When the gateway created it (or admitted the job, for a resumed one). */
  createdAt: number;
  stoppedAtLimit: boolean;
}

const POLL_BACKOFF_CAP = 8;

export class MediaJobRunner {
  private readonly background: BackgroundRuns<MediaOutcome>;

  constructor(private readonly deps: MediaJobRunnerDeps) {
    this.background = new BackgroundRuns(deps.runs, deps.logger, () => ({ kind: 'failed', error: internalError(), billed: false }), 'media job');
  }

  private get shutdown(): { signal: AbortSignal } {
    return this.background;
  }

  /** The host endpoint of a media host, or undefined when it has no API key configured. */
  endpoint(host: MediaHostId): HostEndpoint | undefined {
    const endpoint = this.deps.endpoints[host];
    return endpoint.apiKey === undefined ? undefined : { baseUrl: endpoint.baseUrl, apiKey: endpoint.apiKey };
  }

  /** Starts an admitted job; its money outcome is the runner's from here on. */
  start(job: NewMediaJob): MediaJobHandle {
    let created!: (error: GatewayError | undefined) => void;
    const createdPromise = new Promise<GatewayError | undefined>((resolve) => (created = resolve));
    const finished = this.launch(job.run, (run) => this.runNew(run, job, created));
    void finished.then((outcome) => created(outcome.kind === 'failed' ? outcome.error : undefined));
    return { jobId: job.run.jobId, created: createdPromise, finished };
  }

  /** Adopts the resumable jobs of gone processes (before orphan recovery refunds the rest) and resumes them. */
  async adopt(goneInstanceIds: string[], ownerLeaseExpiredAt?: number): Promise<void> {
    const adopted = await this.deps.jobs.adopt(goneInstanceIds, this.deps.instanceId, ownerLeaseExpiredAt);
    for (const job of adopted) {
      const jobId = job.record.jobId;
      if (this.background.has(jobId) || this.shutdown.signal.aborted) continue;
      const plan = job.record.plan as MediaPlan;
      const refunded = recordedRefund(job.record);
      if (refunded !== undefined) {
        // Its process had ended it as refunded (and answered so) and died before the refund applied: refund it, never run it again.
        this.deps.logger.warn({ jobId, code: refunded.code }, 'refunding a media job its gone process had ended as refunded');
        void this.launch(this.deps.runs.resume(jobId, job.held), async (run) => {
          await run.refund(refunded, 'failed');
          return { kind: 'failed', error: refunded, billed: false };
        });
        continue;
      }
      const parts = job.record.predictionIds.map((id): Part => ({ id, prediction: undefined, createdAt: job.admittedAt, stoppedAtLimit: false }));
      this.deps.logger.warn({ jobId, predictions: job.record.predictionIds }, 'resuming a media job left by a gateway process that is gone');
      void this.launch(this.deps.runs.resume(jobId, job.held), (run) => this.follow(run, plan, parts, job.admittedAt));
    }
  }

  /** Stops polling; running jobs stay held for the next process to resume. */
  async close(): Promise<void> {
    await this.background.close();
  }

  private launch(run: PaidRun, body: (run: PaidRun) => Promise<MediaOutcome>): Promise<MediaOutcome> {
    return this.background.launch(run, body);
  }

  private async runNew(run: PaidRun, job: NewMediaJob, created: (error: GatewayError | undefined) => void): Promise<MediaOutcome> {
    const admittedAt = this.deps.now();
    await this.deps.jobs.create(run.jobId, job.plan, admittedAt);
    const endpoint = this.endpoint(job.plan.host);
    if (endpoint === undefined) return this.fail(run, unconfigured(job.plan.host));
    let predictions: Prediction[];
    try {
      predictions = await this.createAll(run, endpoint, job);
    } catch (thrown) {
      const error = this.shutdown.signal.aborted
        ? new GatewayError('internal_error', 'The gateway stopped before the media host took the run. Nothing was charged.')
        : this.errorOf(run, thrown, job.plan);
      created(error);
      return this.fail(run, error);
    }
    await this.deps.jobs.markProcessing(run.jobId, predictions.map((p) => p.id), this.deps.now());
    run.detach();
    created(undefined);
    const at = this.deps.now();
    return this.follow(run, job.plan, predictions.map((prediction) => ({ id: prediction.id, prediction, createdAt: at, stoppedAtLimit: false })), admittedAt);
  }

  /** All predictions or none: when one create fails, the others are canceled. */
  private async createAll(run: PaidRun, endpoint: HostEndpoint, job: NewMediaJob): Promise<Prediction[]> {
    const signal = AbortSignal.any([run.signal, this.shutdown.signal]);
    const options = job.waitSeconds === undefined ? { signal } : { signal, waitSeconds: job.waitSeconds };
    const settled = await Promise.allSettled(job.inputs.map((input) => this.deps.host.create(endpoint, job.plan.model, input, options)));
    const made = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed === undefined) return made;
    await Promise.all(made.filter((p) => !isTerminal(p.status)).map((p) => this.cancelQuietly(endpoint, p.id)));
    throw failed.reason;
  }

  /** Polls until every prediction has ended (with backoff), stopping GPU runs at their time limit and the job at its deadline. */
  private async follow(run: PaidRun, plan: MediaPlan, parts: Part[], admittedAt: number): Promise<MediaOutcome> {
    const endpoint = this.endpoint(plan.host);
    if (endpoint === undefined) return this.fail(run, unconfigured(plan.host));
    const deadline = admittedAt + this.deps.jobTimeoutMs;
    const limitMs = plan.terms.limitSeconds === undefined ? undefined : plan.terms.limitSeconds * 1000;
    let interval = this.deps.pollMs;
    let wait = parts.some((p) => p.prediction === undefined) ? 0 : interval;
    for (;;) {
      const failed = parts.find((p) => p.prediction !== undefined && (p.prediction.status === 'failed' || (p.prediction.status === 'canceled' && !p.stoppedAtLimit)));
      if (failed !== undefined) {
        await this.cancelRunning(endpoint, parts);
        return this.fail(run, hostFailure(failed.prediction as Prediction));
      }
      if (parts.every((p) => p.prediction !== undefined && isTerminal(p.prediction.status))) return this.finish(run, plan, parts);

      const now = this.deps.now();
      if (limitMs !== undefined) {
        const over = parts.filter((p) => p.prediction?.status === 'processing' && now - startOf(p) >= limitMs);
        if (over.length > 0) {
          await Promise.all(over.map((p) => this.stopAtLimit(endpoint, p)));
          continue;
        }
      }
      if (now >= deadline) {
        await this.cancelRunning(endpoint, parts);
        return this.fail(run, new GatewayError('provider_timeout', `The media host did not finish the run within ${Math.round(this.deps.jobTimeoutMs / 1000)} seconds. It was canceled and nothing was charged.`));
      }

      let next = Math.min(wait, deadline - now);
      if (limitMs !== undefined) for (const p of parts) if (p.prediction?.status === 'processing') next = Math.min(next, startOf(p) + limitMs - now);
      try {
        await sleep(Math.max(0, next), undefined, { signal: this.shutdown.signal });
      } catch {
        return this.leave(run);
      }
      const polled = await this.poll(endpoint, parts);
      if (polled === 'left') return this.leave(run);
      if (polled !== undefined) return this.fail(run, polled);
      wait = interval;
      interval = Math.min(interval * 2, this.deps.pollMs * POLL_BACKOFF_CAP);
    }
  }

  /** Polls every running prediction; a poll that fails for a passing reason is retried at the next interval. */
  private async poll(endpoint: HostEndpoint, parts: Part[]): Promise<GatewayError | 'left' | undefined> {
    const running = parts.filter((p) => p.prediction === undefined || !isTerminal(p.prediction.status));
    const results = await Promise.allSettled(running.map((p) => this.deps.host.get(endpoint, p.id, this.shutdown.signal)));
    if (this.shutdown.signal.aborted) return 'left';
    for (const [i, result] of results.entries()) {
      const part = running[i] as Part;
      if (result.status === 'fulfilled') {
        part.prediction = result.value;
        continue;
      }
      const reason: unknown = result.reason;
      if (reason instanceof HostError && reason.hostStatus === 404) {
        return new GatewayError('upstream_error', `The media host no longer knows prediction ${part.id}. Nothing was charged.`);
      }
      const level = reason instanceof HostError && reason.code === 'model_unavailable' ? 'error' : 'warn';
      this.deps.logger[level]({ err: reason, prediction: part.id }, level === 'error' ? 'media host refused the gateway while polling (operator error)' : 'media host poll failed; retrying');
    }
    return undefined;
  }

  /** A GPU run at its time limit is canceled at the host and billed for the limit (unless it had just ended on its own). */
  private async stopAtLimit(endpoint: HostEndpoint, part: Part): Promise<void> {
    const answer = await this.cancelQuietly(endpoint, part.id);
    if (answer !== undefined && answer.status === 'succeeded') {
      part.prediction = answer;
      return;
    }
    part.stoppedAtLimit = true;
    part.prediction = { ...(answer ?? (part.prediction as Prediction)), status: 'canceled' };
  }

  private async cancelRunning(endpoint: HostEndpoint, parts: Part[]): Promise<void> {
    await Promise.all(parts.filter((p) => p.prediction === undefined || !isTerminal(p.prediction.status)).map((p) => this.cancelQuietly(endpoint, p.id)));
  }

  private async cancelQuietly(endpoint: HostEndpoint, id: string): Promise<Prediction | undefined> {
    try {
      return await this.deps.host.cancel(endpoint, id);
    } catch (err) {
      this.deps.logger.warn({ err, prediction: id }, 'media host cancel failed');
      return undefined;
    }
  }

  /** Every prediction ended: all outputs delivered → settled; fewer → refunded in full; a GPU run stopped at its limit → billed. */
  private async finish(run: PaidRun, plan: MediaPlan, parts: Part[]): Promise<MediaOutcome> {
    const now = this.deps.now();
    const predictions = parts.map((p) => p.prediction as Prediction);
    const stopped = parts.some((p) => p.stoppedAtLimit);
    const values = plan.output === 'value';
    const delivered = (p: Prediction): number => (values ? (p.output === null ? 0 : 1) : (p.outputs?.length ?? 0));
    if (!stopped && !values && predictions.some((p) => p.outputs === undefined)) {
      return this.fail(run, new GatewayError('upstream_error', 'The media host answered with an output that is not a file URL. Nothing was charged.'));
    }
    const urls = values ? [] : predictions.flatMap((p) => p.outputs ?? []).slice(0, plan.terms.outputs);
    const count = predictions.reduce((n, p) => n + delivered(p), 0);
    if (!stopped && count < plan.terms.outputs) {
      return this.fail(run, new GatewayError('upstream_error', `The media host delivered ${count} of ${plan.terms.outputs} outputs; the run is refunded in full.`));
    }
    let collected: unknown;
    const collect = this.deps.outputChecks[plan.kind];
    if (!stopped && collect !== undefined) {
      try {
        collected = await collect(values ? predictions.map((p) => p.output) : urls, AbortSignal.any([run.signal, this.shutdown.signal]));
      } catch (thrown) {
        return this.fail(run, thrown instanceof GatewayError ? thrown : this.errorOf(run, thrown, plan));
      }
    }
    const results: PartResult[] = parts.map((p) => {
      const prediction = p.prediction as Prediction;
      return { outputs: delivered(prediction), outputSeconds: prediction.outputSeconds, predictSeconds: predictSeconds(prediction, p, now), stoppedAtLimit: p.stoppedAtLimit };
    });
    const { cost, usage } = settlementOf(plan.terms, results);
    if (stopped) {
      const limit = plan.terms.limitSeconds ?? 0;
      const error = new GatewayError('provider_timeout', `The run was stopped at the model's time limit of ${limit} GPU-second${limit === 1 ? '' : 's'} and is billed for the limit, at most what was held.`);
      await this.deps.jobs.recordOutcome(run.jobId, { outputs: urls, usage: { ...usage }, errorCode: error.code, errorMessage: error.message }, now);
      await run.settle(cost, usage, 'canceled', { urls });
      return { kind: 'failed', error, billed: true };
    }
    await this.deps.jobs.recordOutcome(run.jobId, { outputs: urls, usage: { ...usage }, errorCode: null, errorMessage: null }, now);
    await run.settle(cost, usage, 'succeeded', values ? { values: predictions.map((p) => p.output) } : { urls });
    return { kind: 'delivered', urls, collected };
  }

  private async fail(run: PaidRun, error: GatewayError): Promise<MediaOutcome> {
    await this.deps.jobs.recordOutcome(run.jobId, { outputs: null, usage: null, errorCode: error.code, errorMessage: error.message }, this.deps.now());
    await run.refund(error, 'failed');
    return { kind: 'failed', error, billed: false };
  }

  private leave(run: PaidRun): MediaOutcome {
    run.leave();
    return { kind: 'left' };
  }

  private errorOf(run: PaidRun, thrown: unknown, plan: MediaPlan): GatewayError {
    const error = run.errorFor(transportFailure(thrown) ?? thrown);
    if (error.code === 'model_unavailable') this.deps.logger.error({ host: plan.host, model: plan.model, status: thrown instanceof HostError ? thrown.hostStatus : undefined }, 'media host refused the gateway (operator error)');
    return error;
  }
}

/** The refund a job's outcome record says it ended with (`fail` records an error and no outputs before it refunds). */
function recordedRefund(record: MediaJobRecord): GatewayError | undefined {
  if (record.errorCode === null || record.outputs !== null) return undefined;
  return new GatewayError(isErrorCode(record.errorCode) ? record.errorCode : 'upstream_error', record.errorMessage ?? 'The run failed. Nothing was charged.');
}

function unconfigured(host: MediaHostId): GatewayError {
  return new GatewayError('model_unavailable', `The model cannot run now: its host ${host} has no API key (the operator must set ${apiKeyVariable(host)}).`);
}

function hostFailure(prediction: Prediction): GatewayError {
  const why = prediction.error ?? (prediction.status === 'canceled' ? 'the host canceled it' : 'no reason given');
  return new GatewayError('upstream_error', `The media host's run failed: ${why}`.slice(0, 500) + ' Nothing was charged.');
}

/** When a processing prediction started (time queued in `starting` is not GPU time): the host's word, else when the gateway created it. */
function startOf(part: Part): number {
  return part.prediction?.startedAt ?? part.createdAt;
}

/** GPU seconds: the host's predict_time, else its own start and end, else as measured here. */
function predictSeconds(prediction: Prediction, part: Part, now: number): number | undefined {
  if (prediction.predictTime !== undefined) return prediction.predictTime;
  const start = prediction.startedAt ?? part.createdAt;
  return Math.max(0, (prediction.completedAt ?? now) - start) / 1000;
}
