/**
 * One contract for every sliding-window limiter: the in-memory one and the Redis one
 * answer the same decisions on the same real clock (spec "Requests per minute").
 */
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemoryRateLimiter, requestsPerMinute, type RateLimiter } from '../src/gate/rate-limit/rate-limiter.ts';
import { RedisRateLimiter } from '../src/gate/rate-limit/redis-rate-limiter.ts';
import { connectTestRedis, dropRedisPrefix, redisPrefix } from './helpers/redis.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Records what a limiter logs: the Redis limiter must never have fallen back during the contract. */
function recordingLog() {
  const lines: { level: string; message: string }[] = [];
  const record = (level: string) => (...args: unknown[]) => void lines.push({ level, message: String(args.find((a) => typeof a === 'string')) });
  return { lines, warn: record('warn'), info: record('info') };
}

interface Implementation {
  name: string;
  open(): Promise<{ limiter: RateLimiter; fellBack(): boolean; close(): Promise<void> }>;
}

const prefix = redisPrefix();
const connections: Redis[] = [];
afterAll(async () => {
  for (const c of connections) c.disconnect();
  await dropRedisPrefix(prefix);
});

const implementations: Implementation[] = [
  {
    name: 'in-memory',
    open: async () => ({ limiter: new MemoryRateLimiter(), fellBack: () => false, close: async () => undefined }),
  },
  {
    name: 'Redis',
    async open() {
      const redis = await connectTestRedis();
      connections.push(redis);
      const log = recordingLog();
      return {
        limiter: new RedisRateLimiter(redis, prefix, log),
        fellBack: () => log.lines.some((l) => l.level === 'warn'),
        close: async () => redis.disconnect(),
      };
    },
  },
];

let subjects = 0;
/** A subject no other test used. */
const fresh = () => `subject-${++subjects}-${Date.now()}`;

describe.each(implementations)('sliding-window limiter contract: $name', (implementation) => {
  let limiter: RateLimiter;
  let fellBack: () => boolean;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ limiter, fellBack, close } = await implementation.open());
  });
  afterAll(async () => close());
  afterEach(() => expect(fellBack()).toBe(false));

  it('61st request on a 60-rpm key → refused: limit 60, remaining 0, reset = seconds until the oldest leaves', async () => {
    const key = fresh();
    const rpm = requestsPerMinute(60);
    const started = Date.now();
    for (let i = 1; i <= 60; i++) {
      expect(await limiter.hit(rpm, key, Date.now())).toEqual({ allowed: true, limit: 60, remaining: 60 - i, resetSeconds: 60 });
    }
    const refused = await limiter.hit(rpm, key, Date.now());
    const elapsed = Date.now() - started;
    expect(refused).toMatchObject({ allowed: false, limit: 60, remaining: 0 });
    // The oldest request leaves 60 s after it was made, rounded up to whole seconds.
    expect(refused.resetSeconds).toBeGreaterThanOrEqual(Math.ceil((60_000 - elapsed) / 1000));
    expect(refused.resetSeconds).toBeLessThanOrEqual(60);
  });

  it('reset seconds: 1.5 s after the first request, the refusal names 59 (or less on a slow machine), never more', async () => {
    const key = fresh();
    const limit = { name: 'contract', windowMs: 60_000, capacity: 3 };
    const first = Date.now();
    await limiter.hit(limit, key, Date.now());
    await limiter.hit(limit, key, Date.now());
    await limiter.hit(limit, key, Date.now());
    await sleep(1_500);
    const refused = await limiter.hit(limit, key, Date.now());
    const elapsed = Date.now() - first;
    expect(refused).toMatchObject({ allowed: false, limit: 3, remaining: 0 });
    expect(refused.resetSeconds).toBeLessThanOrEqual(59);
    expect(refused.resetSeconds).toBeGreaterThanOrEqual(Math.ceil((60_000 - elapsed) / 1000));
  });

  it('200 concurrent requests on a 100-rpm key let exactly 100 through', async () => {
    const key = fresh();
    const rpm = requestsPerMinute(100);
    const results = await Promise.all(Array.from({ length: 200 }, () => limiter.hit(rpm, key, Date.now())));
    expect(results.filter((r) => r.allowed)).toHaveLength(100);
    // Every allowed answer names a different remaining count: each saw its own place in the window.
    expect(new Set(results.filter((r) => r.allowed).map((r) => r.remaining)).size).toBe(100);
  });

  it('the window slides: 3 per second, the 4th refused, room again once the first has left; refusals are not logged', async () => {
    const key = fresh();
    const limit = { name: 'contract', windowMs: 1_000, capacity: 3 };
    for (let i = 0; i < 3; i++) expect((await limiter.hit(limit, key, Date.now())).allowed).toBe(true);
    // Counted from the third: on a busy machine the three may be more than 100 ms apart.
    const third = Date.now();
    for (let i = 0; i < 10; i++) expect(await limiter.hit(limit, key, Date.now())).toMatchObject({ allowed: false, resetSeconds: 1 });
    await sleep(Math.max(0, third + 1_100 - Date.now()));
    // All three left the window; the refused ones were never in it.
    expect(await limiter.hit(limit, key, Date.now())).toEqual({ allowed: true, limit: 3, remaining: 2, resetSeconds: 1 });
  });

  it('peek tells the window without counting', async () => {
    const key = fresh();
    const rpm = requestsPerMinute(60);
    await limiter.hit(rpm, key, Date.now());
    expect(await limiter.peek(rpm, key, Date.now())).toEqual({ allowed: true, limit: 60, remaining: 59, resetSeconds: 60 });
    expect(await limiter.peek(rpm, key, Date.now())).toEqual({ allowed: true, limit: 60, remaining: 59, resetSeconds: 60 });
    expect(await limiter.peek(rpm, fresh(), Date.now())).toEqual({ allowed: true, limit: 60, remaining: 60, resetSeconds: 60 });
  });

  it('keys never share a count, nor do two named limits of one subject', async () => {
    const a = fresh();
    const b = fresh();
    const rpm = requestsPerMinute(60);
    for (let i = 0; i < 60; i++) await limiter.hit(rpm, a, Date.now());
    expect((await limiter.hit(rpm, a, Date.now())).allowed).toBe(false);
    expect(await limiter.hit(rpm, b, Date.now())).toMatchObject({ allowed: true, remaining: 59 });
    const uploads = { name: 'uploads', windowMs: 3_600_000, capacity: 20 };
    expect(await limiter.hit(uploads, a, Date.now())).toEqual({ allowed: true, limit: 20, remaining: 19, resetSeconds: 3600 });
  });
});

