/**
 * Migration 136 (issue 32): the request detail view lists the ledger rows of one job. Without an
 * index that is a walk over the whole ledger (or the account's part of it, millions of rows for a
 * busy account); `ledger_job` finds them directly. Partial: top-ups, grants and payment refunds
 * (no job) are not written to it. docs/operations.md "The dashboard's queries and their indexes".
 */
import { type Kysely, type Migration, sql } from 'kysely';

export const ledgerJobMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createIndex('ledger_job').on('ledger').column('job_id').where(sql.ref('job_id'), 'is not', null).execute();
  },
};
