/**
 * Migration 115: a job keeps how it was routed, `attempts` (JSON: every provider call, its
 * deployment, key place, status and why another followed; docs/operations.md "Routing"). Jobs
 * closed before it have none (null). `model` now names the model that answered.
 */
import type { Kysely, Migration } from 'kysely';

export const jobAttemptsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('jobs').addColumn('attempts', 'text').execute();
  },
};
