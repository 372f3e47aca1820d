/**
 * Migration 094 (issue 18, dashboard speed): narrow usage totals beside the hourly rollups, so the
 * overview of every account over days or weeks reads a few thousand rows, not one per (hour,
 * account, key, model, code), which at a million jobs a month is about one per job:
 *
 * - usage_key_hours / usage_key_days: requests, errors, credits and tokens per (hour or UTC day, account, key):
 *   the charts' series and the top keys;
 * - usage_model_days: requests and credits per (day, account, model): the top models;
 * - usage_code_days: failed requests per (day, account, code), written only for failures: errors by code.
 *
 * The ledger trigger of migration 090 now adds each closed job to its hourly rollup and to these, in
 * the settlement's own transaction, so all stay exact. Every row is the account's own (no row shared
 * by all accounts that every settlement would lock). The hourly rollups' account index becomes a key
 * index (the overview of one account reads the narrow totals; of one key, its hourly rollups), and
 * `jobs_account (account_id, created_at)` goes: `jobs_log_account (account_id, created_at, id)` serves
 * every query it served, and each hold writes one index fewer. A partial index finds failed and
 * canceled jobs in the request log.
 */
import { type Kysely, type Migration, sql } from 'kysely';
// Migration 090's own statements (frozen, as this one is).
import { COLUMNS, rollupSelect, UPSERT } from './090-dashboard-usage.ts';
import type { Dialect } from '../tables.ts';

const DAY = 86_400_000;

interface Total {
  table: string;
  /** Key columns: the bucket first. */
  keys: string[];
  amounts: string[];
  /** Where the closed job counts in this table (codes: failures only). */
  where?: string;
}

const KEY_AMOUNTS = ['requests', 'errors', 'credits', 'prompt_tokens', 'completion_tokens'];
const TOTALS: Total[] = [
  { table: 'usage_key_hours', keys: ['hour', 'account_id', 'key_id'], amounts: KEY_AMOUNTS },
  { table: 'usage_key_days', keys: ['day', 'account_id', 'key_id'], amounts: KEY_AMOUNTS },
  { table: 'usage_model_days', keys: ['day', 'account_id', 'model'], amounts: ['requests', 'credits'] },
  { table: 'usage_code_days', keys: ['day', 'account_id', 'code'], amounts: ['requests'], where: "code <> ''" },
];

/** Each total's value from an hourly rollup row's columns (`code` '' for a success). */
const FROM_ROLLUP: Record<string, string> = {
  hour: `hour`,
  day: `(hour / ${DAY}) * ${DAY}`,
  account_id: 'account_id',
  key_id: 'key_id',
  model: 'model',
  code: 'code',
  requests: 'requests',
  errors: "CASE WHEN code = '' THEN 0 ELSE requests END",
  credits: 'credits',
  prompt_tokens: 'prompt_tokens',
  completion_tokens: 'completion_tokens',
};

function upsertTotal(total: Total): string {
  const add = total.amounts.map((a) => `${a} = ${total.table}.${a} + excluded.${a}`).join(', ');
  return `ON CONFLICT (${total.keys.join(', ')}) DO UPDATE SET ${add}`;
}

/** INSERT … SELECT of a total from rows shaped as hourly rollups (`source`), summed by the total's keys. */
function insertTotal(total: Total, source: string, group: boolean): string {
  const columns = [...total.keys, ...total.amounts];
  const values = total.keys.map((k) => FROM_ROLLUP[k]).concat(total.amounts.map((a) => (group ? `sum(${FROM_ROLLUP[a]})` : FROM_ROLLUP[a])));
  return `INSERT INTO ${total.table} (${columns.join(', ')}) SELECT ${values.join(', ')} FROM ${source} WHERE ${total.where ?? 'true'}
    ${group ? `GROUP BY ${total.keys.map((k) => FROM_ROLLUP[k]).join(', ')}` : ''}`;
}

/** The trigger's statements: the closed job (`NEW` = its ledger row) added to its hourly rollup and its totals. */
function triggerStatements(dialect: Dialect): string[] {
  const closed = `${rollupSelect(dialect, 'NEW')} FROM jobs j WHERE j.id = NEW.job_id`;
  if (dialect === 'sqlite') {
    const totals = TOTALS.map((t) => `${insertTotal(t, `(${closed}) AS c`, false)} ${upsertTotal(t)};`);
    // `AND true`: SQLite needs a WHERE before ON CONFLICT in INSERT … SELECT to parse the upsert.
    return [
      'DROP TRIGGER usage_rollup_on_close',
      `CREATE TRIGGER usage_rollup_on_close AFTER INSERT ON ledger
       WHEN NEW.kind IN ('settle', 'refund') AND NEW.job_id IS NOT NULL
       BEGIN
         INSERT INTO usage_rollups ${COLUMNS} ${closed} AND true ${UPSERT};
         ${totals.join('\n')}
       END`,
    ];
  }
  // One statement: the job is read once. The trigger (migration 090) calls the function by name.
  const totals = TOTALS.map((t, i) => `t${i} AS (${insertTotal(t, 'c', false)} ${upsertTotal(t)})`);
  return [
    `CREATE OR REPLACE FUNCTION usage_rollup_on_close() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       WITH c AS (${closed}), ${totals.join(', ')}
       INSERT INTO usage_rollups ${COLUMNS} SELECT * FROM c ${UPSERT};
       RETURN NULL;
     END $$`,
  ];
}

export function dashboardUsageTotalsMigration(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      for (const total of TOTALS) {
        let table = db.schema.createTable(total.table);
        for (const key of total.keys) table = table.addColumn(key, key === 'hour' || key === 'day' ? 'bigint' : 'text', (c) => c.notNull());
        for (const amount of total.amounts) table = table.addColumn(amount, 'bigint', (c) => c.notNull());
        await table
          .addPrimaryKeyConstraint(`${total.table}_pk`, total.keys as never[])
          // SQLite: rows stored in key order, so a range of hours or days is one sequential read.
          .$call((t) => (dialect === 'sqlite' ? t.modifyEnd(sql`without rowid`) : t))
          .execute();
        // Hours and days rolled up before this migration.
        await sql.raw(insertTotal(total, 'usage_rollups', true)).execute(db);
      }
      for (const statement of triggerStatements(dialect)) await sql.raw(statement).execute(db);
      await db.schema.dropIndex('usage_rollups_account').execute();
      await db.schema.createIndex('usage_rollups_key').on('usage_rollups').columns(['key_id', 'hour']).execute();
      await db.schema.dropIndex('jobs_account').execute();
      // The request log filtered by a rare status: without it, no canceled job at all meant a walk over the whole log.
      // Written only for failed and canceled jobs. (`processing` finds its few rows through jobs_open.)
      await sql`CREATE INDEX jobs_log_status ON jobs (status, created_at, id) WHERE status = 'failed' OR status = 'canceled'`.execute(db);
    },
  };
}
