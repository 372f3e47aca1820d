/**
 * The hold's limits as one table: each limit the atomic hold checks is one row, and everything
 * that names a limit is derived from the rows — the hold's checks in the money SQL on SQLite and
 * PostgreSQL (sql/money/limit-sql.ts), the same decision in TypeScript (`holdRefusalOf`, for a
 * reservation made in memory), the refusal's code, status and message (billing/hold-refusal.ts),
 * the admin API's fields and their validation (admin/limit-fields.ts), the admin CLI's flags, the OpenAPI schema and the
 * docs' table (docs/api/limits.md, checked by test/limits-table.test.ts).
 *
 * A row's ceiling and usage are read twice, once as SQL over the rows the hold locks (`a` the
 * account, `f` the key family's counter, `k` the key; parameters @amount, @at, @counts and one
 * per period, @hour, @day, @month, holding that period's start) and once in TypeScript over
 * `HoldFacts`; the run is refused when usage + what it adds > ceiling (a null ceiling: no limit).
 * The first refusing row, in table order (the spec's order of checks), answers.
 *
 * A key limit's row needs storage a migration adds (migrations import nothing live): its setting
 * column on api_keys and its period's counter columns `<period>_used`, `<period>_start` (bigint,
 * default 0) on key_families. Requests per minute is not a row: see docs/decisions.md.
 */import { startOfNextUtcDay, startOfNextUtcMonth, startOfUtcDay, startOfUtcMonth } from '../shared/time.ts';
import type { HoldFacts, HoldLimit, HoldRefusal, LimitSetting, Period, PeriodName, Reading, TrialRules } from './limit-types.ts';
import { logIsFull } from './sql/money/run-log.ts';

export type { HoldFacts, HoldLimit, HoldRefusal, LimitSetting, MessageFacts, Period, PeriodName, Reading, TrialRules } from './limit-types.ts';

export const TRIAL_RULES: TrialRules = {
  maxHold: 2_000_000,
  maxRunsPerDay: 5,
  maxFailuresInARow: 3,
  maxRunsPerAddressPerDay: 8,
  minAccountAgeMs: 24 * 60 * 60 * 1000,
};

const HOUR_MS = 3_600_000;

export const PERIODS: Readonly<Record<PeriodName, Period>> = {
  hour: { adjective: 'hourly', start: (at) => at - (at % HOUR_MS), next: (at) => at - (at % HOUR_MS) + HOUR_MS, doc: 'UTC hour' },
  day: { adjective: 'daily', start: startOfUtcDay, next: startOfNextUtcDay, doc: 'UTC day, from 00:00 UTC' },
  month: { adjective: 'monthly', start: startOfUtcMonth, next: startOfNextUtcMonth, doc: 'calendar month, from the 1st (UTC)' },
};

/** The period a refusal or a notification names by its adjective (daily…). */
export function periodCalled(adjective: string): Period | undefined {
  return Object.values(PERIODS).find((p) => p.adjective === adjective);
}

const NO_FIGURES = { ceiling: 0, used: 0 };

/** A setting's value in a record (AccountRecord, ApiKeyRecord, or their patches). */
export function settingOf(record: object, setting: LimitSetting): number | null | undefined {
  const value = (record as Readonly<Record<string, unknown>>)[setting.field];
  return value === undefined ? undefined : typeof value === 'number' ? value : null;
}

/** The usage of a key family's counter in the current period of `@period`. */
const familyUsed = (period: PeriodName): Reading => ({
  sql: `CASE WHEN f.${period}_start >= @${period} THEN f.${period}_used ELSE 0 END`,
  ts: (f) => f.key?.used[period] ?? 0,
  reserved: 'keyUse',
});

/**
 * A key's credit limit per period: the key's setting against its family's usage (open holds at their amount,
 * settled runs at cost), refused with 429 api_key_limit_exceeded and X-Key-Limit-Reset; alerts at the key's threshold.
 */
