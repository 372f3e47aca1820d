/**
 * Jobs: the money path (MoneyStore, through the one movement implementation), reading
 * jobs (JobStore), and the processes that own running jobs (InstanceStore).
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { HoldResult, JobKind, JobStatus, NewHold, Refund, Settlement, UsageUnits } from '../money-contract.ts';
import type { InstanceRecord, InstanceStore, JobRecord, JobStore, MoneyStore, ProcessIdentity } from '../types.ts';
import type { MoneyEngine } from './money-plan.ts';
import { closeMovement, holdMovement, isTrialFailure, LEASE_UNTIL, leanHoldMovement, NEEDS_FULL_HOLD, type Closed, type Closing } from './money-sql.ts';
import type { Database, Dialect, JobsTable } from './tables.ts';

/** At most this many hints of the full hold are kept; then they start again. */
const NEEDS_FULL_HOLD_REMEMBERED = 10_000;
const NEEDS_FULL_HOLD_FOR_MS = 60_000;

export class SqlJobs implements MoneyStore, JobStore, InstanceStore {
  /** The account of each job this process holds: its settle or refund shares that account's group commit. */
  private readonly accountOfJob = new Map<string, string>();
  /** Key families (or accounts, for runs without a key) whose hold needed the full movement, until when to go straight to it (a hint only). */
  private readonly needsFullHold = new Map<string, number>();
  /** Processes that registered through this store (a renewal that finds no live lease then is a lapse). */
  private readonly registered = new Set<string>();

  constructor(private readonly db: Kysely<Database>, private readonly money: MoneyEngine, private readonly dialect: Dialect) {}

  async hold(hold: NewHold): Promise<HoldResult> {
    let result: HoldResult;
    try {
      result = await this.runHold(hold);
    } catch (error) {
      // Idempotent by job id: a hold retried after its commit was lost (the connection broke) finds its job.
      const job = isUniqueViolation(error) ? await this.getJob(hold.jobId) : undefined;
      if (job?.accountId !== hold.accountId || job.held !== hold.amount) throw error;
      result = { ok: true };
    }
    if (result.ok) this.accountOfJob.set(hold.jobId, hold.accountId);
    return result;
  }

  /**
   * Where idle steps cost (PostgreSQL), the lean hold first, unless this key family or account needed the full one
   * last time; the lean hold writes nothing when it does not apply, and the full one then checks everything.
   */
  private async runHold(hold: NewHold): Promise<HoldResult> {
    const counter = hold.keyFamilyId ?? hold.accountId;
    if (!this.money.skipsIdleSteps && !((this.needsFullHold.get(counter) ?? 0) > hold.at)) {
      const lean = await this.money.run(leanHoldMovement, hold, hold.accountId);
      if (lean !== NEEDS_FULL_HOLD) return lean;
      if (this.needsFullHold.size >= NEEDS_FULL_HOLD_REMEMBERED) this.needsFullHold.clear();
      // A key whose limits are removed, or an account that buys credits, goes lean again after a while.
      this.needsFullHold.set(counter, hold.at + NEEDS_FULL_HOLD_FOR_MS);
    }
    return this.money.run(holdMovement, hold, hold.accountId);
  }

  async settle(jobId: string, settlement: Settlement): Promise<number> {
    const closed = await this.close({
      jobId, refund: false, status: settlement.status, cost: settlement.cost, usage: settlement.usage,
      output: settlement.output ?? null, errorCode: null, at: settlement.at, failure: false,
    });
    return closed.charged;
  }

  async refund(jobId: string, refund: Refund): Promise<boolean> {
    return (await this.close({ jobId, ...refunded(refund), failure: isTrialFailure(refund.status, refund.errorCode) })).closed;
  }

  private close(closing: Closing, lane = this.accountOfJob.get(closing.jobId)): Promise<Closed> {
    this.accountOfJob.delete(closing.jobId);
    return this.money.run(closeMovement, closing, lane);
  }

  async getJob(id: string): Promise<JobRecord | undefined> {
    const row = await this.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toJob(row);
  }

  async listJobs(accountId: string, options: { limit: number; before?: number }): Promise<JobRecord[]> {
    let query = this.db.selectFrom('jobs').selectAll().where('account_id', '=', accountId);
    if (options.before !== undefined) query = query.where('created_at', '<', options.before);
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(options.limit).execute();
    return rows.map(toJob);
  }

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
      jobs.map((job) => this.close({ jobId: job.id, ...refunded(refund), failure: false, ...(ownerLeaseExpiredAt === undefined ? {} : { ownerLeaseExpiredAt }) }, job.account_id)),
    );
    return closed.filter((c) => c.closed).length;
  }
}

function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

function refunded(refund: Refund): Omit<Closing, 'jobId' | 'failure'> {
  return { refund: true, status: refund.status, cost: 0, usage: null, output: null, errorCode: refund.errorCode, at: refund.at };
}

function parsed(json: string | null): unknown {
  return json === null ? null : JSON.parse(json);
}

function toJob(row: Selectable<JobsTable>): JobRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    keyId: row.key_id,
    keyFamilyId: row.key_family_id,
    kind: row.kind as JobKind,
    model: row.model,
    status: row.status as JobStatus,
    held: Number(row.held),
    cost: row.cost === null ? null : Number(row.cost),
    usage: parsed(row.usage) as UsageUnits | null,
    output: parsed(row.output),
    errorCode: row.error_code,
    clientAddress: row.client_address,
    createdAt: Number(row.created_at),
    finishedAt: row.finished_at === null ? null : Number(row.finished_at),
  };
}
