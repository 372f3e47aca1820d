/** The in-memory sliding log on a clock the test controls (test/rate-limit-contract.test.ts runs it against Redis too). */
import { describe, expect, it } from 'vitest';
import { MemoryRateLimiter, requestsPerMinute } from './rate-limiter.ts';

const rpm60 = requestsPerMinute(60);

describe('MemoryRateLimiter (sliding log)', () => {
  it('refuses the 61st request in 60 s and names the seconds until the oldest leaves', () => {
    const limiter = new MemoryRateLimiter();
    const t0 = 1_000_000;
    for (let i = 0; i < 60; i++) expect(limiter.hit(rpm60, 'k', t0 + i * 500).allowed).toBe(true);
    const refused = limiter.hit(rpm60, 'k', t0 + 30_000);
    expect(refused).toEqual({ allowed: false, limit: 60, remaining: 0, resetSeconds: 30 });
    // Exact to the millisecond: the oldest leaves at t0 + 60 000.
    expect(limiter.hit(rpm60, 'k', t0 + 59_999).allowed).toBe(false);
    expect(limiter.hit(rpm60, 'k', t0 + 60_000).allowed).toBe(true);
    expect(limiter.hit(rpm60, 'k', t0 + 60_001).allowed).toBe(false);
    expect(limiter.hit(rpm60, 'k', t0 + 60_500).allowed).toBe(true);
  });

  it('refused requests are not logged', () => {
    const limiter = new MemoryRateLimiter();
    for (let i = 0; i < 60; i++) limiter.hit(rpm60, 'k', 0);
    for (let i = 0; i < 100; i++) limiter.hit(rpm60, 'k', 10_000);
    expect(limiter.hit(rpm60, 'k', 60_000).remaining).toBe(59);
  });

  it('peek does not count', () => {
    const limiter = new MemoryRateLimiter();
    limiter.hit(rpm60, 'k', 0);
    expect(limiter.peek(rpm60, 'k', 1).remaining).toBe(59);
    expect(limiter.peek(rpm60, 'k', 1).remaining).toBe(59);
    expect(limiter.peek(rpm60, 'other', 1).remaining).toBe(60);
  });

  it('a named limit keeps its own window and capacity: 20 uploads per hour', () => {
    const limiter = new MemoryRateLimiter();
    const uploads = { name: 'uploads', windowMs: 3_600_000, capacity: 20 };
    for (let i = 0; i < 20; i++) expect(limiter.hit(uploads, 'account', i * 60_000)).toMatchObject({ allowed: true, resetSeconds: 3600 });
    // The 21st, 30 minutes in: the first upload leaves the hour at 60:00.
    expect(limiter.hit(uploads, 'account', 1_800_000)).toEqual({ allowed: false, limit: 20, remaining: 0, resetSeconds: 1800 });
    // The same subject under another limit counts apart.
    expect(limiter.hit(rpm60, 'account', 1_800_000)).toMatchObject({ allowed: true, remaining: 59 });
    expect(limiter.hit(uploads, 'account', 3_600_000).allowed).toBe(true);
  });
});
