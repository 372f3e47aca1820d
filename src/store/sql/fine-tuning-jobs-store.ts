/**
 * FineTuningJobStore on the SQL store (both dialects, one query path). The table is added by
 * migration 091 (migrations/091-fine-tuning-jobs.ts); `jobs` is read and its owner moved only here.
 */
import type { Kysely } from 'kysely';
import type { FineTuningJob, FineTuningJobStore } from '../fine-tuning-jobs.ts';
import type { JobStatus } from '../money-contract.ts';
import type { Database, FineTuningJobsTable } from './tables.ts';
import { moveRunningJobs, RUNNING } from './job-adoption.ts';

export class SqlFineTuningJobs implements FineTuningJobStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(jobId: string, plan: unknown, at: number): Promise<void> {
    await this.db.insertInto('fine_tuning_jobs').values({ job_id: jobId, plan: JSON.stringify(plan), provider_job_id: null, snapshot: null, created_at: at, updated_at: at }).execute();
  }

  async markStarted(jobId: string, providerJobId: string, snapshot: unknown, at: number): Promise<void> {
    await this.db.updateTable('fine_tuning_jobs').set({ provider_job_id: providerJobId, snapshot: JSON.stringify(snapshot), updated_at: at }).where('job_id', '=', jobId).execute();
  }

  async saveSnapshot(jobId: string, snapshot: unknown, at: number): Promise<void> {
    await this.db.updateTable('fine_tuning_jobs').set({ snapshot: JSON.stringify(snapshot), updated_at: at }).where('job_id', '=', jobId).execute();
  }

  async get(jobId: string): Promise<FineTuningJob | undefined> {
    const row = await this.joined().where('fine_tuning_jobs.job_id', '=', jobId).executeTakeFirst();
    return row === undefined ? undefined : toJob(row);
  }

  async list(accountId: string, options: { limit: number; after?: string }): Promise<{ jobs: FineTuningJob[]; hasMore: boolean }> {
    let query = this.joined().where('jobs.account_id', '=', accountId);
    if (options.after !== undefined) {
      const cursor = await this.db.selectFrom('jobs').select(['created_at', 'id']).where('id', '=', options.after).where('account_id', '=', accountId).executeTakeFirst();
      if (cursor !== undefined) {
        const at = Number(cursor.created_at);
        query = query.where((eb) => eb.or([eb('jobs.created_at', '<', at), eb.and([eb('jobs.created_at', '=', at), eb('jobs.id', '<', cursor.id)])]));
      }
    }
    const rows = await query.orderBy('jobs.created_at', 'desc').orderBy('jobs.id', 'desc').limit(options.limit + 1).execute();
    return { jobs: rows.slice(0, options.limit).map(toJob), hasMore: rows.length > options.limit };
  }

  async adopt(goneInstanceIds: string[], owner: string, ownerLeaseExpiredAt?: number): Promise<FineTuningJob[]> {
    if (goneInstanceIds.length === 0) return [];
    await moveRunningJobs(this.db, this.db.selectFrom('fine_tuning_jobs').select('job_id').where('provider_job_id', 'is not', null), goneInstanceIds, owner, ownerLeaseExpiredAt);
    const rows = await this.joined().where('jobs.status', '=', RUNNING).where('jobs.instance_id', '=', owner).where('fine_tuning_jobs.provider_job_id', 'is not', null).execute();
    return rows.map(toJob);
  }

  private joined() {
    return this.db
      .selectFrom('fine_tuning_jobs')
      .innerJoin('jobs', 'jobs.id', 'fine_tuning_jobs.job_id')
      .selectAll('fine_tuning_jobs')
      .select(['jobs.account_id as account_id', 'jobs.model as model', 'jobs.status as status', 'jobs.held as held', 'jobs.cost as cost', 'jobs.created_at as admitted_at', 'jobs.finished_at as finished_at', 'jobs.error_code as error_code']);
  }
}

interface JoinedRow extends FineTuningJobsTable {
  account_id: string;
  model: string;
  status: string;
  held: number;
  cost: number | null;
  admitted_at: number;
  finished_at: number | null;
  error_code: string | null;
}

function toJob(row: JoinedRow): FineTuningJob {
  return {
    record: {
      jobId: row.job_id,
      plan: JSON.parse(row.plan) as unknown,
      providerJobId: row.provider_job_id,
      snapshot: row.snapshot === null ? null : (JSON.parse(row.snapshot) as unknown),
      createdAt: Number(row.created_at),
      updatedAt: Number(row.updated_at),
    },
    money: {
      accountId: row.account_id,
      model: row.model,
      status: row.status as JobStatus,
      held: Number(row.held),
      cost: row.cost === null ? null : Number(row.cost),
      createdAt: Number(row.admitted_at),
      finishedAt: row.finished_at === null ? null : Number(row.finished_at),
      errorCode: row.error_code,
    },
  };
}
