/**
 * Migration 137 (issue 32): requests and credits per (hour, account, model), beside the hourly
 * rollups, for the overview's bars stacked by model over hours: at a million jobs a month the
 * hourly rollups hold about one row per (hour, account, key, model, code), some 200,000 for a
 * week; this total holds one per (hour, account, model). The usage roller adds to it with the
 * other totals (usage-rollup-sql.ts), off the money path. Filled here from the hourly rollups.
 */
import { type Kysely, type Migration, sql } from 'kysely';
import type { Dialect } from '../tables.ts';

export function usageModelHoursMigration(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('usage_model_hours')
        .addColumn('hour', 'bigint', (c) => c.notNull())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('requests', 'bigint', (c) => c.notNull())
        .addColumn('credits', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('usage_model_hours_pk', ['hour', 'account_id', 'model'])
        // SQLite: rows stored in key order, so a range of hours is one sequential read.
        .$call((t) => (dialect === 'sqlite' ? t.modifyEnd(sql`without rowid`) : t))
        .execute();
      await sql`INSERT INTO usage_model_hours (hour, account_id, model, requests, credits)
        SELECT hour, account_id, model, sum(requests), sum(credits) FROM usage_rollups GROUP BY hour, account_id, model`.execute(db);
    },
  };
}
