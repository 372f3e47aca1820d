/**
 * The job record of GET /jobs/{id} (DECISIONS.md "Routes beyond chat and embeddings"),
 * mapped from what the store keeps in this one place: when the store keeps the
 * contract's statuses, usage units and the output report, only this mapping changes.
 * Today's store says `running` for `processing`, keeps prompt and completion tokens as
 * columns, and no output (an `output` on the record is shown when a store keeps one).
 */
import { microToCredits } from '../billing/money.ts';
import { GatewayError, isErrorCode } from '../shared/errors.ts';
import type { JobStatus } from '../store/money-contract.ts';
import type { JobRecord } from '../store/types.ts';

export interface JobView {
  id: string;
  object: 'job';
  kind: string;
  status: JobStatus;
  /** The catalog slug that ran. */
  model: string;
  /** Unix seconds. */
  created_at: number;
  /** Unix seconds; null while processing. */
  finished_at: number | null;
  /** The units the run was billed on (tokens: with `total_tokens`); null until settled, and for a refunded run. */
  usage: Record<string, number> | null;
  /** What the run cost; null while processing, 0 for a refunded run. */
  cost_credits: number | null;
  /** The run's report (embeddings: `{count, dimensions}`, never the vectors). */
  output?: unknown;
  error?: { code: string; type: string; message: string };
}

/** A store's record, with the output report once the store keeps one. */
export type StoredJob = JobRecord & { output?: unknown };

const STATUS: Record<JobRecord['status'], JobStatus> = {
  processing: 'processing',
  succeeded: 'succeeded',
  failed: 'failed',
  canceled: 'canceled',
};

/** What a run's error code means for someone polling the job. */
const ERROR_MESSAGES: Record<string, string> = {
  provider_timeout: 'The model provider gave no answer in time. Nothing was charged.',
  upstream_error: 'The model provider failed or sent an unreadable answer. Nothing was charged.',
  upstream_rate_limited: 'The model provider was throttling requests. Nothing was charged.',
  provider_rejected_input: 'The model provider refused an input. Nothing was charged.',
  provider_rejected_request: 'The model provider refused the request. Nothing was charged.',
  model_unavailable: 'The model could not run. Nothing was charged.',
  invalid_api_key: 'The API key was revoked, rotated or expired during the run. Nothing was charged.',
  client_closed_request: 'The client closed the request before the first chunk. Nothing was charged.',
};

const seconds = (ms: number) => Math.floor(ms / 1000);

/** The units the run was billed on; token usage also carries its total. */
function usageOf(job: JobRecord): Record<string, number> | null {
  if (job.usage === null) return null;
  const usage: Record<string, number> = { ...job.usage };
  const prompt = usage.prompt_tokens;
  const completion = usage.completion_tokens;
  if ((prompt !== undefined || completion !== undefined) && usage.total_tokens === undefined) usage.total_tokens = (prompt ?? 0) + (completion ?? 0);
  return usage;
}

function errorOf(code: string): JobView['error'] {
  const message = ERROR_MESSAGES[code] ?? 'The run failed. Nothing was charged.';
  return { code, type: isErrorCode(code) ? new GatewayError(code, message).type : 'api_error', message };
}

export function jobView(job: StoredJob): JobView {
  const status = STATUS[job.status];
  const view: JobView = {
    id: job.id,
    object: 'job',
    kind: job.kind,
    status,
    model: job.model,
    created_at: seconds(job.createdAt),
    finished_at: job.finishedAt === null ? null : seconds(job.finishedAt),
    usage: usageOf(job),
    cost_credits: status === 'processing' ? null : microToCredits(job.cost ?? 0),
  };
  if (job.output !== undefined && job.output !== null) view.output = job.output;
  if (job.errorCode !== null) view.error = errorOf(job.errorCode);
  return view;
}
