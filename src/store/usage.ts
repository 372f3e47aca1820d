/**
 * What the admin dashboard reads: hourly usage rollups, the job log (paged by (created_at, id))
 * and account search. Kept apart from the money path's Store; times are Unix milliseconds,
 * money integer micro-credits.
 */
import type { AccountRecord } from './accounts.ts';
import type { JobAttempt, JobStatus } from './money-contract.ts';

export type UsageBucket = 'hour' | 'day';

export interface UsageQuery {
  from: number;
  to: number;
  bucket: UsageBucket;
  accountId?: string;
  keyId?: string;
}

export interface UsagePoint {
  /** Start of the bucket. */
  t: number;
  requests: number;
  errors: number;
  credits: number;
  /** Every input token; of them, read from and written to the providers' prompt caches. */
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export interface UsageReport {
  series: UsagePoint[];
  errorsByCode: { code: string; requests: number }[];
  topModels: { model: string; requests: number; credits: number }[];
  topKeys: { keyId: string; keyName: string | null; accountId: string; requests: number; credits: number }[];
}

export interface JobLogFilter {
  accountId?: string;
  keyId?: string;
  model?: string;
  status?: JobStatus;
  code?: string;
  /** Only jobs created before this (created_at, id), newest first. */
  before?: { createdAt: number; id: string };
  limit: number;
}

export interface JobLogRow {
  id: string;
  accountId: string;
  keyId: string | null;
  keyName: string | null;
  kind: string;
  model: string;
  status: JobStatus;
  errorCode: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
  /** Of promptTokens: cache reads and writes (every lifetime); null where the run reported none. */
  cacheReadTokens: number | null;
  cacheWriteTokens: number | null;
  cost: number | null;
  held: number;
  createdAt: number;
  finishedAt: number | null;
  /** The run's provider calls (null: none recorded). */
  attempts: JobAttempt[] | null;
}

export interface UsageStore {
  usage(query: UsageQuery): Promise<UsageReport>;
  jobLog(filter: JobLogFilter): Promise<JobLogRow[]>;
  /** Accounts whose id, name or e-mail contains `q` (all when empty), newest first. */
  searchAccounts(q: string, limit: number): Promise<AccountRecord[]>;
}
