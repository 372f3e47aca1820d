/** UTC calendar boundaries used by limits and usage (days from 00:00 UTC, months from the 1st). */
export function startOfUtcDay(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
}

export function startOfNextUtcDay(ms: number): number {
  return startOfUtcDay(ms) + 86_400_000;
}

export function startOfUtcMonth(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

export function startOfNextUtcMonth(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
