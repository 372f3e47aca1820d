/**
 * MediaJobStore on the SQL store (both dialects, one query path). The table is added by
 * migration 004 (migrations/004-media-jobs.ts); `jobs` is read and its owner moved only here.
 */
import type { Kysely, Selectable } from 'kysely';
import type { AdoptedMediaJob, MediaJobOutcome, MediaJobRecord, MediaJobStore } from '../media-jobs.ts';
import { moveRunningJobs, RUNNING } from './job-adoption.ts';
import type { Database, MediaJobsTable } from './tables.ts';

const NO_PREDICTIONS = '[]';

export class SqlMediaJobs implements MediaJobStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(jobId: string, plan: unknown, at: number): Promise<void> {
    await this.db
      .insertInto('media_jobs')
      .values({ job_id: jobId, plan: JSON.stringify(plan), prediction_ids: NO_PREDICTIONS, outputs: null, usage: null, error_code: null, error_message: null, created_at: at, updated_at: at })
      .execute();
  }

  async markProcessing(jobId: string, predictionIds: string[], at: number): Promise<void> {
    await this.db.updateTable('media_jobs').set({ prediction_ids: JSON.stringify(predictionIds), updated_at: at }).where('job_id', '=', jobId).execute();
  }

  async recordOutcome(jobId: string, outcome: MediaJobOutcome, at: number): Promise<void> {
    await this.db
      .updateTable('media_jobs')
      .set({
        outputs: outcome.outputs === null ? null : JSON.stringify(outcome.outputs),
        usage: outcome.usage === null ? null : JSON.stringify(outcome.usage),
        error_code: outcome.errorCode,
        error_message: outcome.errorMessage,
        updated_at: at,
      })
      .where('job_id', '=', jobId)
      .execute();
  }

  async get(jobId: string): Promise<MediaJobRecord | undefined> {
    const row = await this.db.selectFrom('media_jobs').selectAll().where('job_id', '=', jobId).executeTakeFirst();
    return row === undefined ? undefined : toRecord(row);
  }

  async adopt(goneInstanceIds: string[], owner: string, ownerLeaseExpiredAt?: number): Promise<AdoptedMediaJob[]> {
    if (goneInstanceIds.length === 0) return [];
    await moveRunningJobs(this.db, this.db.selectFrom('media_jobs').select('job_id').where('prediction_ids', '<>', NO_PREDICTIONS), goneInstanceIds, owner, ownerLeaseExpiredAt);
    const rows = await this.db
      .selectFrom('media_jobs')
      .innerJoin('jobs', 'jobs.id', 'media_jobs.job_id')
      .selectAll('media_jobs')
      .select(['jobs.held as held', 'jobs.created_at as admitted_at'])
      .where('jobs.status', '=', RUNNING)
      .where('jobs.instance_id', '=', owner)
      .where('media_jobs.prediction_ids', '<>', NO_PREDICTIONS)
      .execute();
    return rows.map((row) => ({ record: toRecord(row), held: Number(row.held), admittedAt: Number(row.admitted_at) }));
  }
}

function toRecord(row: Selectable<MediaJobsTable>): MediaJobRecord {
  return {
    jobId: row.job_id,
    plan: JSON.parse(row.plan) as unknown,
    predictionIds: JSON.parse(row.prediction_ids) as string[],
    outputs: row.outputs === null ? null : (JSON.parse(row.outputs) as string[]),
    usage: row.usage === null ? null : (JSON.parse(row.usage) as Record<string, number>),
    errorCode: row.error_code,
    errorMessage: row.error_message,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}
