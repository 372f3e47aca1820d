/**
 * Group commit: the money movements asked for during one event-loop turn are handed
 * over together at the start of the next, so one commit (one fsync) serves them all.
 */
export class TurnBatch<T> {
  private pending: T[] = [];
  private scheduled = false;

  constructor(private readonly flush: (group: T[]) => void) {}

  add(item: T): void {
    this.pending.push(item);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.drain());
    }
  }

  /** Hands over what is pending now (also called on close). */
  drain(): void {
    this.scheduled = false;
    const group = this.pending;
    this.pending = [];
    if (group.length > 0) this.flush(group);
  }
}

/** One queued movement run and the promise waiting for it. */
export interface Queued<P> {
  payload: P;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}
