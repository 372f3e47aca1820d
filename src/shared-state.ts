/**
 * What gateway processes share besides the database: key events, sliding-window limits and
 * the rests of provider keys and deployments. Without REDIS_URL both live in this process; with it, in Redis (keys and the
 * channel named under REDIS_PREFIX), over two connections: one for commands (limit
 * scripts, publishing key changes) and one subscribed to key changes.
 */
import type { RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { ConfigError, type Config } from './config.ts';
import { MemoryRateLimiter, type RateLimiter } from './gate/rate-limit/rate-limiter.ts';
import { RedisRateLimiter } from './gate/rate-limit/redis-rate-limiter.ts';
import { LocalKeyEvents, type KeyEvents } from './keys/key-events.ts';
import { RedisKeyEvents } from './keys/redis-key-events.ts';
import { RedisRests } from './routing/redis-rests.ts';
import { LocalRests, type Rests } from './routing/rests.ts';

export interface SharedState {
  keyEvents: KeyEvents;
  rateLimiter: RateLimiter;
  /** Provider keys and deployments that rest (routing/). */
  rests: Rests;
  close(): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 5_000;
/** A request waits at most this long for Redis before its limit falls back to this process's window. */
const COMMAND_TIMEOUT_MS = 1_000;

export async function openSharedState(config: Pick<Config, 'redisUrl' | 'redisPrefix'>, log: Logger): Promise<SharedState> {
  if (config.redisUrl === undefined) {
    return { keyEvents: new LocalKeyEvents(), rateLimiter: new MemoryRateLimiter(), rests: new LocalRests(), close: () => Promise.resolve() };
  }
  // Loaded only when used: it costs every process start (the admin CLI's too) over 100 ms.
  const { Redis } = await import('ioredis');
  const url = config.redisUrl;
  const base: RedisOptions = {
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
  };
  // Commands never wait in a queue while Redis is away: their callers fall back at once.
  const commands = new Redis(url, {
    ...base,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: COMMAND_TIMEOUT_MS,
  });
  const subscriber = new Redis(url, { ...base, autoResubscribe: false });
  // Every reconnect attempt emits an error; outages are logged once by the users of the connections.
  let firstError: Error | undefined;
  for (const connection of [commands, subscriber]) {
    connection.on('error', (err: Error) => {
      firstError ??= err;
      log.debug({ err }, 'Redis connection error');
    });
  }
  const keyEvents = new RedisKeyEvents(commands, subscriber, `${config.redisPrefix}key-changes`, log);
  const rests = new RedisRests(commands, subscriber, config.redisPrefix, log);
  try {
    await Promise.all([commands.connect(), subscriber.connect()]);
    await keyEvents.start();
    await rests.start(Date.now());
  } catch (error) {
    keyEvents.stop();
    commands.disconnect();
    subscriber.disconnect();
    // The connection's own error (refused, timed out, wrong password) says more than "Connection is closed".
    const reason = firstError?.message ?? (error instanceof Error ? error.message : String(error));
    throw new ConfigError(
      `REDIS_URL: cannot reach Redis at ${redacted(url)} (${reason}). ` +
        'The gateway does not start without the Redis it is configured with; unset REDIS_URL to run a single process without it.',
    );
  }
  return {
    keyEvents,
    rateLimiter: new RedisRateLimiter(commands, config.redisPrefix, log),
    rests,
    async close() {
      keyEvents.stop();
      await Promise.allSettled([commands, subscriber].map((c) => (c.status === 'ready' ? c.quit() : c.disconnect())));
    },
  };
}

function redacted(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the configured address';
  }
}
