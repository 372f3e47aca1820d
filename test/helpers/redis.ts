/**
 * Redis for tests: the local server (TEST_REDIS_URL), a key prefix of its own per test
 * run, and removal of everything under that prefix afterwards. Nothing here skips: with
 * Redis down, the tests that use it fail.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A prefix no other test run uses (REDIS_PREFIX). */
export function redisPrefix(): string {
  return `test-${randomUUID()}:`;
}

/** A connected client; rejects when Redis is unreachable. */
export async function connectTestRedis(url = REDIS_URL): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  await redis.connect();
  return redis;
}

/** Deletes every key under `prefix` (the bench uses it too, with its own server). */
export async function dropRedisPrefix(prefix: string, url = REDIS_URL): Promise<void> {
  const redis = await connectTestRedis(url);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
