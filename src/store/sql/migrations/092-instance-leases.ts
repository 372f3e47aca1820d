/**
 * Migration 092: process leases (docs/decisions.md "Process leases"). Each gateway process's
 * row gets the database time until which it is taken to be alive (`lease_until`, renewed by
 * the process) and where its pid means something (`pid_scope`: boot id and pid namespace).
 * `jobs.lease_until` (migration 003, never written by any release) stays: processes of the
 * previous release still name it while a rolling upgrade runs; a later migration may drop it.
 */
import type { Kysely, Migration } from 'kysely';

export const instanceLeasesMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('gateway_instances').addColumn('lease_until', 'bigint').execute();
    await db.schema.alterTable('gateway_instances').addColumn('pid_scope', 'text').execute();
  },
};
