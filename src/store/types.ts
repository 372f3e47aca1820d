/**
 * The store: one record of focused parts, one per concern, built in one place
 * (open-store.ts). Each part's interface is declared in its own file beside this one and
 * re-exported here. Two databases implement them on one SQL code path (src/store/sql):
 * embedded SQLite (default) and PostgreSQL. Money is integer micro-credits everywhere;
 * times are Unix milliseconds.
 */
import type { AccountStore } from './accounts.ts';
import type { AudioUploadStore } from './audio-uploads.ts';
import type { FineTuningJobStore } from './fine-tuning-jobs.ts';
import type { InstanceStore } from './instances.ts';
import type { JobStore } from './jobs.ts';
import type { KeyStore } from './keys.ts';
import type { MediaJobStore } from './media-jobs.ts';
import type { MoneyStore } from './money-contract.ts';
import type { NotificationStore } from './notifications.ts';
import type { UsageStore } from './usage.ts';

export type { AccountPatch, AccountRecord, AccountStore, LedgerEntry, LedgerKind, NewAccount } from './accounts.ts';
export type { ApiKeyPatch, ApiKeyRecord, CreateKeyResult, KeyStore, KeyUsage } from './keys.ts';
export type { JobRecord, JobStore } from './jobs.ts';
export type { InstanceRecord, InstanceStore, ProcessIdentity } from './instances.ts';
export type { ClaimedMail, LimitPeriod, MailState, NotificationKind, NotificationRecord, NotificationStore } from './notifications.ts';
export type { HoldResult, JobAttempt, JobKind, JobStatus, MoneyStore, NewHold, Refund, RouteFacts, Settlement, UsageUnits } from './money-contract.ts';

export interface AccountRecord {
  id: string;
  name: string;
  email: string | null;
  createdAt: number;
  hasPurchase: boolean;
  billingEmails: boolean;
  monthlySpendingLimit: number | null;
  /** Σ top-ups + grants − settled charges. */
  balance: number;
  /** Credits reserved by runs in flight. */
  held: number;
}

export interface NewAccount {
  name: string;
  email: string | null;
  createdAt: number;
  hasPurchase: boolean;
  billingEmails: boolean;
}

export interface AccountPatch {
  monthlySpendingLimit?: number | null;
  billingEmails?: boolean;
}

/** payment_refund: a card payment refunded (Stripe), debited from the balance. */
export type LedgerKind = 'topup' | 'grant' | 'hold' | 'settle' | 'refund' | 'payment_refund';

export interface LedgerEntry {
  id: number;
  accountId: string;
  keyId: string | null;
  jobId: string | null;
  kind: LedgerKind;
  /** Magnitude of the movement: credited (topup, grant), reserved (hold), charged (settle), released (refund). */
  amount: number;
  createdAt: number;
}

export interface AccountStore {
  createAccount(input: NewAccount): Promise<AccountRecord>;
  getAccount(id: string): Promise<AccountRecord | undefined>;
  updateAccount(id: string, patch: AccountPatch): Promise<AccountRecord | undefined>;
  /** A top-up (purchase: also lifts the trial rules at once) or a grant, as one ledger row. */
  addCredits(accountId: string, amount: number, kind: 'topup' | 'grant', at: number): Promise<AccountRecord | undefined>;
  /** Settled charges of the account since `since`. */
  accountSpentSince(accountId: string, since: number): Promise<number>;
  /** Newest first. */
  listLedger(accountId: string, limit: number): Promise<LedgerEntry[]>;
}

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  /** Shared by a key and every key rotated from it: usage counts per family. */
  familyId: string;
  /** SHA-256 of the secret, hex. */
  hash: string;
  /** First characters of the secret, for display. */
  prefix: string;
  name: string;
  scopes: Scope[];
  requestsPerMinute: number;
  ipAllowlist: string[];
  dailyLimit: number | null;
  monthlyLimit: number | null;
  expiresAt: number | null;
  warningThreshold: number;
  emailAlerts: boolean;
  createdAt: number;
  revokedAt: number | null;
}

export interface ApiKeyPatch {
  name?: string;
  dailyLimit?: number | null;
  monthlyLimit?: number | null;
  warningThreshold?: number;
  emailAlerts?: boolean;
}

export type CreateKeyResult = { ok: true; key: ApiKeyRecord } | { ok: false; reason: 'too_many_keys' };

/** What a key family's runs count toward its limits: open holds at the amount held, settled runs at cost, refunded at 0. */
export interface KeyUsage {
  /** In the UTC day of `at`. */
  day: number;
  /** In the UTC calendar month of `at`. */
  month: number;
}

export interface KeyStore {
  /** Inserts the key unless the account already has `maxActive` active keys at `now`. */
  createKey(key: ApiKeyRecord, maxActive: number, now: number): Promise<CreateKeyResult>;
  findKeyByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  getKey(id: string): Promise<ApiKeyRecord | undefined>;
  listKeys(accountId: string): Promise<ApiKeyRecord[]>;
  updateKey(id: string, patch: ApiKeyPatch): Promise<ApiKeyRecord | undefined>;
  revokeKey(id: string, at: number): Promise<ApiKeyRecord | undefined>;
  /** Deactivates `oldId` and inserts `replacement` (same family: usage carries over) in one transaction. */
  rotateKey(oldId: string, replacement: ApiKeyRecord, at: number): Promise<ApiKeyRecord | undefined>;
  /** The counters the key limits are checked against. */
  keyFamilyUsage(familyId: string, at: number): Promise<KeyUsage>;
}

