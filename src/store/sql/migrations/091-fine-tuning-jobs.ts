/**
 * Migration 091: the fine-tuning job table beside `jobs` (src/store/fine-tuning-jobs.ts).
 * Only adds a table keyed by job id, so a database made by earlier main upgrades in place.
 */
import { type Kysely, type Migration } from 'kysely';

export const fineTuningJobsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('fine_tuning_jobs')
      .addColumn('job_id', 'text', (c) => c.primaryKey())
      .addColumn('plan', 'text', (c) => c.notNull())
      // Null until the provider took the job. Not null = resumed after a crash, never refunded.
      .addColumn('provider_job_id', 'text')
      .addColumn('snapshot', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
