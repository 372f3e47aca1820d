/**
 * The tables as the latest migration leaves them (Kysely types), shared by SQLite and
 * PostgreSQL. Booleans are 0/1 integers, times Unix milliseconds and money integer
 * micro-credits in both dialects, so one query path serves both.
 */
import type { Generated } from 'kysely';

export type Dialect = 'sqlite' | 'postgres';

export interface AccountsTable {
  id: string;
  name: string;
  email: string | null;
  created_at: number;
  has_purchase: number;
  billing_emails: number;
  monthly_spending_limit: number | null;
  balance: number;
  held: number;
  /** Settled charges of the UTC month starting at month_start (the spending limit's counter). */
  month_start: number;
  month_settled: number;
  /** Trial rules: the latest run start times (a sliding log, newest first) and failures in a row. */
  trial_runs: string;
  trial_failures: number;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  family_id: string;
  hash: string;
  prefix: string;
  name: string;
  scopes: string;
  requests_per_minute: number;
  ip_allowlist: string;
  daily_limit: number | null;
  monthly_limit: number | null;
  expires_at: number | null;
  warning_threshold: number;
  email_alerts: number;
  created_at: number;
  revoked_at: number | null;
}

/**
 * A key family's usage (a key and every key rotated from it) in its current UTC day and month. Each
 * account also has a row of its own (family_id = account id) that the holds of runs without a key lock.
 */
export interface KeyFamiliesTable {
  family_id: string;
  account_id: string;
  day_start: number;
  day_used: number;
  month_start: number;
  month_used: number;
}

export interface LedgerTable {
  id: Generated<number>;
  account_id: string;
  key_id: string | null;
  key_family_id: string | null;
  job_id: string | null;
  kind: string;
  amount: number;
  created_at: number;
}

export interface JobsTable {
  id: string;
  account_id: string;
  key_id: string | null;
  key_family_id: string | null;
  kind: string;
  model: string;
  status: string;
  held: number;
  cost: number | null;
  /** JSON of the usage units, the output report. */
  usage: string | null;
  output: string | null;
  /** JSON of the provider calls (JobAttempt[]); null before migration 115. */
  attempts: string | null;
  error_code: string | null;
  /** What the client was answered, and why (migration 135); null for a billed run and before 135. */
  error_message: string | null;
  instance_id: string;
  client_address: string | null;
  counts_key: number;
  /** Unused (migration 003 added it, no release writes it): leases are per process, `gateway_instances.lease_until`. */
  lease_until: number | null;
  created_at: number;
  finished_at: number | null;
}

export interface InstancesTable {
  id: string;
  host: string;
  pid: number;
  /** The database's clock at the process's latest renewal. */
  heartbeat_at: number;
  /** The database's clock until which the process is taken to be alive (null: a process of a release before leases). */
  lease_until: number | null;
  /** Boot id and pid namespace of the process's host (null: unknown), so a pid is only ever checked where it means that process. */
  pid_scope: string | null;
}

/** Trial runs per client address: a sliding log of run start times, newest first. */
export interface TrialAddressesTable {
  address: string;
  runs: string;
}

export interface NotificationsTable {
  id: Generated<number>;
  account_id: string;
  key_id: string | null;
  key_family_id: string;
  kind: string;
  limit_period: string;
  period_start: number;
  threshold: number;
  created_at: number;
}

export interface MailOutboxTable {
  id: Generated<number>;
  notification_id: number;
  account_id: string;
  /** pending (to send, or to retry at next_attempt_at), sent, failed (given up), suppressed (over the account's quota). */
  status: string;
  attempts: number;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  first_claimed_at: number | null;
  sent_at: number | null;
  last_error: string | null;
  created_at: number;
}

/** A media job beside its `jobs` row (migration 004). JSON values are stored as text. */
export interface MediaJobsTable {
  job_id: string;
  plan: string;
  prediction_ids: string;
  outputs: string | null;
  usage: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: number;
  updated_at: number;
}

/** A fine-tuning job beside its `jobs` row (migration 091). */
export interface FineTuningJobsTable {
  job_id: string;
  plan: string;
  provider_job_id: string | null;
  snapshot: string | null;
  created_at: number;
  updated_at: number;
}

/** A voice sample with its bytes (migration 093). */
export interface AudioUploadsTable {
  id: string;
  secret: string;
  account_id: string;
  key_id: string | null;
  content_type: string;
  bytes: Buffer;
  duration_ms: number;
  created_at: number;
  expires_at: number;
}

/** A stored response of the Responses route (migration 110): customer content, kept until expires_at. */
export interface StoredResponsesTable {
  id: string;
  account_id: string;
  previous_id: string | null;
  /** JSON: this request's own input items. */
  input: string;
  /** JSON: the output items. */
  output: string;
  /** JSON: the response object as answered. */
  response: string;
  created_at: number;
  expires_at: number;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  key_families: KeyFamiliesTable;
  ledger: LedgerTable;
  jobs: JobsTable;
  gateway_instances: InstancesTable;
  trial_addresses: TrialAddressesTable;
  notifications: NotificationsTable;
  mail_outbox: MailOutboxTable;
  media_jobs: MediaJobsTable;
  fine_tuning_jobs: FineTuningJobsTable;
  audio_uploads: AudioUploadsTable;
  stored_responses: StoredResponsesTable;
}
