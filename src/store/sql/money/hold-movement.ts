/**
 * The durable hold, written once (movement.ts says how it runs on each database): it reserves
 * credits with every admission check inside it. Every limit is checked against a row the
 * movement locks — the account (credits, spending limit, trial rules), the key family's usage
 * counter, the client address's trial log — never against a count over jobs, which on
 * PostgreSQL would miss a concurrent hold the statement waited for.
 */
import { startOfUtcDay, startOfUtcMonth } from '../../../shared/time.ts';
import { TRIAL_RULES, type HoldResult, type NewHold } from '../../money-contract.ts';
import type { Movement, Outcome, Params, Step } from './movement.ts';
import { logIsFull, logPushed, runStamp } from './run-log.ts';

const DAY_MS = 86_400_000;
const T = TRIAL_RULES;

/** The admission checks in the spec's order; the first failing one is the refusal (null: all pass so far). */
const REFUSAL = `CASE
    WHEN a_balance - a_held < @amount THEN 'insufficient_credits'
    WHEN a_limit IS NOT NULL AND a_month_settled + a_held + @amount > a_limit THEN 'spending_limit'
    WHEN f_daily_limit IS NOT NULL AND f_day_used + @amount > f_daily_limit THEN 'key_daily'
    WHEN f_monthly_limit IS NOT NULL AND f_month_used + @amount > f_monthly_limit THEN 'key_monthly'
    WHEN a_purchase = 1 THEN NULL
    WHEN @amount > ${T.maxHold} THEN 'hold_too_large'
    WHEN ${logIsFull('a_runs', T.maxRunsPerDay, '@since')} THEN 'runs_per_day'
    WHEN a_failures >= ${T.maxFailuresInARow} THEN 'failures_in_a_row'
    WHEN a_created > @bornAfter THEN 'account_too_new'
  END`;

/**
 * Reads — and on PostgreSQL locks, account row first, then the key family's counter — what the checks need,
 * and decides. Every account has a counter row of its own (family id = account id) for runs without a key,
 * so the join is an inner one and one statement locks both rows.
 */
const verdictWith = (refusal: string) => `SELECT a_balance, a_held, a_limit, a_month_settled, a_purchase, f_day_used, f_month_used, f_daily_limit, f_monthly_limit,
  f_threshold, v_counts, ${refusal} AS v_refusal,
  CASE WHEN a_purchase = 0 AND @address IS NOT NULL THEN 1 ELSE 0 END AS v_needs_address,
  CASE WHEN f_day_used + @amount >= f_threshold * f_daily_limit THEN 1 ELSE 0 END AS v_warn_daily,
  CASE WHEN f_month_used + @amount >= f_threshold * f_monthly_limit THEN 1 ELSE 0 END AS v_warn_monthly,
  CASE WHEN f_daily_limit IS NOT NULL OR f_monthly_limit IS NOT NULL THEN 1 ELSE 0 END AS v_limited,
  CASE WHEN f_alerts = 1 AND a_billing = 1 AND a_email IS NOT NULL THEN 1 ELSE 0 END AS v_mail
FROM (
  SELECT a.balance AS a_balance, a.held + @reserved AS a_held, a.has_purchase AS a_purchase, a.created_at AS a_created,
    a.monthly_spending_limit AS a_limit, a.billing_emails AS a_billing, a.email AS a_email, a.trial_runs AS a_runs,
    a.trial_failures AS a_failures, CASE WHEN a.month_start >= @month THEN a.month_settled ELSE 0 END AS a_month_settled,
    CASE WHEN f.day_start >= @day THEN f.day_used ELSE 0 END + @reservedUse AS f_day_used,
    CASE WHEN f.month_start >= @month THEN f.month_used ELSE 0 END + @reservedUse AS f_month_used,
    CASE WHEN @counts = 1 THEN k.daily_limit END AS f_daily_limit, CASE WHEN @counts = 1 THEN k.monthly_limit END AS f_monthly_limit,
    k.warning_threshold AS f_threshold, k.email_alerts AS f_alerts, @counts AS v_counts
  FROM accounts a JOIN key_families f ON f.family_id = @counter LEFT JOIN api_keys k ON k.id = @key
  WHERE a.id = @account {lock:a, f}
) locked`;
const verdict = verdictWith(REFUSAL);

