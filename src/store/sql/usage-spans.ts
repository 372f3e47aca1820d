/**
 * How a usage range is read: whole UTC days from the daily rollups, the hours at either end from
 * the hourly ones. A partial day at an end is read whole from the daily rows when its hours
 * outside the range hold no rows (the usual case for a range ending now), which keeps a chart
 * over weeks to about one row per (day, account, key, model, code).
 */

const DAY = 86_400_000;

export interface Span {
  table: 'hourly' | 'daily';
  /** [from, to), Unix ms: hours for hourly spans, whole days for daily ones. */
  from: number;
  to: number;
}

/**
 * Spans covering the hours in [from, end) (both whole hours). `anyRows(a, b)` tells whether
 * hourly rows exist in [a, b).
 */
export async function daySpans(from: number, end: number, anyRows: (a: number, b: number) => Promise<boolean>): Promise<Span[]> {
  if (from >= end) return [];
  const startOfDay = Math.floor(from / DAY) * DAY;
  let days = { from: Math.ceil(from / DAY) * DAY, to: Math.floor(end / DAY) * DAY };
  const emptyBefore = async () => from === startOfDay || !(await anyRows(startOfDay, from));
  if (days.from <= days.to) {
    if (from < days.from && (await emptyBefore())) days = { ...days, from: startOfDay };
    if (days.to < end && !(await anyRows(end, days.to + DAY))) days = { ...days, to: days.to + DAY };
  } else if ((await emptyBefore()) && !(await anyRows(end, startOfDay + DAY))) {
    // Both ends within one day.
    days = { from: startOfDay, to: startOfDay + DAY };
  }
  if (days.from >= days.to) return [{ table: 'hourly', from, to: end }];
  const spans: Span[] = [{ table: 'daily', ...days }];
  if (from < days.from) spans.push({ table: 'hourly', from, to: days.from });
  if (days.to < end) spans.push({ table: 'hourly', from: days.to, to: end });
  return spans;
}
