/**
 * Tables (Kysely types) and migrations, shared by SQLite and PostgreSQL.
 * Booleans are 0/1 integers and times Unix milliseconds in both dialects, so one
 * query path serves both.
 */
import { type Generated, type Kysely, type Migration, type MigrationProvider, sql } from 'kysely';
import { usageMigration } from './migration-usage.ts';

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
  prompt_tokens: number | null;
  completion_tokens: number | null;
  error_code: string | null;
  instance_id: string;
  created_at: number;
  finished_at: number | null;
}

export interface InstancesTable {
  id: string;
  host: string;
  pid: number;
  heartbeat_at: number;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  ledger: LedgerTable;
  jobs: JobsTable;
  gateway_instances: InstancesTable;
}

export type Dialect = 'sqlite' | 'postgres';

function foundation(dialect: Dialect): Migration {
  const money = 'bigint';
  const time = 'bigint';
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('accounts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('email', 'text')
        .addColumn('created_at', time, (c) => c.notNull())
        .addColumn('has_purchase', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('billing_emails', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('monthly_spending_limit', money)
        .addColumn('balance', money, (c) => c.notNull().defaultTo(0))
        .addColumn('held', money, (c) => c.notNull().defaultTo(0))
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('family_id', 'text', (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull().unique())
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('scopes', 'text', (c) => c.notNull())
        .addColumn('requests_per_minute', 'integer', (c) => c.notNull())
        .addColumn('ip_allowlist', 'text', (c) => c.notNull())
        .addColumn('daily_limit', money)
        .addColumn('monthly_limit', money)
        .addColumn('expires_at', time)
        .addColumn('warning_threshold', 'real', (c) => c.notNull())
        .addColumn('email_alerts', 'integer', (c) => c.notNull())
        .addColumn('created_at', time, (c) => c.notNull())
        .addColumn('revoked_at', time)
        .execute();
      await db.schema.createIndex('api_keys_account').on('api_keys').column('account_id').execute();

      await db.schema
        .createTable('ledger')
        .addColumn('id', dialect === 'postgres' ? 'bigserial' : 'integer', (c) =>
          dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
        )
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('key_id', 'text')
        .addColumn('key_family_id', 'text')
        .addColumn('job_id', 'text')
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('amount', money, (c) => c.notNull().check(sql`amount >= 0`))
        .addColumn('created_at', time, (c) => c.notNull())
        .execute();
      // One index only: every secondary index is written on every money movement.
      await db.schema.createIndex('ledger_account').on('ledger').columns(['account_id', 'id']).execute();
    },
  };
}

/** Runs (jobs) with their money state, and the live gateway processes that own running jobs. */
const jobs: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('jobs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
      .addColumn('key_id', 'text')
      .addColumn('key_family_id', 'text')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('held', 'bigint', (c) => c.notNull())
      .addColumn('cost', 'bigint')
      .addColumn('prompt_tokens', 'integer')
      .addColumn('completion_tokens', 'integer')
      .addColumn('error_code', 'text')
      .addColumn('instance_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('finished_at', 'bigint')
      .execute();
    // Key usage per family and period; running jobs by owning process (a partial index: only running rows).
    await db.schema.createIndex('jobs_family').on('jobs').columns(['key_family_id', 'created_at']).execute();
    await db.schema.createIndex('jobs_running').on('jobs').column('instance_id').where(sql.ref('status'), '=', 'running').execute();
    await db.schema
      .createTable('gateway_instances')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('pid', 'integer', (c) => c.notNull())
      .addColumn('heartbeat_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};

export function migrationProvider(dialect: Dialect): MigrationProvider {
  return {
    async getMigrations() {
      return {
        '001_foundation': foundation(dialect),
        '002_jobs': jobs,
        // The dashboard's rollups and job-log indexes (src/store/sql/migration-usage.ts); numbered high to stay last.
        '090_dashboard_usage': usageMigration(dialect),
      };
    },
  };
}
