/**
 * The Store on SQL: every focused part over one Kysely instance and one money engine, as one
 * record. open-store.ts opens the database and hands its pieces here.
 */
import { Migrator, type Kysely } from 'kysely';
import { HOLD_LIMITS, type HoldLimit } from '../limits.ts';
import type { Store } from '../types.ts';
import { SqlAccounts } from './account-queries.ts';
import { SqlAudioUploads } from './audio-uploads-store.ts';
import { SqlFineTuningJobs } from './fine-tuning-jobs-store.ts';
import { SqlInstances } from './instance-queries.ts';
import { SqlJobs } from './job-queries.ts';
import { SqlKeys } from './key-queries.ts';
import { SqlMediaJobs } from './media-jobs-store.ts';
import { migrationProvider } from './migrations/index.ts';
import { SqlMoney, type ReadNow } from './money/money-store.ts';
import type { MoneyEngine } from './money/movement.ts';
import { SqlNotifications } from './notification-queries.ts';
import type { Database, Dialect } from './tables.ts';
import { UsageRoller } from './usage-pending.ts';
import { SqlUsageStore } from './usage-rollups.ts';
import { SqlPortal } from './portal-store.ts';
import { SqlPayments } from './payments-store.ts';
import { SqlResponses } from './responses-store.ts';

/** PostgreSQL: a schema (3F000) or relation (42P01) that no longer exists. */
const DROPPED_MEANWHILE = new Set(['3F000', '42P01']);

/** Counts statement executions (Kysely queries and money movements). */
export class QueryCounter {
  count = 0;
  readonly tick = (): void => {
    this.count++;
  };
}

export interface SqlParts {
  dialect: Dialect;
  db: Kysely<Database>;
  money: MoneyEngine;
  /** This process is the database's only writer (SQLite, under its lock), and the engine reads at once: runs may be reserved in memory. */
  exclusive?: ReadNow;
  counter: QueryCounter;
  /** Runs after the money engine has finished and before the connection closes. */
  beforeClose?: () => Promise<void>;
  /** Runs once the connection is closed (the SQLite process lock is released). */
  afterClose?: () => void;
  /** PostgreSQL: the schema the tables live in (`?schema=`), named so the migrator never takes another schema's bookkeeping for its own. */
  schema?: string;
  /** Moves the closed jobs pending in usage_pending into the dashboard's rollups (usage-pending.ts). */
  rollUsage: () => Promise<void>;
  /** The limits the hold checks; default the shipped table (../limits.ts). */
  limits?: readonly HoldLimit[];
}

export function sqlStore(parts: SqlParts): Store {
  const { db, counter } = parts;
  const roller = new UsageRoller(parts.rollUsage);
  const limits = parts.limits ?? HOLD_LIMITS;
  const money = new SqlMoney(db, parts.money, limits, parts.exclusive);
  return {
    dialect: parts.dialect,
    get queryCount() {
      return counter.count;
    },
    accounts: new SqlAccounts(db, limits, money),
    keys: new SqlKeys(db, parts.dialect, limits),
    money,
    jobs: new SqlJobs(db, (jobId) => money.inFlightJob(jobId)),
    instances: new SqlInstances(db, money, parts.dialect),
    notifications: new SqlNotifications(db, parts.dialect),
    mediaJobs: new SqlMediaJobs(db),
    fineTuningJobs: new SqlFineTuningJobs(db),
    uploads: new SqlAudioUploads(db),
    // The dashboard's reads see every closed job: what is pending is rolled up first.
    usage: new SqlUsageStore(db, () => roller.now()),
    portal: new SqlPortal(db, parts.dialect, () => roller.now()),
    payments: new SqlPayments(db, parts.dialect),
    responses: new SqlResponses(db),
    async migrate() {
      // Numbers are given in ranges per change: one landing after a higher-numbered one still runs (migrations/index.ts).
      const migrator = new Migrator({ db, provider: migrationProvider(parts.dialect), allowUnorderedMigrations: true, ...(parts.schema === undefined ? {} : { migrationTableSchema: parts.schema }) });
      for (let attempt = 1; ; attempt++) {
        const { error } = await migrator.migrateToLatest();
        if (error === undefined) break;
        // Kysely looks for its bookkeeping tables through a catalog query over every schema of the database;
        // a schema or table dropped meanwhile by someone else fails that query. Nothing was migrated: try again.
        if (attempt < 5 && DROPPED_MEANWHILE.has((error as { code?: string }).code ?? '')) {
          await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
          continue;
        }
        throw error instanceof Error ? error : new Error(String(error));
      }
      roller.start();
    },
    async close() {
      await money.finish();
      await roller.stop().catch(() => undefined);
      await parts.beforeClose?.();
      await db.destroy();
      parts.afterClose?.();
    },
  };
}
