/**
 * The fine-tuning job object the routes answer with: the widely used shape
 * (`object: "fine_tuning.job"`), with the gateway's job UUID as `id`, the catalog slug as
 * `model`, and `cost_credits` (null while the job runs). A status that has ended is shown
 * only once the job's money has (so a client that sees `succeeded` sees its balance settled).
 */
import { microToCredits } from '../billing/money.ts';
import type { ProviderJob, ProviderJobStatus } from '../providers/fine-tuning.ts';
import type { FineTuningJob } from '../store/fine-tuning-jobs.ts';
import type { JobStatus } from '../store/money-contract.ts';
import type { FineTuningPlan } from './runner.ts';

const ENDED: Record<Exclude<JobStatus, 'processing'>, ProviderJobStatus> = { succeeded: 'succeeded', failed: 'failed', canceled: 'cancelled' };

const REFUND_MESSAGES: Record<string, string> = {
  provider_rejected_input: 'The provider refused the training file. Nothing was charged.',
  upstream_error: 'The fine-tuning provider failed. Nothing was charged.',
};

const seconds = (ms: number) => Math.floor(ms / 1000);

export function fineTuningJobView(job: FineTuningJob): Record<string, unknown> {
  const plan = job.record.plan as FineTuningPlan;
  const seen = job.record.snapshot as ProviderJob | null;
  const money = job.money;
  const status: ProviderJobStatus =
    money.status === 'processing' ? (seen === null ? 'validating_files' : seen.status === 'validating_files' || seen.status === 'queued' ? seen.status : 'running') : ENDED[money.status];
  const hyperparameters = { ...plan.hyperparameters, ...(seen?.hyperparameters ?? {}) };
  let error: Record<string, unknown> | null = null;
  if (status === 'failed') {
    const code = seen?.error?.code ?? money.errorCode ?? 'upstream_error';
    const message = seen?.error?.message ?? REFUND_MESSAGES[money.errorCode ?? ''] ?? 'The job failed. Nothing was charged.';
    error = { code, message, param: seen?.error?.param ?? null };
  }
  return {
    object: 'fine_tuning.job',
    id: job.record.jobId,
    model: money.model,
    created_at: seconds(money.createdAt),
    finished_at: money.finishedAt === null ? null : seconds(money.finishedAt),
    fine_tuned_model: status === 'succeeded' ? (seen?.fineTunedModel ?? null) : null,
    organization_id: money.accountId,
    result_files: seen?.resultFiles ?? [],
    status,
    validation_file: plan.validationFile,
    training_file: plan.trainingFile,
    hyperparameters,
    trained_tokens: seen?.trainedTokens ?? null,
    error,
    seed: plan.seed ?? seen?.seed ?? null,
    estimated_finish: status === 'running' || status === 'queued' ? (seen?.estimatedFinish ?? null) : null,
    integrations: [],
    user_provided_suffix: plan.suffix,
    method: { type: 'supervised', supervised: { hyperparameters } },
    metadata: null,
    cost_credits: money.status === 'processing' ? null : microToCredits(money.cost ?? 0),
  };
}
