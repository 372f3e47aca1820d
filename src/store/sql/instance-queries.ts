/**
 * The processes that own running jobs (InstanceStore): leases on the database's clock, and the
 * refund of the runs of processes that are gone, through the money path's close.
 */
import { sql, type Kysely } from 'kysely';
import type { Refund } from '../money-contract.ts';
import type { InstanceRecord, InstanceStore, ProcessIdentity } from '../types.ts';
import { LEASE_UNTIL } from './leases.ts';
import { refunded, type SqlMoney } from './money/money-store.ts';
import type { Database, Dialect } from './tables.ts';

export class SqlInstances implements InstanceStore {
  /** Processes that registered through this store (a renewal that finds no live lease then is a lapse). */
  private readonly registered = new Set<string>();

  constructor(private readonly db: Kysely<Database>, private readonly money: SqlMoney, private readonly dialect: Dialect) {}

  async renewLease(instance: ProcessIdentity, leaseMs: number): Promise<{ now: number; lapsed: boolean }> {
    const before = await this.db.selectFrom('gateway_instances as i').select(sql<number>`${sql.raw(LEASE_UNTIL)}`.as('until'))
      .where('i.id', '=', instance.id).executeTakeFirst();
    const now = await this.databaseNow();
    const values = { heartbeat_at: now, lease_until: now + leaseMs };
    await this.db
      .insertInto('gateway_instances')
      .values({ id: instance.id, host: instance.host, pid: instance.pid, pid_scope: instance.pidScope, ...values })
      .onConflict((oc) => oc.column('id').doUpdateSet(values))
      .execute();
    const renewed = this.registered.has(instance.id);
    this.registered.add(instance.id);
    return { now, lapsed: renewed && (before === undefined || Number(before.until) <= now) };
  }

  /** The database's clock in Unix milliseconds (SQLite lives on this host: its clock is the host's, the one every process on it reads). */
  private async databaseNow(): Promise<number> {
    if (this.dialect === 'sqlite') return Date.now();
    const { rows } = await sql<{ now: string }>`SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS now`.execute(this.db);
    return Number(rows[0]?.now);
  }

  async listInstances(): Promise<InstanceRecord[]> {
    const rows = await this.db.selectFrom('gateway_instances as i').selectAll().select(sql<number>`${sql.raw(LEASE_UNTIL)}`.as('until')).execute();
    return rows.map((r) => ({ id: r.id, host: r.host, pid: Number(r.pid), pidScope: r.pid_scope, leaseUntil: Number(r.until) }));
  }

  async removeInstances(ids: string[], expiredAt?: number): Promise<void> {
    if (ids.length === 0) return;
    let query = this.db.deleteFrom('gateway_instances as i').where('i.id', 'in', ids);
    if (expiredAt !== undefined) query = query.where(sql<number>`${sql.raw(LEASE_UNTIL)}`, '<=', expiredAt);
    await query.execute();
  }

  async runningJobOwners(): Promise<string[]> {
    const rows = await this.db.selectFrom('jobs').select('instance_id').distinct().where('status', '=', 'processing').execute();
    return rows.map((r) => r.instance_id);
  }

  async refundJobsOf(instanceIds: string[], at: number, ownerLeaseExpiredAt?: number): Promise<number> {
    if (instanceIds.length === 0) return 0;
    const jobs = await this.db
      .selectFrom('jobs')
      .select(['id', 'account_id'])
      .where('status', '=', 'processing')
      .where('instance_id', 'in', instanceIds)
      .execute();
    const refund: Refund = { status: 'failed', errorCode: 'internal_error', at };
    const closed = await Promise.all(
      jobs.map((job) => this.money.close({ jobId: job.id, ...refunded(refund), failure: false, ...(ownerLeaseExpiredAt === undefined ? {} : { ownerLeaseExpiredAt }) }, job.account_id)),
    );
    return closed.filter((c) => c.closed).length;
  }
}
