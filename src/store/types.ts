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
import type { PortalStore } from './portal.ts';
import type { PaymentStore } from './payments.ts';
import type { ResponseStore } from './responses.ts';

export type { AccountPatch, AccountRecord, AccountStore, LedgerEntry, LedgerKind, NewAccount } from './accounts.ts';
export type { ApiKeyPatch, ApiKeyRecord, CreateKeyResult, KeyStore, KeyUsage } from './keys.ts';
export type { JobRecord, JobStore } from './jobs.ts';
export type { ResponseStore, StoredResponseRecord } from './responses.ts';
export type { InstanceRecord, InstanceStore, ProcessIdentity } from './instances.ts';
export type { ClaimedMail, LimitPeriod, MailState, NotificationKind, NotificationRecord, NotificationStore } from './notifications.ts';
export type { HoldResult, JobAttempt, JobKind, JobStatus, MoneyStore, NewHold, Refund, RouteFacts, Settlement, UsageUnits } from './money-contract.ts';

/** The store: one focused part per concern, over one database. */
export interface Store {
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
  /** The customer portal: members, sign-in links, sessions, the admin audit log, its reads of an account. */
  readonly portal: PortalStore;
  /** Card payments (Stripe): credited once per session, refunds debited. */
  readonly payments: PaymentStore;
  /** Stored responses of the Responses route (customer content, until their expiry). */
  readonly responses: ResponseStore;
  migrate(): Promise<void>;
  close(): Promise<void>;
}