/** Alerts a hold raises: a warning when it reaches a key's threshold, limit_reached when a key limit refused it. */
const alerts = [
  ['warning', 'daily', ':v_warn_daily = 1 AND {exists:reserve}'],
  ['warning', 'monthly', ':v_warn_monthly = 1 AND {exists:reserve}'],
  ['limit_reached', 'daily', ":v_refusal = 'key_daily'"],
  ['limit_reached', 'monthly', ":v_refusal = 'key_monthly'"],
].map(([kind, period, condition]) => `SELECT @account, @key, @family, '${kind}', '${period}', @${period === 'daily' ? 'day' : 'month'},
  ${kind === 'warning' ? ':f_threshold' : '1'}, @at {from} WHERE {when} AND ${condition}`);

/** The reservation, when every check passed (and `condition`); what follows reads its row. */
const reserve = (condition: string): Step => ({
  name: 'reserve', from: ['v'], gate: '1 AS r_reserved', sql: `UPDATE accounts SET held = held + @amount,
  trial_runs = CASE WHEN :a_purchase = 0 THEN ${logPushed('trial_runs', T.maxRunsPerDay, '@stamp')} ELSE trial_runs END
{from} WHERE id = @account AND :v_refusal IS NULL AND ${condition}
{returning}`,
});

/** What a reservation writes: the key family's usage, the job and the ledger's hold row. */
const RESERVED: Step[] = [
  {
    name: 'counted', from: ['reserve', 'v'], when: 'v_counts', sql: `UPDATE key_families SET
day_used = CASE WHEN day_start >= @day THEN day_used ELSE 0 END + @amount,
day_start = CASE WHEN day_start >= @day THEN day_start ELSE @day END,
month_used = CASE WHEN month_start >= @month THEN month_used ELSE 0 END + @amount,
month_start = CASE WHEN month_start >= @month THEN month_start ELSE @month END
{from} WHERE family_id = @counter AND {when}`,
  },
  {
    name: 'job', from: ['reserve'], sql: `INSERT INTO jobs (id, account_id, key_id, key_family_id, kind, model, status, held, instance_id, client_address, counts_key, created_at)
{values}@job, @account, @key, @family, @kind, @model, 'processing', @amount, @instance, @address, @counts, @at{/values}`,
  },
  {
    name: 'booked_hold', from: ['reserve'], sql: `INSERT INTO ledger (account_id, key_id, key_family_id, job_id, kind, amount, created_at)
{values}@account, @key, @family, @job, 'hold', @amount, @at{/values}`,
  },
];

const HOLD_PARAMS: Movement<HoldInput, HoldResult>['params'] = {
  job: 'text', account: 'text', key: 'text', family: 'text', counter: 'text', kind: 'text', model: 'text', amount: 'bigint', at: 'bigint',
  instance: 'text', address: 'text', counts: 'integer', day: 'bigint', month: 'bigint', since: 'bigint', bornAfter: 'bigint', stamp: 'text',
  reserved: 'bigint', reservedUse: 'bigint',
};

/**
 * A hold as the movements take it: on SQLite, what this process reserves in memory (Reservations) is added to the
 * account's `held` and the family's usage, read when the verdict's statement binds, so it counts every reservation
 * made before it runs.
 */
export interface HoldInput extends NewHold {
  reserved?: number | (() => number);
  reservedUse?: number | (() => number);
}

const bindHold = (h: HoldInput): Params => ({
  job: h.jobId, account: h.accountId, key: h.keyId, family: h.keyFamilyId, counter: h.keyFamilyId ?? h.accountId, kind: h.kind, model: h.model,
  amount: h.amount, at: h.at, instance: h.instanceId, address: h.clientAddress, counts: h.countsTowardKeyLimits && h.keyFamilyId !== null ? 1 : 0,
  day: startOfUtcDay(h.at), month: startOfUtcMonth(h.at), since: h.at - DAY_MS, bornAfter: h.at - T.minAccountAgeMs, stamp: runStamp(h.at),
  reserved: h.reserved ?? 0, reservedUse: h.reservedUse ?? 0,
});

