/**
 * Recording (docs/money-path.md, "Recording"): a run reserved in memory and still in flight after
 * `recordAfterMs` becomes an ordinary durable hold — the processing job, the ledger's hold row,
 * `accounts.held` and the key family's counter — so that crash recovery, the admin views and
 * GET /jobs/{id} on any process see it. No verdict: the reservation was decided when it was made.
 */
import { perTable, PERIODS, type HoldLimit } from '../../limits.ts';
import type { NewHold } from '../../money-contract.ts';
import { countedSets, periodParams } from './limit-sql.ts';
import type { Movement, Params } from './movement.ts';

/** The recording movement for the key family counters of these limits (built once per table). */
export const recordMovementFor = perTable((limits: readonly HoldLimit[]): Movement<NewHold, boolean> => buildRecord(limits));

function buildRecord(limits: readonly HoldLimit[]): Movement<NewHold, boolean> {
  const periods = periodParams(limits);
  const counted = countedSets(limits);
  return {
  name: 'record',
  params: {
    job: 'text', account: 'text', key: 'text', family: 'text', counter: 'text', kind: 'text', model: 'text', amount: 'bigint', at: 'bigint',
    instance: 'text', address: 'text', counts: 'integer', ...Object.fromEntries(periods.map((p) => [p, 'bigint'])),
  },
  steps: [
    { name: 'reserve', from: [], gate: '1 AS r_reserved', sql: `UPDATE accounts SET held = held + @amount WHERE id = @account {returning}` },
    ...(counted === '' ? [] : [{
      name: 'counted', from: ['reserve'], sql: `UPDATE key_families SET
${counted}
{from} WHERE family_id = @counter AND @counts = 1`,
    }]),
    {
      name: 'job', from: ['reserve'], sql: `INSERT INTO jobs (id, account_id, key_id, key_family_id, kind, model, status, held, instance_id, client_address, counts_key, created_at)
{values}@job, @account, @key, @family, @kind, @model, 'processing', @amount, @instance, @address, @counts, @at{/values}`,
    },
    {
      name: 'booked_hold', from: ['reserve'], sql: `INSERT INTO ledger (account_id, key_id, key_family_id, job_id, kind, amount, created_at)
{values}@account, @key, @family, @job, 'hold', @amount, @at{/values}`,
    },
  ],
  answer: 'reserve',
  flags: ['reserve'],
  bind: (h) => {
    const params: Params = {
      job: h.jobId, account: h.accountId, key: h.keyId, family: h.keyFamilyId, counter: h.keyFamilyId ?? h.accountId, kind: h.kind, model: h.model,
      amount: h.amount, at: h.at, instance: h.instanceId, address: h.clientAddress, counts: h.countsTowardKeyLimits && h.keyFamilyId !== null ? 1 : 0,
    };
    for (const p of periods) params[p] = PERIODS[p].start(h.at);
    return params;
  },
  read: ({ flags }) => flags.reserve === true,
  };
}
