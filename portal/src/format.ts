/** Times and counts as people read them. */
export const when = (iso: string | null): string =>
  iso === null ? '—' : new Date(iso).toLocaleString('en-GB', { timeZone: 'UTC', dateStyle: 'medium', timeStyle: 'short' }) + ' UTC';

export const day = (iso: string): string => new Date(iso).toLocaleDateString('en-GB', { timeZone: 'UTC', dateStyle: 'medium' });

export const count = (value: number | null | undefined): string => (value === null || value === undefined ? '—' : value.toLocaleString('en-US'));
