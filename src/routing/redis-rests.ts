/**
 * Rests shared by every gateway process through Redis: a rest is published on a channel
 * (every process keeps it in memory, so reading one costs no round trip) and kept as a key
 * that expires when it wakes (a process that starts later loads the running ones). Times
 * travel as durations, so the processes' clocks do not matter. While Redis is unreachable
 * each process rests what it saw itself.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RestTable, type Rest, type RestReason, type Rests } from './rests.ts';

const REASONS: ReadonlySet<string> = new Set(['throttled', 'refused', 'failing']);

interface WireRest {
  id: string;
  reason: RestReason;
  ms: number;
  /** The publishing process: it has the rest already. */
  origin: string;
}

export class RedisRests implements Rests {
  private readonly table = new RestTable();
  private readonly origin = randomUUID();
  private readonly channel: string;
  private readonly keyPrefix: string;
  private warned = false;

  constructor(
    private readonly commands: Redis,
    private readonly subscriber: Redis,
    prefix: string,
    private readonly log: Pick<Logger, 'warn'>,
  ) {
    this.channel = `${prefix}rests`;
    this.keyPrefix = `${prefix}rest:`;
    subscriber.on('message', (from: string, message: string) => {
      if (from === this.channel) this.receive(message);
    });
    subscriber.on('ready', () => void subscriber.subscribe(this.channel).catch(() => undefined));
  }

  /** Subscribes the channel and loads the rests running now. */
  async start(now: number): Promise<void> {
    await this.subscriber.subscribe(this.channel);
    let cursor = '0';
    do {
      const [next, keys] = await this.commands.scan(cursor, 'MATCH', `${this.keyPrefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length === 0) continue;
      const pipeline = this.commands.pipeline();
      for (const key of keys) pipeline.get(key).pttl(key);
      const answers = (await pipeline.exec()) ?? [];
      keys.forEach((key, i) => {
        const reason = answers[2 * i]?.[1];
        const ms = Number(answers[2 * i + 1]?.[1]);
        if (typeof reason === 'string' && REASONS.has(reason) && ms > 0) this.table.set(key.slice(this.keyPrefix.length), { until: now + ms, reason: reason as RestReason });
      });
    } while (cursor !== '0');
  }

  of(id: string, now: number): Rest | undefined {
    return this.table.of(id, now);
  }

  rest(id: string, reason: RestReason, ms: number, now: number): void {
    if (!this.table.set(id, { until: now + ms, reason })) return;
    const wire: WireRest = { id, reason, ms, origin: this.origin };
    this.commands
      .multi()
      .set(`${this.keyPrefix}${id}`, reason, 'PX', Math.max(1, Math.ceil(ms)))
      .publish(this.channel, JSON.stringify(wire))
      .exec()
      .then(() => (this.warned = false))
      .catch((err: unknown) => {
        // Only this process rests it meanwhile; the others find out for themselves.
        if (!this.warned) this.log.warn({ err }, 'Redis unreachable: a rest of a provider key or deployment is kept in this process only');
        this.warned = true;
      });
  }

  private receive(message: string): void {
    let wire: Partial<WireRest>;
    try {
      wire = JSON.parse(message) as Partial<WireRest>;
    } catch {
      return;
    }
    if (wire.origin === this.origin || typeof wire.id !== 'string' || typeof wire.ms !== 'number' || !REASONS.has(wire.reason as string)) return;
    this.table.set(wire.id, { until: Date.now() + wire.ms, reason: wire.reason as RestReason });
  }
}
