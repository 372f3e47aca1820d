/**
 * What the admin dashboard reads: hourly usage rollups, the job log (paged by (created_at, id))
 * and account search. Kept apart from the money path's Store; times are Unix milliseconds,
 * money integer micro-credits.
 */
import type { AccountRecord, LedgerEntry } from './accounts.ts';
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

/** The chart's amounts of one group (a model or a key) per bucket: the bars stacked by model or key. */
export interface UsageStack {
  /** A model's slug or a key's id; '' with `other` for the rest. */
  name: string;
  other?: boolean;
  points: { t: number; credits: number; requests: number }[];
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
  /** Jobs created in [from, to) only. */
  from?: number;
  to?: number;
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

/** One job for the request detail view: its log row, what it was answered, and its ledger rows. */
export interface JobDetail extends JobLogRow {
  /** What the client was answered when the run failed, and why (migration 135; a media job's own record). */
  errorMessage: string | null;
  /** The account's name. */
  accountName: string | null;
  ledger: LedgerEntry[];
}

/** A ledger row that moved the balance, and the balance it left (micro-credits). */
export interface StatementLine {
  entry: LedgerEntry;
  /** Signed: + top-ups and grants, − charges and card refunds. */
  change: number;
  balanceAfter: number;
}

/** An account of the accounts list, with this month's charges and its newest request. */
export interface AccountActivity {
  account: AccountRecord;
  monthSpent: number;
  lastActivityAt: number | null;
}

export interface UsageStore {
  usage(query: UsageQuery): Promise<UsageReport>;
  /** The chart's bars stacked by model or by key: each of `names` (models or key ids) apart, the rest as one `other` group. */
  usageStacks(query: UsageQuery, by: 'model' | 'key', names: string[]): Promise<UsageStack[]>;
  jobLog(filter: JobLogFilter): Promise<JobLogRow[]>;
  job(id: string): Promise<JobDetail | undefined>;
  /** Accounts whose id, name or e-mail contains `q` (all when empty), newest first; `monthStart` is this UTC month's. */
  searchAccounts(q: string, limit: number, monthStart: number): Promise<AccountActivity[]>;
  /**
   * The account's statement, newest first: the ledger rows that moved its balance (top-ups, grants,
   * one charge per billed run, card refunds; holds and refunds move only what is held), each with
   * the balance it left. `before`: a ledger id, for the next page.
   */
  statement(accountId: string, balance: number, limit: number, before?: number): Promise<StatementLine[]>;
  /** Keys' names by id (unknown ids left out). */
  keyNames(ids: string[]): Promise<Map<string, string>>;
  /** Each key's newest request (keys without one are left out). */
  lastUsed(keyIds: string[]): Promise<Map<string, number>>;
}
