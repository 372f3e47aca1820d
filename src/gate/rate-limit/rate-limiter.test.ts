import { describe, expect, it } from 'vitest';
import { MemoryRateLimiter } from './rate-limiter.ts';

describe('MemoryRateLimiter (sliding log)', () => {
  it('refuses the 61st request in 60 s and names the seconds until the oldest leaves', () => {
    const limiter = new MemoryRateLimiter();
    const t0 = 1_000_000;
    for (let i = 0; i < 60; i++) expect(limiter.hit('k', 60, t0 + i * 500).allowed).toBe(true);
    const refused = limiter.hit('k', 60, t0 + 30_000);
    expect(refused).toEqual({ allowed: false, limit: 60, remaining: 0, resetSeconds: 30 });
    // Exact to the millisecond: the oldest leaves at t0 + 60 000.
    expect(limiter.hit('k', 60, t0 + 59_999).allowed).toBe(false);
    expect(limiter.hit('k', 60, t0 + 60_000).allowed).toBe(true);
    expect(limiter.hit('k', 60, t0 + 60_001).allowed).toBe(false);
    expect(limiter.hit('k', 60, t0 + 60_500).allowed).toBe(true);
  });

  it('refused requests are not logged', () => {
    const limiter = new MemoryRateLimiter();
    for (let i = 0; i < 60; i++) limiter.hit('k', 60, 0);
    for (let i = 0; i < 100; i++) limiter.hit('k', 60, 10_000);
    expect(limiter.hit('k', 60, 60_000).remaining).toBe(59);
  });

  it('peek does not count', () => {
    const limiter = new MemoryRateLimiter();
    limiter.hit('k', 60, 0);
    expect(limiter.peek('k', 60, 1).remaining).toBe(59);
    expect(limiter.peek('k', 60, 1).remaining).toBe(59);
    expect(limiter.peek('other', 60, 1).remaining).toBe(60);
  });
});
