/**
 * Fine-tuning jobs: runs that outlive their request, inside the paid-run core.
 *   admitted (hold) → files uploaded and the job created at the provider → stored with the
 *   provider's job id → polled in the background (whether or not a client polls) →
 *   settled on the provider's trained tokens (succeeded, or cancelled: what was trained),
 *   or refunded (failed), exactly once.
 * A job the provider has taken is never refunded as an orphan: when its process dies, the
 * next process adopts and resumes it (as media jobs are).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import { BackgroundRuns } from '../billing/background-runs.ts';
import type { PaidRun, PaidRuns } from '../billing/paid-run.ts';
import type { ProviderId } from '../catalog/catalog-file.ts';
import { ceilDiv, SCALE } from '../catalog/decimal.ts';
import { FineTuningProviderError, isFinished, type FineTuningEndpoint, type FineTuningProvider, type ProviderJob } from '../providers/fine-tuning.ts';
import { transportFailure } from '../providers/upstream-client.ts';
import { GatewayError, internalError } from '../shared/errors.ts';
import type { FineTuningJob, FineTuningJobStore } from '../store/fine-tuning-jobs.ts';
import type { TrainingFile } from './training-file.ts';

/** What a job settles by and shows, stored with it so any process can finish it. */
export interface FineTuningPlan {
  provider: ProviderId;
  /** The catalog's provider_model_id. */
  model: string;
  /** Micro-credits per trained token, scaled by 10^12 (decimal.ts), as a decimal string. */
  pricePerToken: string;
  epochs: number;
  /** Training tokens of the file, as counted for the hold. */
  fileTokens: number;
  /** What the client named as files (an https URL, or a short note of a data: URL). */
  trainingFile: string;
  validationFile: string | null;
  /** As sent to the provider (n_epochs always a number: the hold's epochs). */
  hyperparameters: Record<string, unknown>;
  suffix: string | null;
  seed: number | null;
}

export interface FineTuningFiles {
  training: TrainingFile;
  validation: TrainingFile | undefined;
}

/** A provider that fine-tunes, and where it is (no API key: its models cannot run). */
export interface FineTuningProviderRow {
  client: FineTuningProvider;
  endpoint: { baseUrl: string; apiKey: string | undefined };
}

export interface FineTuningRunnerDeps {
  providers: Partial<Record<ProviderId, FineTuningProviderRow>>;
  jobs: FineTuningJobStore;
  runs: PaidRuns;
  /** This process (adopted jobs move to it). */
  instanceId: string;
  pollMs: number;
  logger: FastifyBaseLogger;
  now: () => number;
}

type Outcome = 'settled' | 'refunded' | 'left';

interface Follower {
  /** Ends the current wait: the job is polled now. */
  wake: () => void;
}

export class FineTuningRunner {
  private readonly background: BackgroundRuns<Outcome>;
  private readonly followers = new Map<string, Follower>();

  constructor(private readonly deps: FineTuningRunnerDeps) {
    this.background = new BackgroundRuns(deps.runs, deps.logger, () => 'refunded', 'fine-tuning job');
  }

  /** The provider's client and endpoint, or undefined when the provider does not fine-tune or has no API key. */
  provider(id: ProviderId): { client: FineTuningProvider; endpoint: FineTuningEndpoint } | undefined {
    const row = this.deps.providers[id];
    if (row === undefined || row.endpoint.apiKey === undefined) return undefined;
    return { client: row.client, endpoint: { baseUrl: row.endpoint.baseUrl, apiKey: row.endpoint.apiKey } };
  }

  /**
   * Starts an admitted job: the files are uploaded and the job created at the provider.
   * Resolves with the provider's job once it took it (the job then goes on in the
   * background); rejects with the error the run was refunded on.
   */
  start(run: PaidRun, plan: FineTuningPlan, files: FineTuningFiles): Promise<ProviderJob> {
    let created!: (job: ProviderJob | GatewayError) => void;
    const result = new Promise<ProviderJob | GatewayError>((resolve) => (created = resolve));
    void this.background.launch(run, async (paid) => {
      const job = await this.create(paid, plan, files);
      created(job);
      if (job instanceof GatewayError) return 'refunded';
      return this.follow(paid, plan, job.id, job);
    }).then(() => created(internalError()));
    return result.then((job) => {
      if (job instanceof GatewayError) throw job;
      return job;
    });
  }

  /** Adopts the fine-tuning jobs of gone processes that the provider took (before orphan recovery refunds the rest) and resumes them. */
  async adopt(goneInstanceIds: string[], ownerLeaseExpiredAt?: number): Promise<void> {
    const adopted = await this.deps.jobs.adopt(goneInstanceIds, this.deps.instanceId, ownerLeaseExpiredAt);
    for (const job of adopted) this.resume(job);
  }

  /**
   * Polls a job now (after a cancel). Resolves once this process has settled or refunded
   * it, or after `waitMs`; at once when the job does not run in this process.
   */
  async wake(jobId: string, waitMs: number): Promise<void> {
    const finished = this.background.finished(jobId);
    if (finished === undefined) return;
    this.followers.get(jobId)?.wake();
    const timer = new AbortController();
    try {
      await Promise.race([finished, sleep(waitMs, undefined, { signal: timer.signal }).catch(() => undefined)]);
    } finally {
      timer.abort();
    }
  }

  /** Stops polling; running jobs stay held for the next process to resume. */
  async close(): Promise<void> {
    await this.background.close();
  }

