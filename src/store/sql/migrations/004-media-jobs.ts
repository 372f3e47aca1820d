/**
 * Migration 004: the media job table beside `jobs` (src/store/media-jobs.ts). Standalone so
 * it can be re-applied on any store with a `jobs` table: it only adds a table keyed by job id.
 * Numbered 004 to run after the store rewrite's 003 (migrations run in name order).
 */
import { type Kysely, type Migration } from 'kysely';

export const mediaJobsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('media_jobs')
      .addColumn('job_id', 'text', (c) => c.primaryKey())
      .addColumn('plan', 'text', (c) => c.notNull())
      // JSON array; '[]' until the host took the run. Non-empty = resumed after a crash, never refunded.
      .addColumn('prediction_ids', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('outputs', 'text')
      .addColumn('usage', 'text')
      .addColumn('error_code', 'text')
      .addColumn('error_message', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
