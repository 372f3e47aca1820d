/**
 * A sliding log of run start times kept in one text column of a row the money path
 * locks anyway (the account, the client address): fixed-width entries, newest first,
 * at most `size` of them. "More than N runs in 24 hours" is then a check on the locked
 * row itself, exact under concurrency, instead of a count over jobs.
 */

/** Digits of one entry: Unix milliseconds until the year 2286. */
const WIDTH = 13;

/** An entry for a run starting at `at`. */
export function runStamp(at: number): string {
  return String(at).padStart(WIDTH, '0');
}

/** A log of these start times (newest first, at most `size`). */
export function runLog(times: readonly number[], size: number): string {
  return [...times].sort((a, b) => b - a).slice(0, size).map(runStamp).join('');
}

/** SQL: true when the log already holds `size` runs after `since` (a time parameter or expression). */
export function logIsFull(log: string, size: number, since: string): string {
  return `(length(${log}) >= ${WIDTH * size} AND CAST(substr(${log}, ${WIDTH * (size - 1) + 1}, ${WIDTH}) AS BIGINT) > ${since})`;
}

/** SQL: the log with `stamp` (a parameter holding runStamp(at)) added in front, cut to `size` entries. */
export function logPushed(log: string, size: number, stamp: string): string {
  return `substr(${stamp} || ${log}, 1, ${WIDTH * size})`;
}