export function keyCreditLimit(spec: { name: string; period: PeriodName; setting: Omit<LimitSetting, 'description' | 'flag'> & Partial<LimitSetting> }): HoldLimit {
  const { adjective } = PERIODS[spec.period];
  const setting: LimitSetting = {
    description: `The key's ${adjective} credit limit (decimal credits); null: none. Counted per ${PERIODS[spec.period].doc}.`,
    flag: `${adjective}-limit`,
    ...spec.setting,
  };
  return {
    name: spec.name,
    owner: 'key',
    period: spec.period,
    ceilingDoc: `the key's \`${setting.api}\``,
    counts: "credits of the key family's runs (held, then corrected to cost)",
    ceiling: { sql: `CASE WHEN @counts = 1 THEN k.${setting.column} END`, ts: (f) => (f.key === null ? null : settingOf(f.key.settings, setting) ?? null) },
    used: familyUsed(spec.period),
    adds: 'amount',
    code: 'api_key_limit_exceeded',
    resetHeader: true,
    alerts: true,
    setting,
    answer: ({ ceiling, used }) => ({ reason: 'key_limit', period: adjective, limit: ceiling, used }),
    matches: (r) => r.reason === 'key_limit' && r.period === adjective,
    figures: (r) => (r.reason === 'key_limit' ? { ceiling: r.limit, used: r.used } : NO_FIGURES),
    message: (m) => `This API key's ${adjective} credit limit of ${m.limit} credits would be exceeded (${m.used} used; this request holds ${m.quote}). Nothing was charged.`,
  };
}

/** A trial rule: a fixed ceiling, for accounts without a purchase; 429 trial_limit. */
function trialRule(spec: Pick<HoldLimit, 'name' | 'ceilingDoc' | 'counts' | 'used' | 'adds' | 'lastByAddress'> & { ceiling: number | Reading; says: string }): HoldLimit {
  const { ceiling, says, ...rest } = spec;
  return {
    ...rest,
    owner: 'trial',
    period: null,
    ceiling: typeof ceiling === 'number' ? { sql: String(ceiling), ts: () => ceiling } : ceiling,
    code: 'trial_limit',
    answer: () => ({ reason: 'trial', rule: spec.name }),
    matches: (r) => r.reason === 'trial' && r.rule === spec.name,
    figures: () => NO_FIGURES,
    message: () => `${says} A top-up lifts the trial rules.`,
  };
}

const T = TRIAL_RULES;

/** The account's monthly spending limit: its settled charges this calendar month plus its open holds (402, the route's code). */
const SPENDING: LimitSetting = {
  field: 'monthlySpendingLimit',
  column: 'monthly_spending_limit',
  api: 'monthly_spending_limit_credits',
  flag: 'monthly-limit',
  description: "The account's monthly spending limit (decimal credits): settled charges this calendar month (UTC) plus open holds; null: none.",
};

const DAY_MS = 86_400_000;

/** Runs in the trial log after `since` (the SQL side reads the log's fullness: run-log.ts). */
const runsSince = (times: readonly number[], since: number) => times.filter((t) => t > since).length;