/** The money path (src/store/money-contract.ts): one atomic hold with every admission check, then one settle or refund. */
export interface MoneyStore {
  /** Reserves credits, or refuses with the first failing check; nothing is created or charged on a refusal. */
  hold(hold: NewHold): Promise<HoldResult>;
  /** Bills a processing job (capped at its hold) and releases the rest; the amount charged (0 when it was no longer processing). */
  settle(jobId: string, settlement: Settlement): Promise<number>;
  /** Releases a processing job's whole hold; false when it was no longer processing. */
  refund(jobId: string, refund: Refund): Promise<boolean>;
}

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

/** A gateway process as it registers itself. */
export interface ProcessIdentity {
  id: string;
  host: string;
  pid: number;
  /** Boot id and pid namespace of its host (null: unknown): a pid is only checked by a process of the same scope. */
  pidScope: string | null;
}

export interface InstanceRecord extends ProcessIdentity {
  /** The database's clock until which the process is taken to be alive. */
  leaseUntil: number;
}

/**
 * The processes that own running jobs, each with a lease on the database's clock (docs/decisions.md "Process
 * leases"). Every time here is the database's clock, so the processes' own clocks never matter.
 */
export interface InstanceStore {
  /**
   * Registers this process or renews its lease: alive until the database's clock + `leaseMs`. Answers the
   * database's clock, and whether the process had a lease before that had run out (or was forgotten): its
   * runs' holds may have been refunded meanwhile.
   */
  renewLease(instance: ProcessIdentity, leaseMs: number): Promise<{ now: number; lapsed: boolean }>;
  listInstances(): Promise<InstanceRecord[]>;
  /** Forgets processes that are gone: with `expiredAt`, only those whose lease had run out by then. */
  removeInstances(ids: string[], expiredAt?: number): Promise<void>;
  /** Instance ids owning processing jobs (some may have no instance row at all). */
  runningJobOwners(): Promise<string[]>;
  /**
   * Refunds in full the processing jobs owned by these processes (not a trial failure: the gateway's fault), each
   * with one conditional update, so a job is refunded once however many processes sweep at once. With
   * `ownerLeaseExpiredAt` (the database's clock), a job is refunded only if its owner's lease had run out by then
   * (or its owner has no row): never a live process's. Returns how many.
   */
  refundJobsOf(instanceIds: string[], at: number, ownerLeaseExpiredAt?: number): Promise<number>;
}

export type NotificationKind = 'warning' | 'limit_reached';
export type LimitPeriod = 'daily' | 'monthly';
/** none: no e-mail wanted (switches off, no address); pending: queued or retrying; suppressed: over the account's 10 in 24 hours. */
export type MailState = 'none' | 'pending' | 'sent' | 'failed' | 'suppressed';

export interface NotificationRecord {
  id: number;
  accountId: string;
  keyId: string | null;
  keyFamilyId: string;
  kind: NotificationKind;
  limit: LimitPeriod;
  /** Start of the UTC day or month the alert belongs to. */
  periodStart: number;
  threshold: number;
  createdAt: number;
  mail: MailState;
}

/** An outbox row claimed for sending: the claimer holds its lease until `leaseUntil`. */
export interface ClaimedMail {
  id: number;
  accountId: string;
  /** The account's address now; null when it has none (mark the mail failed). */
  to: string | null;
  accountName: string;
  notification: NotificationRecord;
  attempts: number;
  leaseUntil: number;
}

export interface NotificationStore {
  /** Newest first. */
  listNotifications(accountId: string, limit: number): Promise<NotificationRecord[]>;
  /**
   * Claims up to `limit` due outbox rows with a lease, so two processes never send the same mail; a row whose
   * account already had 10 mails claimed in the last 24 hours is suppressed instead.
   */
  claimMail(owner: string, now: number, options: { limit: number; leaseMs: number }): Promise<ClaimedMail[]>;
  /** False when the lease was lost (another process may have sent it). */
  markMailSent(id: number, owner: string, at: number): Promise<boolean>;
  /** `retryAt` null gives up on the row. */
  markMailFailed(id: number, owner: string, error: string, retryAt: number | null): Promise<boolean>;
}

export type Store = AccountStore & KeyStore & MoneyStore & JobStore & InstanceStore & NotificationStore & {
  readonly dialect: 'sqlite' | 'postgres';
  /** Counts statement executions (tests use it to prove cache hits). */
  readonly queryCount: number;
  readonly accounts: AccountStore;
  readonly keys: KeyStore;
  readonly money: MoneyStore;
  readonly jobs: JobStore;
  readonly instances: InstanceStore;
  readonly notifications: NotificationStore;
  readonly mediaJobs: MediaJobStore;
  readonly fineTuningJobs: FineTuningJobStore;
  readonly uploads: AudioUploadStore;
  /** What the admin dashboard reads. */
  readonly usage: UsageStore;
  migrate(): Promise<void>;
  close(): Promise<void>;
}
