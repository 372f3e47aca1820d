/**
 * The one update by which a process adopts the running jobs of gone processes that their
 * provider has taken (media jobs, fine-tuning jobs): `jobs.instance_id` moves to the
 * adopter for every processing job of a gone owner among `taken` — and, with a clock
 * reading of the sweep, only where the owner's lease had run out by then (so a live
 * process never loses a run).
 */
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { LEASE_UNTIL } from './leases.ts';
import type { Database } from './tables.ts';

/** The `jobs.status` of a job still held. */
export const RUNNING = 'processing';

export async function moveRunningJobs<DB extends Database>(
  db: Kysely<DB>,
  taken: SelectQueryBuilder<DB, keyof DB & string, { job_id: string }>,
  goneInstanceIds: string[],
  owner: string,
  ownerLeaseExpiredAt?: number,
): Promise<void> {
  const base = db as unknown as Kysely<Database>;
  let update = base
    .updateTable('jobs')
    .set({ instance_id: owner })
    .where('status', '=', RUNNING)
    .where('instance_id', 'in', goneInstanceIds)
    .where('id', 'in', taken as unknown as SelectQueryBuilder<Database, 'jobs', { job_id: string }>);
  if (ownerLeaseExpiredAt !== undefined) {
    update = update.where(({ not, exists, selectFrom }) => not(exists(selectFrom('gateway_instances as i').select('i.id')
      .whereRef('i.id', '=', 'jobs.instance_id').where(sql<number>`${sql.raw(LEASE_UNTIL)}`, '>', ownerLeaseExpiredAt))));
  }
  await update.execute();
}
