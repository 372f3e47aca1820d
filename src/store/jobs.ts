/** Jobs as recorded: one per paid run, with its money state. */
import type { JobAttempt, JobKind, JobStatus, UsageUnits } from './money-contract.ts';

export interface JobRecord {
  id: string;
  accountId: string;
  keyId: string | null;
  keyFamilyId: string | null;
  kind: JobKind;
  model: string;
  status: JobStatus;
  held: number;
  /** What was charged: null while processing, 0 when refunded. */
  cost: number | null;
  usage: UsageUnits | null;
  output: unknown;
  /** The provider calls of a chat or embeddings run (null: closed before migration 115, or never called). */
  attempts: JobAttempt[] | null;
  errorCode: string | null;
  clientAddress: string | null;
  createdAt: number;
  finishedAt: number | null;
}

export interface JobStore {
  getJob(id: string): Promise<JobRecord | undefined>;
  /** An account's jobs, newest first; `before` (a created_at) pages back. */
  listJobs(accountId: string, options: { limit: number; before?: number }): Promise<JobRecord[]>;
}
