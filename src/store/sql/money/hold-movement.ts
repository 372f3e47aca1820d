/**
 * The durable hold, written once (movement.ts says how it runs on each database): it reserves
 * credits with every admission check inside it. Every limit is checked against a row the
 * movement locks — the account (credits, spending limit, trial rules), the key family's usage
 * counter, the client address's trial log — never against a count over jobs, which on
 * PostgreSQL would miss a concurrent hold the statement waited for.
 */
import { checkedLimits, HOLD_LIMITS, perTable, PERIODS, type HoldLimit } from '../../limits.ts';
import { TRIAL_RULES, type HoldResult, type NewHold } from '../../money-contract.ts';
import { alertSelects, countedSets, keyLimited, readingColumns, readingNames, refusalCase, warningColumns, periodParams } from './limit-sql.ts';
import type { Movement, Outcome, Params, Step } from './movement.ts';
import { logIsFull, logPushed, runStamp } from './run-log.ts';

const DAY_MS = 86_400_000;
const T = TRIAL_RULES;

/**
 * Reads — and on PostgreSQL locks, account row first, then the key family's counter — what the checks need
 * (each limit's ceiling and usage: limit-sql.ts), and decides. Every account has a counter row of its own
 * (family id = account id) for runs without a key, so the join is an inner one and one statement locks both rows.
 */
const verdictWith = (limits: readonly HoldLimit[], refusal: string) => `SELECT a_purchase, f_threshold, v_counts, ${readingNames(limits)}, ${refusal} AS v_refusal,
  CASE WHEN a_purchase = 0 AND @address IS NOT NULL THEN 1 ELSE 0 END AS v_needs_address,
  ${[...warningColumns(limits), ''].join(',\n  ')}  CASE WHEN ${keyLimited(limits)} THEN 1 ELSE 0 END AS v_limited,
  CASE WHEN f_alerts = 1 AND a_billing = 1 AND a_email IS NOT NULL THEN 1 ELSE 0 END AS v_mail
FROM (
  SELECT a.has_purchase AS a_purchase, a.billing_emails AS a_billing, a.email AS a_email,
    k.warning_threshold AS f_threshold, k.email_alerts AS f_alerts, @counts AS v_counts,
    ${readingColumns(limits)}
  FROM accounts a JOIN key_families f ON f.family_id = @counter LEFT JOIN api_keys k ON k.id = @key
  WHERE a.id = @account {lock:a, f}
) locked`;

/** The reservation, when every check passed (and `condition`); what follows reads its row. */
const reserve = (condition: string): Step => ({
  name: 'reserve', from: ['v'], gate: '1 AS r_reserved', sql: `UPDATE accounts SET held = held + @amount,
  trial_runs = CASE WHEN :a_purchase = 0 THEN ${logPushed('trial_runs', T.maxRunsPerDay, '@stamp')} ELSE trial_runs END
{from} WHERE id = @account AND :v_refusal IS NULL AND ${condition}
{returning}`,
});

/** What a reservation writes: the key family's usage, the job and the ledger's hold row. */
const reserved = (limits: readonly HoldLimit[]): Step[] => [
  ...(countedSets(limits) === '' ? [] : [{
    name: 'counted', from: ['reserve', 'v'], when: 'v_counts', sql: `UPDATE key_families SET
${countedSets(limits)}
{from} WHERE family_id = @counter AND {when}`,
  }]),
  {
    name: 'job', from: ['reserve'], sql: `INSERT INTO jobs (id, account_id, key_id, key_family_id, kind, model, status, held, instance_id, client_address, counts_key, created_at)
{values}@job, @account, @key, @family, @kind, @model, 'processing', @amount, @instance, @address, @counts, @at{/values}`,
  },
  {
    name: 'booked_hold', from: ['reserve'], sql: `INSERT INTO ledger (account_id, key_id, key_family_id, job_id, kind, amount, created_at)
{values}@account, @key, @family, @job, 'hold', @amount, @at{/values}`,
  },
];

/**
 * A hold as the movements take it: on SQLite, what this process reserves in memory (Reservations) is added to the
 * account's open holds and the key family's usage (`Reading.reserved`); a function is read when the verdict's
 * statement binds, inside the group commit, so the hold counts every reservation made before it runs.
 */
export interface HoldInput extends NewHold {
  reserved?: number | (() => number);
  reservedUse?: number | (() => number);
}

/** The hold's parameters, with one per period the limits count in (that period's start). */
function holdParams(limits: readonly HoldLimit[]): Movement<HoldInput, HoldResult>['params'] {
  return {
    job: 'text', account: 'text', key: 'text', family: 'text', counter: 'text', kind: 'text', model: 'text', amount: 'bigint', at: 'bigint',
    instance: 'text', address: 'text', counts: 'integer', since: 'bigint', stamp: 'text', reserved: 'bigint', reservedUse: 'bigint',
    ...Object.fromEntries(periodParams(limits).map((p) => [p, 'bigint'])),
  };
}

const binder = (limits: readonly HoldLimit[]) => {
  const periods = periodParams(limits);
  return (h: HoldInput): Params => {
    const params: Params = {
      job: h.jobId, account: h.accountId, key: h.keyId, family: h.keyFamilyId, counter: h.keyFamilyId ?? h.accountId, kind: h.kind, model: h.model,
      amount: h.amount, at: h.at, instance: h.instanceId, address: h.clientAddress, counts: h.countsTowardKeyLimits && h.keyFamilyId !== null ? 1 : 0,
      since: h.at - DAY_MS, stamp: runStamp(h.at), reserved: h.reserved ?? 0, reservedUse: h.reservedUse ?? 0,
    };
    for (const p of periods) params[p] = PERIODS[p].start(h.at);
    return params;
  };
};

