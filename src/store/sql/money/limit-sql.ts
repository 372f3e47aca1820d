/**
 * The limit table (../../limits.ts) as the hold's and the close's SQL: each row's ceiling and usage
 * become two columns of the hold's verdict, its check one branch of the refusal, its key counter
 * a pair of columns the hold counts and the close corrects, its alerts two notification rows.
 */
import { keyCounterPeriods, PERIODS, type HoldLimit, type PeriodName } from '../../limits.ts';

/** The rows the verdict decides (the check by client address runs later, in its own step). */
const decided = (limits: readonly HoldLimit[]) => limits.filter((l) => l.lastByAddress !== true);

/** The parameter carrying what a process reserves in memory toward a usage (0 where nothing is reserved in memory). */
const RESERVED_PARAM = { held: '@reserved', keyUse: '@reservedUse' } as const;

/** The inner select's columns: each row's ceiling and usage, read from the locked rows (plus what is reserved in memory). */
export function readingColumns(limits: readonly HoldLimit[]): string {
  return decided(limits).map((l) => {
    const used = l.used.reserved === undefined ? l.used.sql : `${l.used.sql} + ${RESERVED_PARAM[l.used.reserved]}`;
    return `${l.ceiling.sql} AS ${l.name}_ceiling, ${used} AS ${l.name}_used`;
  }).join(',\n    ');
}

/** The verdict's column names of every row (the outer select passes them on to the answer). */
export function readingNames(limits: readonly HoldLimit[]): string {
  return decided(limits).map((l) => `${l.name}_ceiling, ${l.name}_used`).join(', ');
}

/** The refusal: the first row whose usage plus what the run adds passes its ceiling, in table order (NULL: all pass). */
export function refusalCase(limits: readonly HoldLimit[]): string {
  const branches = decided(limits).map((l) => {
    const adds = l.adds === 'amount' ? '@amount' : String(l.adds);
    const trial = l.owner === 'trial' ? 'a_purchase = 0 AND ' : '';
    return `WHEN ${trial}${l.name}_ceiling IS NOT NULL AND ${l.name}_used + ${adds} > ${l.name}_ceiling THEN '${l.name}'`;
  });
  return `CASE\n    ${branches.join('\n    ')}\n  END`;
}

/** The rows that raise alerts (a key's credit limits). */
export const alerting = (limits: readonly HoldLimit[]) => limits.filter((l) => l.alerts === true && l.period !== null);

/** Whether the key has a limit that raises alerts: such a hold needs the full movement (SQL, over the verdict's columns). */
export function keyLimited(limits: readonly HoldLimit[]): string {
  const rows = alerting(limits);
  return rows.length === 0 ? 'FALSE' : rows.map((l) => `${l.name}_ceiling IS NOT NULL`).join(' OR ');
}

/** The verdict's alert columns: whether the hold reaches the key's warning threshold of each alerting row. */
export function warningColumns(limits: readonly HoldLimit[]): string[] {
  return alerting(limits).map((l) => `CASE WHEN ${l.name}_used + @amount >= f_threshold * ${l.name}_ceiling THEN 1 ELSE 0 END AS v_warn_${l.name}`);
}

/** The notifications a hold raises: a warning at a key's threshold, limit_reached when a key limit refused it. */
export function alertSelects(limits: readonly HoldLimit[]): string[] {
  return alerting(limits).flatMap((l) => {
    const period = l.period as PeriodName;
    const row = (kind: string, threshold: string, condition: string) => `SELECT @account, @key, @family, '${kind}', '${PERIODS[period].adjective}', @${period},
  ${threshold}, @at {from} WHERE {when} AND ${condition}`;
    return [row('warning', ':f_threshold', `:v_warn_${l.name} = 1 AND {exists:reserve}`), row('limit_reached', '1', `:v_refusal = '${l.name}'`)];
  });
}

/** The key family's counters after a hold of @amount, restarting a counter whose period turned. */
export function countedSets(limits: readonly HoldLimit[]): string {
  return keyCounterPeriods(limits).map((p) => `${p}_used = CASE WHEN ${p}_start >= @${p} THEN ${p}_used ELSE 0 END + @amount,
${p}_start = CASE WHEN ${p}_start >= @${p} THEN ${p}_start ELSE @${p} END`).join(',\n');
}

/** The key family's counters after a close: the hold corrected to the charge, if the run still falls in the counted period. */
export function uncountedSets(limits: readonly HoldLimit[]): string {
  return keyCounterPeriods(limits).map((p) => `${p}_used = CASE WHEN :j_created >= ${p}_start THEN ${p}_used - (:j_held - :j_cost) ELSE ${p}_used END`).join(',\n  ');
}

/** The hold's period parameters: each period's start at the hold's time. */
export function periodParams(limits: readonly HoldLimit[]): PeriodName[] {
  return (Object.keys(PERIODS) as PeriodName[]).filter((p) => p === 'month' || limits.some((l) => l.period === p));
}
