/**
 * Migration 003: money with limits. Counters the money path checks on locked rows (the account's
 * month of settled charges and trial logs, each key family's day and month usage), job records in
 * the contract's terms (status processing/succeeded/failed/canceled, usage as generic units), trial
 * runs per client address, limit notifications and the e-mail outbox. Databases made by 001/002
 * upgrade in place: their rows are carried. Frozen: what it needs of the code of its day is copied
 * below, so that later changes to that code never change what this migration does.
 */
import { type Kysely, type Migration, sql } from 'kysely';
import type { Dialect } from '../tables.ts';

/** The trial rule "runs in 24 hours" of its day: the size of the carried log. */
const MAX_RUNS_PER_DAY = 5;
/** Refunds that were the gateway's own fault then (not a trial failure). */
const GATEWAY_FAULTS = new Set(['internal_error', 'model_unavailable']);

function startOfUtcDay(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
}

function startOfUtcMonth(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

function isTrialFailure(status: string, errorCode: string | null): boolean {
  return status === 'failed' && errorCode !== null && !GATEWAY_FAULTS.has(errorCode);
}

/** The trial log as that release wrote it: 13-digit start times, newest first, at most `size`. */
function runLog(times: readonly number[], size: number): string {
  return [...times].sort((a, b) => b - a).slice(0, size).map((at) => String(at).padStart(13, '0')).join('');
}

export function moneyLimitsMigration(dialect: Dialect): Migration {
  const serial = (db: Kysely<unknown>, table: string) =>
    db.schema.createTable(table).addColumn('id', dialect === 'postgres' ? 'bigserial' : 'integer', (c) => c.primaryKey());
  return {
    async up(db: Kysely<unknown>) {
      const now = Date.now();
      const day = startOfUtcDay(now);
      const month = startOfUtcMonth(now);

      // Jobs in the contract's terms.
      await db.schema.alterTable('jobs').addColumn('usage', 'text').execute();
      await db.schema.alterTable('jobs').addColumn('output', 'text').execute();
      await db.schema.alterTable('jobs').addColumn('client_address', 'text').execute();
      await db.schema.alterTable('jobs').addColumn('counts_key', 'integer', (c) => c.notNull().defaultTo(1)).execute();
      await db.schema.alterTable('jobs').addColumn('lease_until', 'bigint').execute();
      await sql`UPDATE jobs SET usage = '{"prompt_tokens":' || prompt_tokens || ',"completion_tokens":' || completion_tokens || '}'
                WHERE prompt_tokens IS NOT NULL AND completion_tokens IS NOT NULL`.execute(db);
      await sql`UPDATE jobs SET status = 'processing' WHERE status = 'running'`.execute(db);
      await sql`UPDATE jobs SET status = 'canceled' WHERE status = 'client_closed' OR (status = 'failed' AND error_code = 'client_closed_request')`.execute(db);
      await sql`UPDATE jobs SET cost = 0 WHERE cost IS NULL AND status <> 'processing'`.execute(db);
      await db.schema.dropIndex('jobs_running').execute();
      await db.schema.dropIndex('jobs_family').execute();
      await db.schema.alterTable('jobs').dropColumn('prompt_tokens').execute();
      await db.schema.alterTable('jobs').dropColumn('completion_tokens').execute();
      await db.schema.createIndex('jobs_open').on('jobs').column('instance_id').where(sql.ref('status'), '=', 'processing').execute();
      await db.schema.createIndex('jobs_account').on('jobs').columns(['account_id', 'created_at']).execute();

      // The account's counters: settled charges this month (spending limit), the trial logs.
      await db.schema.alterTable('accounts').addColumn('month_start', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('accounts').addColumn('month_settled', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('accounts').addColumn('trial_runs', 'text', (c) => c.notNull().defaultTo('')).execute();
      await db.schema.alterTable('accounts').addColumn('trial_failures', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await sql`UPDATE accounts SET month_start = ${month}, month_settled = COALESCE((SELECT SUM(l.amount) FROM ledger l
                WHERE l.account_id = accounts.id AND l.kind = 'settle' AND l.created_at >= ${month}), 0)`.execute(db);
      await carryTrialState(db);

      // Each key family's usage in the current day and month: open holds at the amount held, settled at cost, refunded at 0.
      // (The hold locks one of these rows with the account row.)
      await db.schema
        .createTable('key_families')
        .addColumn('family_id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('day_start', 'bigint', (c) => c.notNull())
        .addColumn('day_used', 'bigint', (c) => c.notNull())
        .addColumn('month_start', 'bigint', (c) => c.notNull())
        .addColumn('month_used', 'bigint', (c) => c.notNull())
        .execute();
      const usedSince = (since: number) => sql`COALESCE((SELECT SUM(CASE WHEN j.status = 'processing' THEN j.held ELSE COALESCE(j.cost, 0) END)
        FROM jobs j WHERE j.key_family_id = k.family_id AND j.created_at >= ${since}), 0)`;
      await sql`INSERT INTO key_families (family_id, account_id, day_start, day_used, month_start, month_used)
                SELECT k.family_id, MIN(k.account_id), ${day}, ${usedSince(day)}, ${month}, ${usedSince(month)}
                FROM api_keys k GROUP BY k.family_id`.execute(db);
      // Each account's own counter row, for runs without a key.
      await sql`INSERT INTO key_families (family_id, account_id, day_start, day_used, month_start, month_used)
                SELECT id, id, 0, 0, 0, 0 FROM accounts`.execute(db);

      await db.schema
        .createTable('trial_addresses')
        .addColumn('address', 'text', (c) => c.primaryKey())
        .addColumn('runs', 'text', (c) => c.notNull())
        .execute();

      await serial(db, 'notifications')
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('key_id', 'text')
        .addColumn('key_family_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('limit_period', 'text', (c) => c.notNull())
        .addColumn('period_start', 'bigint', (c) => c.notNull())
        .addColumn('threshold', 'real', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        // At most once per key family, alert, limit and period, whichever process inserts it.
        .addUniqueConstraint('notifications_once', ['key_family_id', 'kind', 'limit_period', 'period_start'])
        .execute();
      await db.schema.createIndex('notifications_account').on('notifications').columns(['account_id', 'id']).execute();

      await serial(db, 'mail_outbox')
        .addColumn('notification_id', 'bigint', (c) => c.notNull().unique().references('notifications.id'))
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
        .addColumn('lease_owner', 'text')
        .addColumn('lease_until', 'bigint')
        .addColumn('first_claimed_at', 'bigint')
        .addColumn('sent_at', 'bigint')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('mail_outbox_due').on('mail_outbox').columns(['status', 'next_attempt_at']).execute();
      await db.schema.createIndex('mail_outbox_account').on('mail_outbox').columns(['account_id', 'first_claimed_at']).execute();
    },
  };
}

/**
 * The trial logs of accounts without a purchase, from their jobs: the latest run start times, and the
 * failures since the last billed run (a client abort neither counts nor breaks the run of failures).
 */
async function carryTrialState(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ account_id: string; created_at: number | string; status: string; error_code: string | null }>`
    SELECT j.account_id, j.created_at, j.status, j.error_code FROM jobs j JOIN accounts a ON a.id = j.account_id
    WHERE a.has_purchase = 0 ORDER BY j.account_id, j.finished_at DESC`.execute(db);
  const byAccount = new Map<string, typeof rows>();
  for (const row of rows) byAccount.set(row.account_id, [...(byAccount.get(row.account_id) ?? []), row]);
  for (const [accountId, jobs] of byAccount) {
    const log = runLog(jobs.map((j) => Number(j.created_at)), MAX_RUNS_PER_DAY);
    let failures = 0;
    for (const job of jobs) {
      if (job.status === 'processing') continue;
      if (job.error_code === null) break;
      if (isTrialFailure(job.status, job.error_code)) failures++;
    }
    await sql`UPDATE accounts SET trial_runs = ${log}, trial_failures = ${failures} WHERE id = ${accountId}`.execute(db);
  }
}
