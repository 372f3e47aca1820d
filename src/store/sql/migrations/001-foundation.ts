/**
 * Migration 001: accounts, API keys and the ledger, as the first release shipped them: frozen.
 * Every change since is a later migration; databases made by that release upgrade in place.
 */
import { type Kysely, type Migration, sql } from 'kysely';
import type { Dialect } from '../tables.ts';

export function foundationMigration(dialect: Dialect): Migration {
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
