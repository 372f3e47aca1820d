/**
 * Key changes (revoke, rotate, limit edits) announced to every part that caches keys
 * or runs requests with them. One interface, two implementations: LocalKeyEvents within
 * one process, RedisKeyEvents (redis-key-events.ts) between gateway processes.
 */
export interface KeyChange {
  keyId: string;
  hash: string;
  /** revoked: the key stops at once (revoke, rotate); updated: its settings changed. */
  kind: 'revoked' | 'updated' | 'created';
}

export type KeyChangeListener = (change: KeyChange) => void;

export interface KeyEvents {
  /** Tells this process's listeners at once, and every other process's as soon as the channel carries it. */
  publish(change: KeyChange): Promise<void>;
  subscribe(listener: KeyChangeListener): () => void;
  /**
   * Whether changes made by any process reach this process's listeners now. While false
   * (the shared channel is down) a cache of keys must read every key from the database.
   */
  readonly live: boolean;
  /** Called whenever `live` flips; changes made elsewhere may have been missed around either flip. */
  onLiveChange(listener: (live: boolean) => void): () => void;
}

/** Key events within one process: every change reaches every listener synchronously. */
export class LocalKeyEvents implements KeyEvents {
  readonly live = true;
  private readonly listeners = new Set<KeyChangeListener>();

  subscribe(listener: KeyChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  publish(change: KeyChange): Promise<void> {
    this.deliver(change);
    return Promise.resolve();
  }

  /** Hands a change to the listeners (RedisKeyEvents delivers other processes' changes here too). */
  deliver(change: KeyChange): void {
    for (const listener of this.listeners) listener(change);
  }

  onLiveChange(): () => void {
    return () => undefined;
  }
}
