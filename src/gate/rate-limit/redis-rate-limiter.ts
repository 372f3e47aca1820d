/**
 * Sliding-window limits shared by every gateway process through Redis: one sorted set
 * per limit and subject (member per event, score = its time), and one atomic script per
 * event. The script reads Redis's clock, so the processes' clocks do not matter.
 * While Redis is unreachable each process falls back to its own in-memory windows.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { MemoryRateLimiter, windowDecision, type RateLimitDecision, type RateLimiter, type WindowLimit } from './rate-limiter.ts';

/**
 * KEYS[1] the window; ARGV: window ms, capacity, this event's member, '1' to count or '0' to peek.
 * Returns {allowed 0/1, events in the window (this one included), oldest event's time, now}.
 */
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count >= capacity then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, count, tonumber(oldest[2]), now}
end
if ARGV[4] == '1' then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  count = count + 1
end
return {1, count, 0, now}
`;
const SCRIPT_SHA = createHash('sha1').update(SCRIPT).digest('hex');

export class RedisRateLimiter implements RateLimiter {
  private readonly fallback = new MemoryRateLimiter();
  /** Members must be unique per event: several events can share a millisecond. */
  private readonly memberPrefix = randomBytes(8).toString('base64url');
  private sequence = 0;
  private degraded = false;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly log: Pick<Logger, 'warn' | 'info'>,
  ) {}

  hit(limit: WindowLimit, subject: string, now: number): Promise<RateLimitDecision> {
    return this.run(limit, subject, true, now);
  }

  peek(limit: WindowLimit, subject: string, now: number): Promise<RateLimitDecision> {
    return this.run(limit, subject, false, now);
  }

  private async run(limit: WindowLimit, subject: string, count: boolean, now: number): Promise<RateLimitDecision> {
    const key = `${this.prefix}rl:${limit.name}:${subject}`;
    const member = `${this.memberPrefix}:${(this.sequence++).toString(36)}`;
    const args = [limit.windowMs, limit.capacity, member, count ? '1' : '0'];
    let reply: unknown;
    try {
      try {
        reply = await this.redis.evalsha(SCRIPT_SHA, 1, key, ...args);
      } catch (error) {
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
        reply = await this.redis.eval(SCRIPT, 1, key, ...args);
      }
    } catch (err) {
      if (!this.degraded) {
        this.degraded = true;
        this.log.warn({ err }, "Redis unreachable: rate-limit windows fall back to this process's own until it is back");
      }
      return count ? this.fallback.hit(limit, subject, now) : this.fallback.peek(limit, subject, now);
    }
    if (this.degraded) {
      this.degraded = false;
      this.log.info('Redis reachable: rate-limit windows are shared between processes again');
    }
    const [allowed, inWindow, oldest, redisNow] = reply as [number, number, number, number];
    return windowDecision(limit, allowed === 1, inWindow, oldest, redisNow);
  }
}
