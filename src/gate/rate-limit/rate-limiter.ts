/**
 * Sliding-window limits, exact to the millisecond (a log of event times per subject):
 * requests per minute per key, and any other named limit with its own window and
 * capacity. In-process here; RedisRateLimiter shares the windows between processes.
 */

/** A named limit: at most `capacity` events per sliding `windowMs`, counted per subject. */
export interface WindowLimit {
  /** Names the limit where windows are shared ('rpm', 'mcp-address', 'uploads', …). */
  name: string;
  windowMs: number;
  capacity: number;
}

/** The requests-per-minute limit of a key (spec "Requests per minute"). */
export function requestsPerMinute(rpm: number): WindowLimit {
  return { name: 'rpm', windowMs: 60_000, capacity: rpm };
}

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  /** Requests left in the current window after this one. */
  remaining: number;
  /**
   * Seconds until the window has room: the whole window (60 for rpm) on an allowed request;
   * on a refusal, until the oldest event leaves, rounded up.
   */
  resetSeconds: number;
}

export interface RateLimiter {
  /** Counts one event for `subject` if its window has room. `now` is this process's clock (Redis uses its own). */
  hit(limit: WindowLimit, subject: string, now: number): RateLimitDecision | Promise<RateLimitDecision>;
  /** The window's state without counting (headers on answers refused after the key check). */
  peek(limit: WindowLimit, subject: string, now: number): RateLimitDecision | Promise<RateLimitDecision>;
}

/** The decision for a window holding `count` events (after this one, when allowed), the oldest at `oldest`. */
export function windowDecision(limit: WindowLimit, allowed: boolean, count: number, oldest: number, now: number): RateLimitDecision {
  if (!allowed) {
    return { allowed, limit: limit.capacity, remaining: 0, resetSeconds: Math.max(1, Math.ceil((oldest + limit.windowMs - now) / 1000)) };
  }
  return { allowed, limit: limit.capacity, remaining: limit.capacity - count, resetSeconds: Math.ceil(limit.windowMs / 1000) };
}

/** One subject's log: a ring of the last `capacity` event times, oldest at `head`. */
class EventLog {
  private readonly times: Float64Array;
  private head = 0;
  private count = 0;

  constructor(readonly limit: WindowLimit) {
    this.times = new Float64Array(limit.capacity);
  }

  hit(now: number): RateLimitDecision {
    const { capacity, windowMs } = this.limit;
    // Drop events that have left the window.
    while (this.count > 0 && (this.times[this.head] as number) <= now - windowMs) {
      this.head = (this.head + 1) % capacity;
      this.count--;
    }
    if (this.count >= capacity) return windowDecision(this.limit, false, this.count, this.times[this.head] as number, now);
    this.times[(this.head + this.count) % capacity] = now;
    this.count++;
    return windowDecision(this.limit, true, this.count, 0, now);
  }

  peek(now: number): RateLimitDecision {
    const { capacity, windowMs } = this.limit;
    let inWindow = 0;
    let oldest = Infinity;
    for (let i = 0; i < this.count; i++) {
      const t = this.times[(this.head + i) % capacity] as number;
      if (t > now - windowMs) {
        inWindow++;
        if (t < oldest) oldest = t;
      }
    }
    return windowDecision(this.limit, inWindow < capacity, inWindow, oldest, now);
  }

  idleSince(now: number): boolean {
    if (this.count === 0) return true;
    const newest = this.times[(this.head + this.count - 1) % this.limit.capacity] as number;
    return newest <= now - this.limit.windowMs;
  }
}

const SWEEP_EVERY_MS = 60_000;

export class MemoryRateLimiter implements RateLimiter {
  private readonly logs = new Map<string, EventLog>();
  private sweepAt = 0;

  hit(limit: WindowLimit, subject: string, now: number): RateLimitDecision {
    const id = `${limit.name} ${subject}`;
    let log = this.logs.get(id);
    if (log === undefined || !sameLimit(log.limit, limit)) {
      log = new EventLog(limit);
      this.logs.set(id, log);
    }
    const result = log.hit(now);
    if (now >= this.sweepAt) this.sweep(now);
    return result;
  }

  peek(limit: WindowLimit, subject: string, now: number): RateLimitDecision {
    const log = this.logs.get(`${limit.name} ${subject}`);
    if (log === undefined || !sameLimit(log.limit, limit)) return windowDecision(limit, true, 0, 0, now);
    return log.peek(now);
  }

  /** Forgets subjects idle for a whole window, so memory follows active subjects only. */
  private sweep(now: number): void {
    this.sweepAt = now + SWEEP_EVERY_MS;
    for (const [id, log] of this.logs) if (log.idleSince(now)) this.logs.delete(id);
  }
}

function sameLimit(a: WindowLimit, b: WindowLimit): boolean {
  return a === b || (a.capacity === b.capacity && a.windowMs === b.windowMs);
}