/** The hold's answer: the refusing row's, from its ceiling and usage in the verdict. */
const answerer = (limits: readonly HoldLimit[]) => ({ row, flags }: Outcome): HoldResult => {
  if (row === undefined) return { ok: false, reason: 'insufficient_credits', available: 0 };
  if (flags.reserve === true) return { ok: true };
  // No row refused in the verdict: every other check passed, and the client address's log was full.
  const refusing = limits.find((l) => l.name === row.v_refusal) ?? limits.find((l) => l.lastByAddress === true);
  if (refusing === undefined) throw new Error(`hold: no limit row named ${String(row.v_refusal)}`);
  const n = (column: string) => Number(row[column] ?? 0);
  return { ok: false, ...refusing.answer({ ceiling: n(`${refusing.name}_ceiling`), used: n(`${refusing.name}_used`) }) };
};

/** A lean hold's answer when the account or key needs the full one (trial rules, key limits and their alerts). */
export const NEEDS_FULL_HOLD = 'needs_full_hold';

export interface HoldMovements {
  /** The hold with every check, the client address's trial log and the key's alerts. */
  full: Movement<HoldInput, HoldResult>;
  /**
   * The hold for the common case — an account with a purchase and a key without limits — without the steps that
   * case never runs (the client address's trial log, the alerts and their e-mail). PostgreSQL initialises every
   * CTE of a statement whether it writes or not, and these cost it about 100 µs of CPU per hold here. The verdict
   * decides in the same locked read whether the case applies; when it does not, nothing is written and the answer
   * says so: the caller then runs the full hold, which checks everything again.
   */
  lean: Movement<HoldInput, HoldResult | typeof NEEDS_FULL_HOLD>;
  /**
   * The full hold's verdict alone, writing nothing: the in-memory admission (SQLite) reads it at once with this
   * process's reservations added, and reserves in memory when it passes.
   */
  verdict: Movement<HoldInput, Outcome>;
  /** The hold's answer from a verdict's outcome. */
  answer(outcome: Outcome): HoldResult;
}

/** The hold movements that check these limits (built once per table). */
export const holdMovements = perTable((limits): HoldMovements => buildHoldMovements(checkedLimits(limits)));

function buildHoldMovements(limits: readonly HoldLimit[]): HoldMovements {
  const params = holdParams(limits);
  const bind = binder(limits);
  const read = answerer(limits);
  const refusal = refusalCase(limits);
  const byAddress = limits.find((l) => l.lastByAddress === true);
  const verdict = verdictWith(limits, refusal);
  const full: Movement<HoldInput, HoldResult> = {
    name: 'hold',
    params,
    steps: [
      { name: 'v', from: [], sql: verdict },
      ...(byAddress === undefined ? [] : [{
        // The trial rule per client address, last: the address's log is locked (upserted) only when every other check passed.
        name: 'addr', from: ['v'], when: 'v_needs_address', sql: `INSERT INTO trial_addresses (address, runs)
SELECT @address, @stamp {from} WHERE {when} AND :v_refusal IS NULL
ON CONFLICT (address) DO UPDATE SET runs = ${logPushed('trial_addresses.runs', T.maxRunsPerAddressPerDay, '@stamp')}
WHERE NOT ${logIsFull('trial_addresses.runs', T.maxRunsPerAddressPerDay, '@since')}
RETURNING address AS t_address`,
      }]),
      reserve(byAddress === undefined ? 'TRUE' : `(:v_needs_address = 0 OR {exists:addr})`),
      ...reserved(limits),
      ...(alertSelects(limits).length === 0 ? [] : [{
        // Once per family, alert, limit and period, whichever process inserts it.
        name: 'notif', from: ['v'], when: 'v_limited', sql: `INSERT INTO notifications (account_id, key_id, key_family_id, kind, limit_period, period_start, threshold, created_at)
${alertSelects(limits).join('\nUNION ALL ')}
ON CONFLICT (key_family_id, kind, limit_period, period_start) DO NOTHING
RETURNING id AS n_id`,
      }, {
        name: 'mail', from: ['notif', 'v'], when: 'v_mail', sql: `INSERT INTO mail_outbox (notification_id, account_id, status, attempts, next_attempt_at, created_at)
SELECT :n_id, @account, 'pending', 0, @at, @at {from} WHERE {when}`,
      }]),
    ],
    answer: 'v',
    flags: byAddress === undefined ? ['reserve'] : ['addr', 'reserve'],
    bind,
    read,
  };
  const lean: HoldMovements['lean'] = {
    name: 'hold_lean',
    params,
    steps: [
      { name: 'v', from: [], sql: verdictWith(limits, `CASE WHEN a_purchase = 0 OR ${keyLimited(limits)} THEN '${NEEDS_FULL_HOLD}' ELSE ${refusal} END`) },
      reserve('TRUE'),
      ...reserved(limits),
    ],
    answer: 'v',
    flags: ['reserve'],
    bind,
    read: (outcome) => (outcome.row?.v_refusal === NEEDS_FULL_HOLD ? NEEDS_FULL_HOLD : read(outcome)),
  };
  const verdictAlone: HoldMovements['verdict'] = { name: 'hold_verdict', params, steps: [{ name: 'v', from: [], sql: verdict }], answer: 'v', flags: [], bind, read: (outcome) => outcome };
  return { full, lean, verdict: verdictAlone, answer: read };
}

/** The shipped table's holds. */
export const holdMovement = holdMovements(HOLD_LIMITS).full;
export const leanHoldMovement = holdMovements(HOLD_LIMITS).lean;
