/**
 * What rests, and until when: a provider key the provider throttled or refused, a deployment
 * that failed 3 times in a row. One interface, two implementations: LocalRests within one
 * process, RedisRests (redis-rests.ts) shared by every gateway process.
 */

export type RestReason = 'throttled' | 'refused' | 'failing';

export interface Rest {
  /** Unix milliseconds when it wakes. */
  until: number;
  reason: RestReason;
}

export interface Rests {
  /** The rest of `id` at `now`, if it rests. Read on every attempt: answered from this process's memory. */
  of(id: string, now: number): Rest | undefined;
  /** `id` rests for `ms` from `now` (every process learns it); a longer rest already running is kept. */
  rest(id: string, reason: RestReason, ms: number, now: number): void;
}

/** Rests by id, in this process's memory; a woken rest is forgotten when next read. */
export class RestTable {
  private readonly rests = new Map<string, Rest>();

  of(id: string, now: number): Rest | undefined {
    const rest = this.rests.get(id);
    if (rest === undefined) return undefined;
    if (rest.until > now) return rest;
    this.rests.delete(id);
    return undefined;
  }

  /** True when this rest is new or longer than the one running. */
  set(id: string, rest: Rest): boolean {
    const known = this.rests.get(id);
    if (known !== undefined && known.until >= rest.until) return false;
    this.rests.set(id, rest);
    return true;
  }

  entries(): IterableIterator<[string, Rest]> {
    return this.rests.entries();
  }
}

export class LocalRests implements Rests {
  private readonly table = new RestTable();

  of(id: string, now: number): Rest | undefined {
    return this.table.of(id, now);
  }

  rest(id: string, reason: RestReason, ms: number, now: number): void {
    this.table.set(id, { until: now + ms, reason });
  }
}