/** The shipped limits, in the spec's order of checks. */
export const HOLD_LIMITS: readonly HoldLimit[] = [
  {
    name: 'insufficient_credits',
    owner: 'account',
    period: null,
    ceilingDoc: "the account's balance",
    counts: "the account's open holds",
    ceiling: { sql: 'a.balance', ts: (f) => f.account.balance },
    used: { sql: 'a.held', ts: (f) => f.account.held, reserved: 'held' },
    adds: 'amount',
    code: 'insufficient_credits',
    answer: ({ ceiling, used }) => ({ reason: 'insufficient_credits', available: ceiling - used }),
    matches: (r) => r.reason === 'insufficient_credits',
    // Only what is available is told: as a ceiling with nothing used.
    figures: (r) => (r.reason === 'insufficient_credits' ? { ceiling: r.available, used: 0 } : NO_FIGURES),
    message: (m) => `Insufficient credits: this request holds ${m.quote} credits (${m.holdMadeOf}) and ${m.available} are available. Top up, or ${m.lowerBy}.`,
  },
  {
    name: 'spending_limit',
    owner: 'account',
    period: 'month',
    ceilingDoc: "the account's `monthly_spending_limit_credits`",
    counts: "the account's settled charges this month plus its open holds",
    ceiling: { sql: `a.${SPENDING.column}`, ts: (f) => settingOf(f.account.settings, SPENDING) ?? null },
    used: { sql: 'CASE WHEN a.month_start >= @month THEN a.month_settled ELSE 0 END + a.held', ts: (f) => f.account.monthSettled + f.account.held, reserved: 'held' },
    adds: 'amount',
    code: 'route',
    setting: SPENDING,
    answer: ({ ceiling, used }) => ({ reason: 'spending_limit', limit: ceiling, spent: used }),
    matches: (r) => r.reason === 'spending_limit',
    figures: (r) => (r.reason === 'spending_limit' ? { ceiling: r.limit, used: r.spent } : NO_FIGURES),
    message: (m) => `The account's monthly spending limit of ${m.limit} credits would be exceeded (${m.used} spent or held this month; this request holds ${m.quote}).`,
  },
  keyCreditLimit({ name: 'key_daily', period: 'day', setting: { field: 'dailyLimit', column: 'daily_limit', api: 'daily_limit_credits' } }),
  keyCreditLimit({ name: 'key_monthly', period: 'month', setting: { field: 'monthlyLimit', column: 'monthly_limit', api: 'monthly_limit_credits' } }),
  trialRule({
    name: 'hold_too_large', ceiling: T.maxHold, ceilingDoc: `${T.maxHold / 1_000_000} credits`, counts: 'the run\'s hold',
    used: { sql: '0', ts: () => 0 }, adds: 'amount', says: `Trial accounts may hold at most ${T.maxHold / 1_000_000} credits per run.`,
  }),
  trialRule({
    name: 'runs_per_day', ceiling: T.maxRunsPerDay, ceilingDoc: `${T.maxRunsPerDay} runs`, counts: 'runs in the sliding 24 hours (every run whose hold passed)',
    // The log keeps the latest runs only: it is full (the ceiling) or not (0), which is all the check needs.
    used: { sql: `CASE WHEN ${logIsFull('a.trial_runs', T.maxRunsPerDay, `(@at - ${DAY_MS})`)} THEN ${T.maxRunsPerDay} ELSE 0 END`, ts: (f) => runsSince(f.account.trialRuns, f.at - DAY_MS) },
    adds: 1, says: `Trial accounts may make at most ${T.maxRunsPerDay} runs in 24 hours.`,
  }),
  trialRule({
    name: 'failures_in_a_row', ceiling: T.maxFailuresInARow, ceilingDoc: `${T.maxFailuresInARow} failures`, counts: 'failed runs in a row (not those the gateway caused)',
    used: { sql: 'a.trial_failures', ts: (f) => f.account.trialFailures }, adds: 1,
    says: `Trial accounts are paused after ${T.maxFailuresInARow} failed runs in a row.`,
  }),
  trialRule({
    name: 'account_too_new', ceiling: { sql: `@at - ${T.minAccountAgeMs}`, ts: (f) => f.at - T.minAccountAgeMs }, ceilingDoc: `${T.minAccountAgeMs / 3_600_000} hours of age`, counts: "the account's creation time",
    used: { sql: 'a.created_at', ts: (f) => f.account.createdAt }, adds: 0,
    says: `Trial accounts can run models ${T.minAccountAgeMs / 3_600_000} hours after they are created.`,
  }),
  trialRule({
    name: 'runs_per_address', ceiling: T.maxRunsPerAddressPerDay, ceilingDoc: `${T.maxRunsPerAddressPerDay} runs`, counts: 'trial runs from the client address in the sliding 24 hours, across accounts (not checked when the address is unknown)',
    used: { sql: '0', ts: (f) => f.addressRuns ?? 0 }, adds: 1, lastByAddress: true,
    says: `At most ${T.maxRunsPerAddressPerDay} trial runs per client address in 24 hours.`,
  }),
];

/** The table a money store checks (the shipped one unless it says otherwise). */
export function limitsOf(money: { readonly limits?: readonly HoldLimit[] }): readonly HoldLimit[] {
  return money.limits ?? HOLD_LIMITS;
}

