import { describe, expect, it } from 'vitest';
import { newJobId } from './job-id.ts';

describe('job ids', () => {
  it('are UUIDs of version 7, distinct, and sort by the millisecond they were made in', () => {
    const ids = Array.from({ length: 1000 }, () => newJobId());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
    const stamps = ids.map((id) => parseInt(id.replace(/-/g, '').slice(0, 12), 16));
    for (let i = 1; i < stamps.length; i++) expect(stamps[i]).toBeGreaterThanOrEqual(stamps[i - 1] as number);
    expect(Math.abs((stamps[0] as number) - Date.now())).toBeLessThan(60_000);
  });
});
