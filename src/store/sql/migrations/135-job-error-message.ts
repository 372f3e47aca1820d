/**
 * Migration 135 (issue 32, the dashboard's request detail): a failed or canceled job keeps the
 * message its client was answered with, and why (the provider's status, never its key), in
 * `error_message`; its code stays in `error_code`. Jobs closed before it have none (null). The
 * provider and the provider's model id are those of the job's last attempt (migration 115).
 */
import type { Kysely, Migration } from 'kysely';

export const jobErrorMessageMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('jobs').addColumn('error_message', 'text').execute();
  },
};
