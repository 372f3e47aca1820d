/** Numbers and times as people read them. */
export const credits = (value: number | null | undefined): string =>
  value === null || value === undefined ? '—' : value.toLocaleString('en-US', { maximumFractionDigits: 6 });

/** A movement with its sign always shown: `+100`, `−0.625` (a true minus sign). */
export const signed = (value: number): string => `${value < 0 ? '−' : '+'}${credits(Math.abs(value))}`;

export const count = (value: number | null | undefined): string => (value === null || value === undefined ? '—' : value.toLocaleString('en-US'));

export const when = (iso: string | null): string => (iso === null ? '—' : new Date(iso).toLocaleString('en-GB', { timeZone: 'UTC', dateStyle: 'medium', timeStyle: 'medium' }) + ' UTC');

export const ms = (value: number | null): string => (value === null ? '—' : value < 1000 ? `${value} ms` : `${(value / 1000).toFixed(2)} s`);
