/**
 * Migration 091 (issue 18, dashboard speed): daily usage rollups beside the hourly ones, so a chart
 * over weeks reads one row per (UTC day, account, key, model, code) instead of one per hour; and
 * one job index fewer on the hold path.
 *
 * The ledger trigger of migration 090 now adds each closed job to both its hourly and its daily
 * row, in the settlement's own transaction, so both stay exact. `jobs_account (account_id,
 * created_at)` goes: `jobs_log_account (account_id, created_at, id)` serves every query it served.
 */
import { type Kysely, type Migration, sql } from 'kysely';
import { COLUMNS, rollupSelect, upsert } from './migration-usage.ts';
import type { Dialect } from './tables.ts';

const DAY = 86_400_000;
const DAILY_COLUMNS = COLUMNS.replace('(hour,', '(day,');

/** The trigger's statements: the closed job (`NEW` = its ledger row) added to its hourly and its daily row. */
function triggerStatements(dialect: Dialect): string[] {
  const hourly = `INSERT INTO usage_rollups ${COLUMNS} ${rollupSelect(dialect, 'NEW')} FROM jobs j WHERE j.id = NEW.job_id`;
  const daily = `INSERT INTO usage_rollups_daily ${DAILY_COLUMNS} ${rollupSelect(dialect, 'NEW', DAY)} FROM jobs j WHERE j.id = NEW.job_id`;
  if (dialect === 'sqlite') {
    // `AND true`: SQLite needs a WHERE before ON CONFLICT in INSERT … SELECT to parse the upsert.
    return [
      'DROP TRIGGER usage_rollup_on_close',
      `CREATE TRIGGER usage_rollup_on_close AFTER INSERT ON ledger
       WHEN NEW.kind IN ('settle', 'refund') AND NEW.job_id IS NOT NULL
       BEGIN
         ${hourly} AND true ${upsert()};
         ${daily} AND true ${upsert('usage_rollups_daily', 'day')};
       END`,
    ];
  }
  // The trigger (migration 090) calls this function by name: replacing it is enough.
  return [
    `CREATE OR REPLACE FUNCTION usage_rollup_on_close() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       ${hourly} ${upsert()};
       ${daily} ${upsert('usage_rollups_daily', 'day')};
       RETURN NULL;
     END $$`,
  ];
}

export function usageDailyMigration(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('usage_rollups_daily')
        .addColumn('day', 'bigint', (c) => c.notNull())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('key_id', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('code', 'text', (c) => c.notNull())
        .addColumn('requests', 'bigint', (c) => c.notNull())
        .addColumn('credits', 'bigint', (c) => c.notNull())
        .addColumn('prompt_tokens', 'bigint', (c) => c.notNull())
        .addColumn('completion_tokens', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('usage_rollups_daily_pk', ['day', 'account_id', 'key_id', 'model', 'code'])
        .$call((t) => (dialect === 'sqlite' ? t.modifyEnd(sql`without rowid`) : t))
        .execute();
      await db.schema.createIndex('usage_rollups_daily_account').on('usage_rollups_daily').columns(['account_id', 'day']).execute();
      for (const statement of triggerStatements(dialect)) await sql.raw(statement).execute(db);
      // Days rolled up before this migration: summed once from their hours.
      await sql
        .raw(
          `INSERT INTO usage_rollups_daily ${DAILY_COLUMNS}
           SELECT (hour / ${DAY}) * ${DAY}, account_id, key_id, model, code, sum(requests), sum(credits), sum(prompt_tokens), sum(completion_tokens)
           FROM usage_rollups GROUP BY (hour / ${DAY}) * ${DAY}, account_id, key_id, model, code`,
        )
        .execute(db);
      await db.schema.dropIndex('jobs_account').execute();
    },
  };
}
