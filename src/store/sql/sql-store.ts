/**
 * The Store on SQL: the focused stores (accounts, keys, jobs with the money path,
 * notifications) over one Kysely instance and one money engine, as one object.
 */
import { Migrator, type Kysely } from 'kysely';
import type { Store } from '../types.ts';
import { SqlAccounts } from './account-queries.ts';
import { SqlJobs } from './job-queries.ts';
import { SqlKeys } from './key-queries.ts';
import { migrationProvider } from './migrations.ts';
import type { MoneyEngine } from './money-plan.ts';
import { SqlNotifications } from './notification-queries.ts';
import type { Database, Dialect } from './tables.ts';
import { UsageRoller } from './usage-pending.ts';

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
  counter: QueryCounter;
  /** Runs after the money engine has finished and before the connection closes. */
  beforeClose?: () => Promise<void>;
  /** PostgreSQL: the schema the tables live in (`?schema=`), named so the migrator never takes another schema's bookkeeping for its own. */
  schema?: string;
  /** Moves the closed jobs pending in usage_pending into the dashboard's rollups (usage-pending.ts). */
  rollUsage: () => Promise<void>;
}

export function sqlStore(parts: SqlParts): Store {
  const { db, money, counter } = parts;
  const accounts = new SqlAccounts(db);
  const keys = new SqlKeys(db, parts.dialect);
  const jobs = new SqlJobs(db, money, parts.dialect);
  const notifications = new SqlNotifications(db, parts.dialect);
  const roller = new UsageRoller(parts.rollUsage);
  const lifecycle = {
    dialect: parts.dialect,
    get queryCount() {
      return counter.count;
    },
    async migrate() {
      const migrator = new Migrator({ db, provider: migrationProvider(parts.dialect), ...(parts.schema === undefined ? {} : { migrationTableSchema: parts.schema }) });
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
      await money.close();
      await roller.stop().catch(() => undefined);
      await parts.beforeClose?.();
      await db.destroy();
    },
  };
  const store: Store = Object.assign(
    lifecycle,
    bound(accounts, ['createAccount', 'getAccount', 'updateAccount', 'addCredits', 'accountSpentSince', 'listLedger']),
    bound(keys, ['createKey', 'findKeyByHash', 'getKey', 'listKeys', 'updateKey', 'revokeKey', 'rotateKey', 'keyFamilyUsage']),
    bound(jobs, ['hold', 'settle', 'refund', 'getJob', 'listJobs', 'renewLease', 'listInstances', 'removeInstances', 'runningJobOwners', 'refundJobsOf']),
    bound(notifications, ['listNotifications', 'claimMail', 'markMailSent', 'markMailFailed']),
  );
  DATABASES.set(store, db);
  ROLLERS.set(store, roller);
  return store;
}

/** The usage roller of each SQL store: the dashboard runs it before it reads. */
const ROLLERS = new WeakMap<Store, UsageRoller>();

/** The usage roller a store's dashboard reads wait for; undefined for a store that is not SQL. */
export function usageRollerOf(store: Store): UsageRoller | undefined {
  return ROLLERS.get(store);
}

/** The Kysely instance under each SQL store, for stores of other concerns built beside it (media jobs, usage). */
const DATABASES = new WeakMap<Store, Kysely<Database>>();

/** A store that wraps an SQL store (a test double) runs on the same database. */
export function wrapsSqlStore(wrapper: Store, inner: Store): void {
  const db = DATABASES.get(inner);
  if (db !== undefined) DATABASES.set(wrapper, db);
  const roller = ROLLERS.get(inner);
  if (roller !== undefined) ROLLERS.set(wrapper, roller);
}

/** The SQL database a store runs on; undefined for a store that is not SQL. */
export function sqlDatabaseOf(store: Store): Kysely<Database> | undefined {
  return DATABASES.get(store);
}

/**
 * A store of another concern built beside an SQL store (media jobs, fine-tuning jobs), made
 * at first use, so a gateway over a store that is not SQL (a test double) still starts.
 */
export function atFirstUse<T>(store: Store, what: string, make: (db: Kysely<Database>) => T): () => T {
  let made: T | undefined;
  return () => {
    if (made !== undefined) return made;
    const db = sqlDatabaseOf(store);
    if (db === undefined) throw new Error(`${what} need the SQL store`);
    made = make(db);
    return made;
  };
}

/** The named methods of an object, bound to it. */
function bound<T, K extends keyof T>(instance: T, names: readonly K[]): Pick<T, K> {
  const picked = {} as Pick<T, K>;
  for (const name of names) {
    const member = instance[name];
    picked[name] = (typeof member === 'function' ? member.bind(instance) : member) as T[K];
  }
  return picked;
}