export const holdMovement: Movement<HoldInput, HoldResult> = {
  name: 'hold',
  params: HOLD_PARAMS,
  steps: [
    { name: 'v', from: [], sql: verdict },
    {
      // The trial rule per client address, last: the address's log is locked (upserted) only when every other check passed.
      name: 'addr', from: ['v'], when: 'v_needs_address', sql: `INSERT INTO trial_addresses (address, runs)
SELECT @address, @stamp {from} WHERE {when} AND :v_refusal IS NULL
ON CONFLICT (address) DO UPDATE SET runs = ${logPushed('trial_addresses.runs', T.maxRunsPerAddressPerDay, '@stamp')}
WHERE NOT ${logIsFull('trial_addresses.runs', T.maxRunsPerAddressPerDay, '@since')}
RETURNING address AS t_address`,
    },
    reserve(`(:v_needs_address = 0 OR {exists:addr})`),
    ...RESERVED,
    {
      // Once per family, alert, limit and period, whichever process inserts it.
      name: 'notif', from: ['v'], when: 'v_limited', sql: `INSERT INTO notifications (account_id, key_id, key_family_id, kind, limit_period, period_start, threshold, created_at)
${alerts.join('\nUNION ALL ')}
ON CONFLICT (key_family_id, kind, limit_period, period_start) DO NOTHING
RETURNING id AS n_id`,
    },
    {
      name: 'mail', from: ['notif', 'v'], when: 'v_mail', sql: `INSERT INTO mail_outbox (notification_id, account_id, status, attempts, next_attempt_at, created_at)
SELECT :n_id, @account, 'pending', 0, @at, @at {from} WHERE {when}`,
    },
  ],
  answer: 'v',
  flags: ['addr', 'reserve'],
  bind: bindHold,
  read: holdAnswer,
};

export function holdAnswer({ row, flags }: Outcome): HoldResult {
  if (row === undefined) return { ok: false, reason: 'insufficient_credits', available: 0 };
  if (flags.reserve === true) return { ok: true };
  const n = (column: string) => Number(row[column] ?? 0);
  switch (row.v_refusal) {
    case 'insufficient_credits':
      return { ok: false, reason: 'insufficient_credits', available: n('a_balance') - n('a_held') };
    case 'spending_limit':
      return { ok: false, reason: 'spending_limit', limit: n('a_limit'), spent: n('a_month_settled') + n('a_held') };
    case 'key_daily':
      return { ok: false, reason: 'key_limit', period: 'daily', limit: n('f_daily_limit'), used: n('f_day_used') };
    case 'key_monthly':
      return { ok: false, reason: 'key_limit', period: 'monthly', limit: n('f_monthly_limit'), used: n('f_month_used') };
    case 'hold_too_large':
    case 'runs_per_day':
    case 'failures_in_a_row':
    case 'account_too_new':
      return { ok: false, reason: 'trial', rule: row.v_refusal };
    default:
      // Every other check passed: the client address's log was full.
      return { ok: false, reason: 'trial', rule: 'runs_per_address' };
  }
}

/** A lean hold's answer when the account or key needs the full one (trial rules, key limits and their alerts). */
export const NEEDS_FULL_HOLD = 'needs_full_hold';

/**
 * The hold for the common case — an account with a purchase and a key without limits — without the steps that
 * case never runs (the client address's trial log, the alerts and their e-mail). PostgreSQL initialises every
 * CTE of a statement whether it writes or not, and these cost it about 100 µs of CPU per hold here. The verdict decides in the same locked read whether the case applies; when it does not, nothing
 * is written and the answer says so: the caller then runs the full hold, which checks everything again.
 */
export const leanHoldMovement: Movement<HoldInput, HoldResult | typeof NEEDS_FULL_HOLD> = {
  name: 'hold_lean',
  params: HOLD_PARAMS,
  steps: [
    { name: 'v', from: [], sql: verdictWith(`CASE WHEN a_purchase = 0 OR f_daily_limit IS NOT NULL OR f_monthly_limit IS NOT NULL THEN '${NEEDS_FULL_HOLD}' ELSE ${REFUSAL} END`) },
    reserve('TRUE'),
    ...RESERVED,
  ],
  answer: 'v',
  flags: ['reserve'],
  bind: bindHold,
  read: (outcome) => (outcome.row?.v_refusal === NEEDS_FULL_HOLD ? NEEDS_FULL_HOLD : holdAnswer(outcome)),
};

/**
 * The durable hold's verdict alone, written nowhere: the in-memory admission (SQLite) reads it synchronously with
 * this process's reservations added, and reserves in memory when it passes.
 */
export const holdVerdict: Movement<HoldInput, Outcome> = {
  name: 'hold_verdict',
  params: HOLD_PARAMS,
  steps: [{ name: 'v', from: [], sql: verdict }],
  answer: 'v',
  flags: [],
  bind: bindHold,
  read: (outcome) => outcome,
};
