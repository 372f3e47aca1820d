/**
 * Migration 095: closed jobs wait in `usage_pending` for the usage roller (usage-pending.ts)
 * instead of being rolled up by a ledger trigger on every close; the trigger goes. A row has no
 * key and no index: it is only ever appended and taken whole.
 */
import { type Kysely, type Migration, sql } from 'kysely';
import type { Dialect } from '../tables.ts';

export function usagePendingMigration(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('usage_pending')
        .addColumn('job_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('amount', 'bigint', (c) => c.notNull())
        .execute();
      if (dialect === 'sqlite') {
        await sql`DROP TRIGGER IF EXISTS usage_rollup_on_close`.execute(db);
        return;
      }
      await sql`DROP TRIGGER IF EXISTS usage_rollup_on_close ON ledger`.execute(db);
      await sql`DROP FUNCTION IF EXISTS usage_rollup_on_close()`.execute(db);
    },
  };
}