  private resume(job: FineTuningJob): void {
    const jobId = job.record.jobId;
    const providerJobId = job.record.providerJobId;
    if (providerJobId === null || this.background.has(jobId) || this.background.signal.aborted) return;
    this.deps.logger.warn({ jobId, providerJobId }, 'resuming a fine-tuning job left by a gateway process that is gone');
    const plan = job.record.plan as FineTuningPlan;
    void this.background.launch(this.deps.runs.resume(jobId, job.money.held), (run) => this.follow(run, plan, providerJobId, undefined));
  }

  /** Uploads the files and creates the job; a failure is refunded here and returned. */
  private async create(run: PaidRun, plan: FineTuningPlan, files: FineTuningFiles): Promise<ProviderJob | GatewayError> {
    await this.deps.jobs.create(run.jobId, plan, this.deps.now());
    const provider = this.provider(plan.provider);
    if (provider === undefined) return this.fail(run, new GatewayError('model_unavailable', `The model cannot run now: no API key is configured for ${plan.provider}.`));
    const signal = AbortSignal.any([run.signal, this.background.signal]);
    try {
      const training = await provider.client.uploadFile(provider.endpoint, files.training.filename, files.training.bytes, signal);
      const validation = files.validation === undefined ? undefined : await provider.client.uploadFile(provider.endpoint, files.validation.filename, files.validation.bytes, signal);
      const job = await provider.client.createJob(provider.endpoint, {
        model: plan.model,
        trainingFile: training,
        ...(validation === undefined ? {} : { validationFile: validation }),
        hyperparameters: plan.hyperparameters,
        ...(plan.suffix === null ? {} : { suffix: plan.suffix }),
        ...(plan.seed === null ? {} : { seed: plan.seed }),
      }, signal);
      await this.deps.jobs.markStarted(run.jobId, job.id, job, this.deps.now());
      run.detach();
      return job;
    } catch (thrown) {
      const error = this.background.signal.aborted
        ? new GatewayError('internal_error', 'The gateway stopped before the provider took the job. Nothing was charged.')
        : run.errorFor(transportFailure(thrown) ?? thrown);
      if (error.code === 'model_unavailable') this.deps.logger.error({ provider: plan.provider, model: plan.model }, 'fine-tuning provider refused the gateway (operator error)');
      return this.fail(run, error);
    }
  }

  /** Polls until the provider's job has ended, then settles or refunds it. */
  private async follow(run: PaidRun, plan: FineTuningPlan, providerJobId: string, seen: ProviderJob | undefined): Promise<Outcome> {
    let last = seen;
    let wake = new AbortController();
    this.followers.set(run.jobId, { wake: () => wake.abort() });
    try {
      for (;;) {
        if (last !== undefined && isFinished(last.status)) return await this.conclude(run, plan, last);
        if (last !== undefined) {
          try {
            await sleep(this.deps.pollMs, undefined, { signal: AbortSignal.any([this.background.signal, wake.signal]) });
          } catch {
            if (this.background.signal.aborted) return this.leave(run);
            wake = new AbortController();
          }
        }
        const provider = this.provider(plan.provider);
        if (provider === undefined) {
          this.deps.logger.error({ jobId: run.jobId, provider: plan.provider }, 'fine-tuning job cannot be polled: its provider has no API key (operator error)');
          await sleep(this.deps.pollMs, undefined, { signal: this.background.signal }).catch(() => undefined);
          if (this.background.signal.aborted) return this.leave(run);
          continue;
        }
        try {
          last = await provider.client.getJob(provider.endpoint, providerJobId, this.background.signal);
          await this.deps.jobs.saveSnapshot(run.jobId, last, this.deps.now());
        } catch (thrown) {
          if (this.background.signal.aborted) return this.leave(run);
          if (thrown instanceof FineTuningProviderError && thrown.providerStatus === 404) {
            await this.fail(run, new GatewayError('upstream_error', `The provider no longer knows fine-tuning job ${providerJobId}. Nothing was charged.`));
            return 'refunded';
          }
          this.deps.logger.warn({ err: thrown, jobId: run.jobId }, 'fine-tuning poll failed; retrying');
        }
      }
    } finally {
      this.followers.delete(run.jobId);
    }
  }

  /** The provider's job ended: trained tokens are billed (succeeded, cancelled), a failed job is refunded. */
  private async conclude(run: PaidRun, plan: FineTuningPlan, job: ProviderJob): Promise<Outcome> {
    if (job.status === 'failed') {
      const why = job.error === null ? 'no reason given' : `${job.error.code}: ${job.error.message}`;
      const code = job.error !== null && /file/i.test(job.error.code) ? 'provider_rejected_input' : 'upstream_error';
      this.deps.logger.info({ jobId: run.jobId, why }, 'fine-tuning job failed at its provider; refunded');
      await run.refund({ code, message: `The fine-tuning job failed at its provider: ${why}` }, 'failed');
      return 'refunded';
    }
    const trained = job.trainedTokens ?? 0;
    const cost = Number(ceilDiv(BigInt(trained) * BigInt(plan.pricePerToken), SCALE));
    const output = { fine_tuned_model: job.fineTunedModel, trained_tokens: trained };
    await run.settle(cost, { trained_tokens: trained }, job.status === 'succeeded' ? 'succeeded' : 'canceled', output);
    return 'settled';
  }

  private async fail(run: PaidRun, error: GatewayError): Promise<GatewayError> {
    await run.refund(error, 'failed');
    return error;
  }

  private leave(run: PaidRun): Outcome {
    run.leave();
    return 'left';
  }
}
