/**
 * Migration 090: the admin dashboard (issue 18): hourly usage rollups and the job-log indexes.
 *
 * Rollups are written by the database itself, in the settlement's own transaction: a trigger on
 * the ledger's one closing row per job (`settle` or `refund`, DECISIONS.md "Billing") reads the
 * finished job and adds it to its (hour, account, key, model, code) row. The money path carries
 * no extra code, and whichever store code settles a job, its rollup cannot be forgotten.
 * `code` is '' for a successful run, else the job's error code (or its status when it has none).
 */
import { type Kysely, type Migration, sql } from 'kysely';

import type { Dialect } from '../tables.ts';

/**
 * A token count from the job's usage JSON (a text column, migration 003: `{"prompt_tokens":…,"completion_tokens":…}`),
 * 0 when the job has none (no usage, or units of another kind such as images).
 */
function tokens(dialect: Dialect, field: 'prompt_tokens' | 'completion_tokens'): string {
  return dialect === 'sqlite'
    ? `coalesce(json_extract(j.usage, '$.${field}'), 0)`
    : `coalesce((j.usage::json->>'${field}')::numeric::bigint, 0)`;
}

/**
 * Hour bucket, row key and amounts of a closed job, for a trigger's SELECT (`ledger` = the ledger row's alias, `j` = its job).
 * A refunded job costs 0 and counts no credits; a canceled run that was billed (settled) counts as a success.
 */
export function rollupSelect(dialect: Dialect, ledger: string): string {
  return `
  SELECT (j.created_at / 3600000) * 3600000 AS hour, j.account_id AS account_id, coalesce(j.key_id, '') AS key_id, j.model AS model,
         CASE WHEN ${ledger}.kind = 'settle' AND j.error_code IS NULL THEN '' ELSE coalesce(j.error_code, j.status) END AS code,
         1 AS requests, CASE WHEN ${ledger}.kind = 'settle' THEN ${ledger}.amount ELSE 0 END AS credits,
         ${tokens(dialect, 'prompt_tokens')} AS prompt_tokens, ${tokens(dialect, 'completion_tokens')} AS completion_tokens`;
}

export const UPSERT = `ON CONFLICT (hour, account_id, key_id, model, code) DO UPDATE SET
  requests = usage_rollups.requests + excluded.requests,
  credits = usage_rollups.credits + excluded.credits,
  prompt_tokens = usage_rollups.prompt_tokens + excluded.prompt_tokens,
  completion_tokens = usage_rollups.completion_tokens + excluded.completion_tokens`;

export const COLUMNS = '(hour, account_id, key_id, model, code, requests, credits, prompt_tokens, completion_tokens)';

function triggerStatements(dialect: Dialect): string[] {
  if (dialect === 'sqlite') {
    return [
      `CREATE TRIGGER usage_rollup_on_close AFTER INSERT ON ledger
       WHEN NEW.kind IN ('settle', 'refund') AND NEW.job_id IS NOT NULL
       BEGIN
         INSERT INTO usage_rollups ${COLUMNS}
         ${rollupSelect(dialect, 'NEW')} FROM jobs j WHERE j.id = NEW.job_id AND true
         ${UPSERT};
       END`,
    ];
  }
  return [
    `CREATE FUNCTION usage_rollup_on_close() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       INSERT INTO usage_rollups ${COLUMNS}
       ${rollupSelect(dialect, 'NEW')} FROM jobs j WHERE j.id = NEW.job_id
       ${UPSERT};
       RETURN NULL;
     END $$`,
    `CREATE TRIGGER usage_rollup_on_close AFTER INSERT ON ledger FOR EACH ROW
     WHEN (NEW.kind IN ('settle', 'refund') AND NEW.job_id IS NOT NULL)
     EXECUTE FUNCTION usage_rollup_on_close()`,
  ];
}

export function dashboardUsageMigration(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('usage_rollups')
        .addColumn('hour', 'bigint', (c) => c.notNull())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('key_id', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('code', 'text', (c) => c.notNull())
        .addColumn('requests', 'bigint', (c) => c.notNull())
        .addColumn('credits', 'bigint', (c) => c.notNull())
        .addColumn('prompt_tokens', 'bigint', (c) => c.notNull())
        .addColumn('completion_tokens', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('usage_rollups_pk', ['hour', 'account_id', 'key_id', 'model', 'code'])
        // SQLite: rows stored in key order, so a range of hours is one sequential read, not a lookup per row.
        .$call((t) => (dialect === 'sqlite' ? t.modifyEnd(sql`without rowid`) : t))
        .execute();
      await db.schema.createIndex('usage_rollups_account').on('usage_rollups').columns(['account_id', 'hour']).execute();
      // The job log: newest first by (created_at, id), alone or within one account, key, model or error code.
      await db.schema.createIndex('jobs_log').on('jobs').columns(['created_at', 'id']).execute();
      await db.schema.createIndex('jobs_log_account').on('jobs').columns(['account_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('jobs_log_key').on('jobs').columns(['key_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('jobs_log_model').on('jobs').columns(['model', 'created_at', 'id']).execute();
      await db.schema
        .createIndex('jobs_log_error')
        .on('jobs')
        .columns(['error_code', 'created_at', 'id'])
        .where(sql.ref('error_code'), 'is not', null)
        .execute();
      for (const statement of triggerStatements(dialect)) await sql.raw(statement).execute(db);
      // Jobs closed before this migration: rolled up once from the ledger's closing rows.
      await sql
        .raw(
          `INSERT INTO usage_rollups ${COLUMNS}
           SELECT hour, account_id, key_id, model, code, sum(requests), sum(credits), sum(prompt_tokens), sum(completion_tokens)
           FROM (${rollupSelect(dialect, 'l')} FROM ledger l JOIN jobs j ON j.id = l.job_id WHERE l.kind IN ('settle', 'refund')) AS closed
           GROUP BY hour, account_id, key_id, model, code`,
        )
        .execute(db);
    },
  };
}
