/**
 * The close write set (docs/money-path.md, "The close write set"): a run reserved in memory and
 * never recorded leaves everything behind in one movement of the group commit — the job row,
 * once and complete; the account's balance, month and trial failure count; the key family's
 * usage by the cost; the ledger's hold and closing rows; the usage roller's pending row.
 * Five statements, where the durable hold and close were eleven.
 */
import { startOfUtcMonth } from '../../../shared/time.ts';
import { perTable, PERIODS, type HoldLimit } from '../../limits.ts';
import type { NewHold } from '../../money-contract.ts';
import { ERROR_MESSAGE_MAX, type Closed, type Closing } from './close-movement.ts';
import { countedSets, periodParams } from './limit-sql.ts';
import type { Movement, Params } from './movement.ts';

export interface UnrecordedClose {
  hold: NewHold;
  closing: Closing;
}

/** What a close charges: the cost capped at the hold, whole micro-credits; nothing on a refund. */
export function chargeOf(closing: Pick<Closing, 'refund' | 'cost'>, held: number): number {
  if (closing.refund || !(closing.cost > 0)) return 0;
  return Math.min(Math.ceil(closing.cost), held);
}

/** The close write set for the key family counters of these limits (built once per table). */
export const closeWriteSetFor = perTable((limits: readonly HoldLimit[]): Movement<UnrecordedClose, Closed> => buildWriteSet(limits));

function buildWriteSet(limits: readonly HoldLimit[]): Movement<UnrecordedClose, Closed> {
  const periods = periodParams(limits);
  const counted = countedSets(limits);
  return {
  name: 'close_write_set',
  params: {
    job: 'text', account: 'text', key: 'text', family: 'text', counter: 'text', kind: 'text', model: 'text', held: 'bigint', created: 'bigint',
    instance: 'text', address: 'text', counts: 'integer', status: 'text', cost: 'bigint', usage: 'text', output: 'text', code: 'text', message: 'text', attempts: 'text',
    at: 'bigint', closeMonth: 'bigint', refund: 'integer', failure: 'integer', amount: 'bigint',
    ...Object.fromEntries(periods.map((p) => [p, 'bigint'])),
  },
  steps: [
    {
      name: 'j', from: [], sql: `INSERT INTO jobs (id, account_id, key_id, key_family_id, kind, model, status, held, cost, usage, output, error_code, error_message, attempts,
  instance_id, client_address, counts_key, created_at, finished_at)
VALUES (@job, @account, @key, @family, @kind, @model, @status, @held, @cost, @usage, @output, @code, @message, @attempts, @instance, @address, @counts, @created, @at)
RETURNING cost AS j_cost`,
    },
    {
      name: 'charge', from: ['j'], sql: `UPDATE accounts SET balance = balance - @cost,
  month_settled = CASE WHEN month_start >= @closeMonth THEN month_settled ELSE 0 END + @cost,
  month_start = CASE WHEN month_start >= @closeMonth THEN month_start ELSE @closeMonth END,
  trial_failures = CASE WHEN @refund = 0 THEN 0 ELSE trial_failures + @failure END
{from} WHERE id = @account`,
    },
    ...(counted === '' ? [] : [{
      // The cost (@amount here) counts in the hold's periods, or in the counter's current ones if they began since.
      name: 'counted', from: ['j'], sql: `UPDATE key_families SET
${counted}
{from} WHERE family_id = @counter AND @counts = 1 AND @amount > 0`,
    }]),
    {
      name: 'booked', from: ['j'], sql: `INSERT INTO ledger (account_id, key_id, key_family_id, job_id, kind, amount, created_at)
VALUES (@account, @key, @family, @job, 'hold', @held, @created),
  (@account, @key, @family, @job, CASE WHEN @refund = 1 THEN 'refund' ELSE 'settle' END, CASE WHEN @refund = 1 THEN @held ELSE @cost END, @at)`,
    },
    {
      name: 'pending', from: ['j'], sql: `INSERT INTO usage_pending (job_id, kind, amount)
VALUES (@job, CASE WHEN @refund = 1 THEN 'refund' ELSE 'settle' END, @cost)`,
    },
  ],
  answer: 'j',
  flags: [],
  bind: ({ hold: h, closing: c }) => {
    const cost = chargeOf(c, h.amount);
    const params: Params = {
      job: h.jobId, account: h.accountId, key: h.keyId, family: h.keyFamilyId, counter: h.keyFamilyId ?? h.accountId, kind: h.kind,
      model: c.model ?? h.model, held: h.amount, created: h.at, instance: h.instanceId, address: h.clientAddress,
      counts: h.countsTowardKeyLimits && h.keyFamilyId !== null ? 1 : 0,
      status: c.status, cost, amount: cost, usage: c.usage === null ? null : JSON.stringify(c.usage),
      output: c.output === undefined || c.output === null ? null : JSON.stringify(c.output), code: c.errorCode,
      message: c.errorMessage === undefined || c.errorMessage === null ? null : c.errorMessage.slice(0, ERROR_MESSAGE_MAX),
      attempts: c.attempts === undefined || c.attempts === null ? null : JSON.stringify(c.attempts),
      at: c.at, closeMonth: startOfUtcMonth(c.at), refund: c.refund ? 1 : 0, failure: c.failure ? 1 : 0,
    };
    for (const p of periods) params[p] = PERIODS[p].start(h.at);
    return params;
  },
  read: ({ row }) => ({ closed: row !== undefined, charged: row === undefined ? 0 : Number(row.j_cost) }),
  };
}
