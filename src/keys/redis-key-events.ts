/**
 * Key events between gateway processes over a Redis pub/sub channel: a revoke, rotate or
 * edit on any process evicts the key from every process's cache and ends its runs there.
 * While the subscription is down `live` is false, so key caches read through to the
 * database; changes this process could not send are sent again when Redis is back.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { LocalKeyEvents, type KeyChange, type KeyChangeListener, type KeyEvents } from './key-events.ts';

/** How often the subscription is checked, and how long a check may take before it counts as lost. */
const CHECK_EVERY_MS = 5_000;
const CHECK_TIMEOUT_MS = 2_000;
const KINDS: ReadonlySet<string> = new Set(['revoked', 'updated', 'created']);

interface WireChange extends KeyChange {
  /** The publishing process; it has delivered the change to its own listeners already. */
  origin: string;
}

export class RedisKeyEvents implements KeyEvents {
  private readonly local = new LocalKeyEvents();
  private readonly origin = randomUUID();
  private readonly liveListeners = new Set<(live: boolean) => void>();
  private readonly unsent: string[] = [];
  private subscribed = false;
  private joining: Promise<void> | undefined;
  private readonly check: NodeJS.Timeout;

  constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis,
    private readonly channel: string,
    private readonly log: Pick<Logger, 'warn' | 'info'>,
  ) {
    subscriber.on('message', (from: string, message: string) => {
      if (from === channel) this.receive(message);
    });
    // ioredis's own resubscription is off: `live` turns true only once SUBSCRIBE is confirmed.
    subscriber.on('ready', () => void this.joinChannel().catch(() => undefined));
    subscriber.on('close', () => this.setLive(false));
    publisher.on('ready', () => void this.sendUnsent());
    // A half-open connection (no reset from the network) would lose messages silently.
    this.check = setInterval(() => void this.checkSubscription(), CHECK_EVERY_MS);
    this.check.unref();
  }

  /** Subscribes the channel; resolves once other processes' changes arrive. */
  async start(): Promise<void> {
    await this.joinChannel();
  }

  get live(): boolean {
    return this.subscribed && this.subscriber.status === 'ready';
  }

  subscribe(listener: KeyChangeListener): () => void {
    return this.local.subscribe(listener);
  }

  onLiveChange(listener: (live: boolean) => void): () => void {
    this.liveListeners.add(listener);
    return () => this.liveListeners.delete(listener);
  }

  async publish(change: KeyChange): Promise<void> {
    this.local.deliver(change);
    const wire: WireChange = { keyId: change.keyId, hash: change.hash, kind: change.kind, origin: this.origin };
    await this.send(JSON.stringify(wire));
  }

  stop(): void {
    clearInterval(this.check);
  }

  private async send(message: string): Promise<void> {
    try {
      await this.publisher.publish(this.channel, message);
    } catch (err) {
      // Other processes without the subscription read keys from the database meanwhile;
      // those still subscribed get the change when this process reaches Redis again.
      this.unsent.push(message);
      this.log.warn({ err }, 'Redis unreachable: a key change is sent to the other gateway processes when it is back');
    }
  }

  private async sendUnsent(): Promise<void> {
    const pending = this.unsent.splice(0);
    for (const message of pending) await this.send(message);
  }

  /** One SUBSCRIBE at a time (start-up and a reconnection may both ask). */
  private joinChannel(): Promise<void> {
    this.joining ??= this.subscriber
      .subscribe(this.channel)
      .then(() => this.setLive(true))
      .finally(() => (this.joining = undefined));
    return this.joining;
  }

  private receive(message: string): void {
    let wire: Partial<WireChange>;
    try {
      wire = JSON.parse(message) as Partial<WireChange>;
    } catch {
      return;
    }
    if (wire.origin === this.origin || typeof wire.keyId !== 'string' || typeof wire.hash !== 'string' || !KINDS.has(wire.kind as string)) return;
    this.local.deliver({ keyId: wire.keyId, hash: wire.hash, kind: wire.kind as KeyChange['kind'] });
  }

  private async checkSubscription(): Promise<void> {
    if (!this.live) return;
    let timer: NodeJS.Timeout | undefined;
    // After the event loop stalled (a busy machine), the timer and the reply are due together: the reply, already
    // in the socket, is read in the poll phase, before setImmediate, so a stall is not taken for a lost connection.
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => setImmediate(() => resolve('timeout')), CHECK_TIMEOUT_MS)));
    const answer = await Promise.race([this.subscriber.ping().catch(() => 'failed'), timeout]);
    clearTimeout(timer);
    if (answer === 'timeout' || answer === 'failed') this.subscriber.disconnect(true);
  }

  private setLive(live: boolean): void {
    if (this.subscribed === live) return;
    this.subscribed = live;
    if (live) this.log.info('Redis reachable: key changes are shared between processes, the key cache is in use');
    else this.log.warn('Redis unreachable: the key cache is bypassed (every key is read from the database) until it is back');
    for (const listener of this.liveListeners) listener(live);
  }
}
