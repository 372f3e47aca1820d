/**
 * Requests-per-minute limiting: a sliding 60-second window per key, exact to the
 * millisecond (a log of request times). In-process here; a Redis implementation of the
 * same interface shares windows between gateway processes.
 */
export const WINDOW_MS = 60_000;

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  /** Requests left in the current window after this one. */
  remaining: number;
  /** Seconds until the window has room: 60 on an allowed request; on a refusal, until the oldest request leaves. */
  resetSeconds: number;
}

export interface RateLimiter {
  /** Counts one request if the window has room. */
  hit(keyId: string, limit: number, now: number): RateLimitDecision | Promise<RateLimitDecision>;
  /** The window's state without counting (headers on answers refused after the key check). */
  peek(keyId: string, limit: number, now: number): RateLimitDecision | Promise<RateLimitDecision>;
}

/** One key's log: a ring of the last `limit` request times, oldest at `head`. */
class RequestLog {
  private readonly times: Float64Array;
  private head = 0;
  private count = 0;

  constructor(readonly limit: number) {
    this.times = new Float64Array(limit);
  }

  hit(now: number): RateLimitDecision {
    const limit = this.limit;
    // Drop requests that have left the window.
    while (this.count > 0 && (this.times[this.head] as number) <= now - WINDOW_MS) {
      this.head = (this.head + 1) % limit;
      this.count--;
    }
    if (this.count >= limit) {
      const oldest = this.times[this.head] as number;
      return { allowed: false, limit, remaining: 0, resetSeconds: Math.max(1, Math.ceil((oldest + WINDOW_MS - now) / 1000)) };
    }
    this.times[(this.head + this.count) % limit] = now;
    this.count++;
    return { allowed: true, limit, remaining: limit - this.count, resetSeconds: WINDOW_MS / 1000 };
  }

  peek(now: number): RateLimitDecision {
    const limit = this.limit;
    let inWindow = 0;
    let oldest = Infinity;
    for (let i = 0; i < this.count; i++) {
      const t = this.times[(this.head + i) % limit] as number;
      if (t > now - WINDOW_MS) {
        inWindow++;
        if (t < oldest) oldest = t;
      }
    }
    if (inWindow >= limit) {
      return { allowed: false, limit, remaining: 0, resetSeconds: Math.max(1, Math.ceil((oldest + WINDOW_MS - now) / 1000)) };
    }
    return { allowed: true, limit, remaining: limit - inWindow, resetSeconds: WINDOW_MS / 1000 };
  }

  idleSince(now: number): boolean {
    if (this.count === 0) return true;
    const newest = this.times[(this.head + this.count - 1) % this.limit] as number;
    return newest <= now - WINDOW_MS;
  }
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly logs = new Map<string, RequestLog>();
  private sweepAt = 0;

  hit(keyId: string, limit: number, now: number): RateLimitDecision {
    let log = this.logs.get(keyId);
    if (log === undefined || log.limit !== limit) {
      log = new RequestLog(limit);
      this.logs.set(keyId, log);
    }
    const decision = log.hit(now);
    if (now >= this.sweepAt) this.sweep(now);
    return decision;
  }

  peek(keyId: string, limit: number, now: number): RateLimitDecision {
    const log = this.logs.get(keyId);
    if (log === undefined || log.limit !== limit) return { allowed: true, limit, remaining: limit, resetSeconds: WINDOW_MS / 1000 };
    return log.peek(now);
  }

  /** Forgets keys idle for a whole window, so memory follows active keys only. */
  private sweep(now: number): void {
    this.sweepAt = now + WINDOW_MS;
    for (const [keyId, log] of this.logs) if (log.idleSince(now)) this.logs.delete(keyId);
  }
}