describe('Redis limiter across processes', () => {
  it("the processes' clocks do not matter: two limiters whose clocks differ by an hour share one exact window", async () => {
    const [r1, r2] = [await connectTestRedis(), await connectTestRedis()];
    connections.push(r1, r2);
    const one = new RedisRateLimiter(r1, prefix, recordingLog());
    const two = new RedisRateLimiter(r2, prefix, recordingLog());
    const key = fresh();
    const rpm = requestsPerMinute(60);
    for (let i = 0; i < 30; i++) {
      expect((await one.hit(rpm, key, Date.now())).allowed).toBe(true);
      expect((await two.hit(rpm, key, Date.now() + 3_600_000)).allowed).toBe(true);
    }
    const refused = await two.hit(rpm, key, Date.now() + 3_600_000);
    expect(refused).toMatchObject({ allowed: false, remaining: 0 });
    expect(refused.resetSeconds).toBeGreaterThanOrEqual(58);
    expect(refused.resetSeconds).toBeLessThanOrEqual(60);
  });

  it("Redis unreachable: the limiter answers from this process's own window and logs it once", async () => {
    const redis = await connectTestRedis();
    const log = recordingLog();
    const limiter = new RedisRateLimiter(redis, prefix, log);
    const key = fresh();
    const rpm = requestsPerMinute(60);
    await limiter.hit(rpm, key, Date.now());
    redis.disconnect();
    for (let i = 0; i < 60; i++) expect((await limiter.hit(rpm, key, Date.now())).allowed).toBe(true);
    expect(await limiter.hit(rpm, key, Date.now())).toMatchObject({ allowed: false, remaining: 0 });
    expect(log.lines.filter((l) => l.level === 'warn')).toEqual([
      { level: 'warn', message: "Redis unreachable: rate-limit windows fall back to this process's own until it is back" },
    ]);
  });
});
