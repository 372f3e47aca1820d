/**
 * The durable close, written once (movement.ts says how it runs on each database): it settles
 * (bills the cost, capped at the hold) or refunds a processing job, exactly once, and corrects
 * the key family's usage from the hold to the cost.
 */
import { startOfUtcMonth } from '../../../shared/time.ts';
import type { JobAttempt, JobStatus, UsageUnits } from '../../money-contract.ts';
import { HOLD_LIMITS, perTable, type HoldLimit } from '../../limits.ts';
import { LEASE_UNTIL } from '../leases.ts';
import { uncountedSets } from './limit-sql.ts';
import type { Movement, Row, Step } from './movement.ts';

/** Refunds that are the gateway's own fault, not the run's. */
const GATEWAY_FAULTS = new Set(['internal_error', 'model_unavailable']);

/** The longest error message a job keeps (a provider's refusal is passed on at up to 500 characters, plus why). */
export const ERROR_MESSAGE_MAX = 1000;

/**
 * Trial rule "failures in a row": a run refunded as failed counts, unless the gateway caused it; a canceled
 * run (the client left) neither counts nor breaks the series; a billed run ends it.
 */
export function isTrialFailure(status: string, errorCode: string | null): boolean {
  return status === 'failed' && errorCode !== null && !GATEWAY_FAULTS.has(errorCode);
}

/** The dashboard's usage: the closed job, pending for the usage roller (usage-pending.ts). */
const PENDING_STEP: Step = {
  name: 'pending',
  from: ['j'],
  sql: `INSERT INTO usage_pending (job_id, kind, amount)
{values}@job, CASE WHEN @refund = 1 THEN 'refund' ELSE 'settle' END, CASE WHEN @refund = 1 THEN 0 ELSE :j_cost END{/values}`,
};

/** How a job ends: settled (billed) or refunded. */
export interface Closing {
  jobId: string;
  refund: boolean;
  status: Exclude<JobStatus, 'processing'>;
  /** Micro-credits; capped at the hold (0 on a refund). */
  cost: number;
  usage: UsageUnits | null;
  output: unknown;
  errorCode: string | null;
  /** The refund's message (the request detail view), at most ERROR_MESSAGE_MAX characters kept. */
  errorMessage?: string | null;
  at: number;
  /** The model that answered, when it is not the one held (a fallback); null keeps the job's model. */
  model?: string | null;
  /** The run's provider calls (routing). */
  attempts?: readonly JobAttempt[] | null;
  /** A refund that counts as a failure for the trial rule "failures in a row". */
  failure: boolean;
  /**
   * Crash recovery: the job closes only if its owner's lease had run out at this time (the database's clock),
   * or its owner has no row at all; a live owner keeps it.
   */
  ownerLeaseExpiredAt?: number;
}

export interface Closed {
  closed: boolean;
  charged: number;
}

/** The close that corrects the key family's counters of these limits (built once per table). */
export const closeMovementFor = perTable((limits) => buildClose(limits));

const buildClose = (limits: readonly HoldLimit[]): Movement<Closing, Closed> => ({
  name: 'close',
  params: {
    job: 'text', status: 'text', cost: 'bigint', usage: 'text', output: 'text', code: 'text', message: 'text', at: 'bigint', month: 'bigint', model: 'text', attempts: 'text',
    refund: 'integer', failure: 'integer', orphan: 'integer', leaseNow: 'bigint',
  },
  steps: [
    {
      // Only a processing job closes: settle and refund happen once.
      name: 'j', from: [], sql: `UPDATE jobs SET status = @status, finished_at = @at, error_code = @code, error_message = @message, usage = @usage, output = @output,
  model = COALESCE(@model, model), attempts = @attempts,
  cost = CASE WHEN @refund = 1 OR @cost < 0 THEN 0 WHEN @cost > held THEN held ELSE @cost END
WHERE id = @job AND status = 'processing' AND (@orphan = 0 OR NOT EXISTS (SELECT 1 FROM gateway_instances i
  WHERE i.id = jobs.instance_id AND ${LEASE_UNTIL} > @leaseNow))
RETURNING account_id AS j_account, key_id AS j_key, key_family_id AS j_family, held AS j_held, cost AS j_cost,
  created_at AS j_created, counts_key AS j_counts`,
    },
    {
      // Its row orders the locks on PostgreSQL: the account before the key family, as in the hold.
      name: 'charge', from: ['j'], gate: '1 AS c_charged', sql: `UPDATE accounts SET held = held - :j_held, balance = balance - :j_cost,
  month_settled = CASE WHEN month_start >= @month THEN month_settled ELSE 0 END + :j_cost,
  month_start = CASE WHEN month_start >= @month THEN month_start ELSE @month END,
  trial_failures = CASE WHEN @refund = 0 THEN 0 ELSE trial_failures + @failure END
{from} WHERE id = :j_account
{returning}`,
    },
    ...(uncountedSets(limits) === '' ? [] : [{
      // The family's usage keeps the hold until now: correct it to the charge, if the run still falls in the counted period.
      name: 'uncounted', from: ['j', 'charge'], sql: `UPDATE key_families SET
  ${uncountedSets(limits)}
{from} WHERE family_id = :j_family AND :j_counts = 1`,
    }]),
    {
      name: 'booked', from: ['j'], sql: `INSERT INTO ledger (account_id, key_id, key_family_id, job_id, kind, amount, created_at)
{values}:j_account, :j_key, :j_family, @job, CASE WHEN @refund = 1 THEN 'refund' ELSE 'settle' END,
  CASE WHEN @refund = 1 THEN :j_held ELSE :j_cost END, @at{/values}`,
    },
    // The dashboard's usage: the closed job waits for the usage roller (usage-pending.ts).
    PENDING_STEP,
  ],
  answer: 'j',
  flags: [],
  bind: (c) => ({
    job: c.jobId, status: c.status, cost: Math.ceil(c.cost), usage: c.usage === null ? null : JSON.stringify(c.usage),
    output: c.output === undefined || c.output === null ? null : JSON.stringify(c.output), code: c.errorCode,
    message: c.errorMessage === undefined || c.errorMessage === null ? null : c.errorMessage.slice(0, ERROR_MESSAGE_MAX), at: c.at,
    model: c.model ?? null, attempts: c.attempts === undefined || c.attempts === null ? null : JSON.stringify(c.attempts),
    month: startOfUtcMonth(c.at), refund: c.refund ? 1 : 0, failure: c.failure ? 1 : 0,
    orphan: c.ownerLeaseExpiredAt === undefined ? 0 : 1, leaseNow: c.ownerLeaseExpiredAt ?? 0,
  }),
  read: ({ row }: { row: Row | undefined }) => ({ closed: row !== undefined, charged: row === undefined ? 0 : Number(row.j_cost) }),
});

/** The shipped table's close. */
export const closeMovement = closeMovementFor(HOLD_LIMITS);
