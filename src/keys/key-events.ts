/**
 * Key changes (revoke, rotate, limit edits) announced to every part that caches keys
 * or runs requests with them. In-process here; a Redis channel carries the same events
 * between gateway processes.
 */
export interface KeyChange {
  keyId: string;
  hash: string;
  /** revoked: the key stops at once (revoke, rotate); updated: its settings changed. */
  kind: 'revoked' | 'updated' | 'created';
}

type Listener = (change: KeyChange) => void;

export class KeyEvents {
  private readonly listeners = new Set<Listener>();

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  publish(change: KeyChange): void {
    for (const listener of this.listeners) listener(change);
  }
}
