/**
 * The storage interface every part of the gateway talks to. Two implementations share
 * one SQL code path (src/store/sql): embedded SQLite (default) and PostgreSQL.
 * Money is integer micro-credits everywhere; times are Unix milliseconds.
 */
import type { Scope } from '../shared/scopes.ts';

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

export type LedgerKind = 'topup' | 'grant' | 'hold' | 'settle' | 'refund';

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

export type JobStatus = 'running' | 'succeeded' | 'failed' | 'canceled';

export interface JobRecord {
  id: string;
  accountId: string;
  keyId: string | null;
  kind: string;
  model: string;
  status: JobStatus;
  held: number;
  cost: number | null;
  promptTokens: number | null;
  completionTokens: number | null;
  errorCode: string | null;
  createdAt: number;
  finishedAt: number | null;
}

export type { HoldResult, NewHold, Refund, Settlement } from './money-contract.ts';
import type { HoldResult, NewHold, Refund, Settlement } from './money-contract.ts';

export interface InstanceRecord {
  id: string;
  host: string;
  pid: number;
  heartbeatAt: number;
}

export type CreateKeyResult = { ok: true; key: ApiKeyRecord } | { ok: false; reason: 'too_many_keys' };

export interface Store {
  readonly dialect: 'sqlite' | 'postgres';
  /** Counts statement executions (tests use it to prove cache hits). */
  readonly queryCount: number;
  migrate(): Promise<void>;
  close(): Promise<void>;

  createAccount(input: NewAccount): Promise<AccountRecord>;
  getAccount(id: string): Promise<AccountRecord | undefined>;
  updateAccount(id: string, patch: AccountPatch): Promise<AccountRecord | undefined>;
  /** A top-up (purchase: also marks the account as having a purchase) or a grant, as one ledger row. */
  addCredits(accountId: string, amount: number, kind: 'topup' | 'grant', at: number): Promise<AccountRecord | undefined>;
  /** Settled charges of the account since `since`. */
  accountSpentSince(accountId: string, since: number): Promise<number>;
  listLedger(accountId: string, limit: number): Promise<LedgerEntry[]>;

  /** Inserts the key unless the account already has `maxActive` active keys at `now`. */
  createKey(key: ApiKeyRecord, maxActive: number, now: number): Promise<CreateKeyResult>;
  findKeyByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  getKey(id: string): Promise<ApiKeyRecord | undefined>;
  listKeys(accountId: string): Promise<ApiKeyRecord[]>;
  updateKey(id: string, patch: ApiKeyPatch): Promise<ApiKeyRecord | undefined>;
  revokeKey(id: string, at: number): Promise<ApiKeyRecord | undefined>;
  /** Deactivates `oldId` and inserts `replacement` in one transaction. */
  rotateKey(oldId: string, replacement: ApiKeyRecord, at: number): Promise<ApiKeyRecord | undefined>;
  /** Reserves credits atomically: refused when the available balance (balance − held) is below the amount. */
  hold(hold: NewHold): Promise<HoldResult>;
  /** Bills a running job and releases its hold; returns the amount charged (0 when the job was no longer running). */
  settle(jobId: string, settlement: Settlement): Promise<number>;
  /** Releases a running job's whole hold; false when the job was no longer running. */
  refund(jobId: string, refund: Refund): Promise<boolean>;
  getJob(id: string): Promise<JobRecord | undefined>;
  /** Records that a gateway process is alive. */
  heartbeat(instance: { id: string; host: string; pid: number }, at: number): Promise<void>;
  listInstances(): Promise<InstanceRecord[]>;
  /** Forgets processes that are gone, after their jobs were refunded. */
  removeInstances(ids: string[]): Promise<void>;
  /** Instance ids owning running jobs (some may have no instance row at all). */
  runningJobOwners(): Promise<string[]>;
  /** Refunds in full every running job owned by these processes. Returns how many. */
  refundJobsOf(instanceIds: string[], at: number): Promise<number>;

  /** What a key family's runs are charged since `since`: open holds at their held amount, settled runs at cost. */
  keyFamilyChargedSince(familyId: string, since: number): Promise<number>;
}
