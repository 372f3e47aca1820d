/** Reading jobs (JobStore): a job by id, an account's jobs newest first. */
import type { Kysely, Selectable } from 'kysely';
import type { JobAttempt, JobKind, JobStatus, UsageUnits } from '../money-contract.ts';
import type { JobRecord, JobStore } from '../types.ts';
import type { Database, JobsTable } from './tables.ts';

export class SqlJobs implements JobStore {
  /** `inFlight`: a run the money engine holds in memory and has not recorded (it has no row yet). */
  constructor(private readonly db: Kysely<Database>, private readonly inFlight: (id: string) => JobRecord | undefined = () => undefined) {}

  async getJob(id: string): Promise<JobRecord | undefined> {
    const unrecorded = this.inFlight(id);
    if (unrecorded !== undefined) return unrecorded;
    const row = await this.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toJob(row);
  }

  async listJobs(accountId: string, options: { limit: number; before?: number }): Promise<JobRecord[]> {
    let query = this.db.selectFrom('jobs').selectAll().where('account_id', '=', accountId);
    if (options.before !== undefined) query = query.where('created_at', '<', options.before);
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(options.limit).execute();
    return rows.map(toJob);
  }
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
    attempts: parsed(row.attempts) as JobAttempt[] | null,
    errorCode: row.error_code,
    clientAddress: row.client_address,
    createdAt: Number(row.created_at),
    finishedAt: row.finished_at === null ? null : Number(row.finished_at),
  };
}
