/**
 * What the fine-tuning runner keeps beside a job's money row (the `jobs` row the hold
 * created): the plan it settles by, the provider's job and file ids once the provider took
 * the job, and the last provider job object seen (what GET /fine_tuning/jobs/{id} shows).
 * A running job WITH a provider job id is resumed by the next gateway process, never
 * refunded as an orphan (as media jobs are).
 */
import type { JobStatus } from './money-contract.ts';

export interface FineTuningJobRecord {
  jobId: string;
  /** The settlement plan and the request as asked (the runner's own JSON). */
  plan: unknown;
  providerJobId: string | null;
  /** The last provider job object seen (the runner's own JSON); null until the provider took the job. */
  snapshot: unknown;
  createdAt: number;
  updatedAt: number;
}

/** The money row's facts shown with the job. */
export interface FineTuningMoney {
  accountId: string;
  model: string;
  status: JobStatus;
  held: number;
  /** Null while processing, 0 for a refund. */
  cost: number | null;
  createdAt: number;
  finishedAt: number | null;
  /** The code a refunded job ended on. */
  errorCode: string | null;
}

export interface FineTuningJob {
  record: FineTuningJobRecord;
  money: FineTuningMoney;
}

export interface FineTuningJobStore {
  /** Right after the hold: the job's plan. */
  create(jobId: string, plan: unknown, at: number): Promise<void>;
  /** The provider took the job: from now on it is resumed, not refunded, when its process dies. */
  markStarted(jobId: string, providerJobId: string, snapshot: unknown, at: number): Promise<void>;
  /** The provider's job as last seen. */
  saveSnapshot(jobId: string, snapshot: unknown, at: number): Promise<void>;
  get(jobId: string): Promise<FineTuningJob | undefined>;
  /** An account's jobs, newest first; `after` (a job id of the account) pages on past it. */
  list(accountId: string, options: { limit: number; after?: string }): Promise<{ jobs: FineTuningJob[]; hasMore: boolean }>;
  /**
   * Moves the running fine-tuning jobs with a provider job id of gone processes to `owner`
   * (one conditional update; with `ownerLeaseExpiredAt`, only where the owner's lease had run
   * out by then) and returns every such job `owner` now holds, to resume.
   */
  adopt(goneInstanceIds: string[], owner: string, ownerLeaseExpiredAt?: number): Promise<FineTuningJob[]>;
}