/** `build` once per limit table (the shipped one, or a test's): what is derived from a table is derived once. */
export function perTable<T>(build: (limits: readonly HoldLimit[]) => T): (limits: readonly HoldLimit[]) => T {
  const built = new WeakMap<readonly HoldLimit[], T>();
  return (limits) => {
    let value = built.get(limits);
    if (value === undefined) {
      value = build(limits);
      built.set(limits, value);
    }
    return value;
  };
}

/** What a run adds to a row's usage. */
const addsOf = (row: HoldLimit, amount: number) => (row.adds === 'amount' ? amount : row.adds);

/**
 * The first row that refuses the hold, as the store answers it; null when every limit passes. The money SQL
 * decides the same in the hold (sql/money/limit-sql.ts); a reservation made in memory decides with this.
 */
export function holdRefusalOf(limits: readonly HoldLimit[], facts: HoldFacts): HoldRefusal | null {
  for (const row of limits) {
    if (row.owner === 'trial' && facts.account.hasPurchase) continue;
    if (row.lastByAddress === true && facts.addressRuns === null) continue;
    const ceiling = row.ceiling.ts(facts);
    if (ceiling === null) continue;
    const used = row.used.ts(facts) ?? 0;
    if (used + addsOf(row, facts.amount) > ceiling) return row.answer({ ceiling, used });
  }
  return null;
}

/** The row a refusal came from. */
export function limitOfRefusal(limits: readonly HoldLimit[], refusal: HoldRefusal): HoldLimit {
  const row = limits.find((l) => l.matches(refusal));
  if (row === undefined) throw new Error(`No limit row answers the refusal ${JSON.stringify(refusal)}`);
  return row;
}

/** The rows an admin sets on an account or on a key, in table order. */
export function limitSettings(limits: readonly HoldLimit[], owner: 'account' | 'key'): LimitSetting[] {
  return limits.flatMap((l) => (l.owner === owner && l.setting !== undefined ? [l.setting] : []));
}

/** The periods whose key-family counters the key limits use (each is a pair of columns on key_families). */
export function keyCounterPeriods(limits: readonly HoldLimit[]): PeriodName[] {
  return [...new Set(limits.flatMap((l) => (l.owner === 'key' && l.period !== null ? [l.period] : [])))];
}

const IDENTIFIER = /^[a-z][a-z0-9_]*$/;

/** A table the derivations can trust: names are unique SQL identifiers, the check by address comes last. */
export function checkedLimits(limits: readonly HoldLimit[]): readonly HoldLimit[] {
  const names = new Set<string>();
  const fields = new Set<string>();
  limits.forEach((l, i) => {
    if (!IDENTIFIER.test(l.name) || names.has(l.name)) throw new Error(`Limit ${i}: its name '${l.name}' must be a new SQL identifier`);
    names.add(l.name);
    if (l.lastByAddress === true && i !== limits.length - 1) throw new Error(`Limit ${l.name}: the check by client address must be the last row`);
    if (l.setting !== undefined) {
      for (const name of [l.setting.field, l.setting.column, l.setting.api]) {
        if (!IDENTIFIER.test(name.toLowerCase()) || fields.has(name)) throw new Error(`Limit ${l.name}: its setting's name '${name}' must be new`);
        fields.add(name);
      }
    }
  });
  return limits;
}

/** The settings' values in a row of their owner's table, by record field (null: no limit). */
export function settingsFromRow(row: object, settings: readonly LimitSetting[]): Record<string, number | null> {
  const columns = row as Readonly<Record<string, unknown>>;
  return Object.fromEntries(settings.map((s) => [s.field, columns[s.column] === null || columns[s.column] === undefined ? null : Number(columns[s.column])]));
}

/** The columns a patch (record fields) sets; a field left undefined is not changed. */
export function settingsToColumns(patch: object, settings: readonly LimitSetting[]): Record<string, number | null> {
  return Object.fromEntries(settings.flatMap((s) => {
    const value = settingOf(patch, s);
    return value === undefined ? [] : [[s.column, value]];
  }));
}
