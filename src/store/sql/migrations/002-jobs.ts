/**
 * Migration 002: runs (jobs) with their money state, and the live gateway processes that own
 * running jobs, as the first release shipped them: frozen.
 */
import { type Kysely, type Migration, sql } from 'kysely';

export const jobsMigration: Migration = {
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
