/**
 * Each provider's keys (PROVIDER_N_API_KEY, comma-separated), used in turn. A key the provider
 * throttles rests until its retry-after (else 30 s); a key it refuses rests 5 minutes. A rest
 * is known by the key's hash, never the key, so processes with the keys in another order agree.
 */
import { createHash } from 'node:crypto';
import type { ProviderId } from '../catalog/catalog-file.ts';
import type { Rests } from './rests.ts';

export const THROTTLED_REST_MS = 30_000;
export const REFUSED_REST_MS = 5 * 60_000;

/** A key to call with now; or when the first throttled key wakes; or none (every key refused, or no key at all). */
export type KeyChoice = { key: string; index: number } | { wakesAt: number } | { none: true };

interface Pool {
  keys: readonly string[];
  /** Rest ids, one per key. */
  ids: readonly string[];
  next: number;
}

export class KeyPools {
  private readonly pools = new Map<ProviderId, Pool>();

  constructor(keys: Partial<Record<ProviderId, readonly string[]>>, private readonly rests: Rests) {
    for (const [provider, list] of Object.entries(keys) as [ProviderId, readonly string[]][]) {
      this.pools.set(provider, { keys: list, ids: list.map((key) => `key:${provider}:${createHash('sha256').update(key).digest('hex').slice(0, 16)}`), next: 0 });
    }
  }

  /** The next key in turn that does not rest, taken (the turn moves on). */
  take(provider: ProviderId, now: number): KeyChoice {
    return this.choose(provider, now, true);
  }

  /** What `take` would answer, without moving the turn. */
  peek(provider: ProviderId, now: number): KeyChoice {
    return this.choose(provider, now, false);
  }

  /** The key at `index` rests for `ms` (the provider's retry-after, else 30 s). */
  throttled(provider: ProviderId, index: number, ms: number, now: number): void {
    const id = this.pools.get(provider)?.ids[index];
    if (id !== undefined) this.rests.rest(id, 'throttled', ms, now);
  }

  /** The key at `index` rests 5 minutes; true when it was not resting as refused already (to log it once). */
  refused(provider: ProviderId, index: number, now: number): boolean {
    const id = this.pools.get(provider)?.ids[index];
    if (id === undefined) return false;
    const known = this.rests.of(id, now);
    this.rests.rest(id, 'refused', REFUSED_REST_MS, now);
    return known?.reason !== 'refused';
  }

  private choose(provider: ProviderId, now: number, take: boolean): KeyChoice {
    const pool = this.pools.get(provider);
    if (pool === undefined || pool.keys.length === 0) return { none: true };
    const count = pool.keys.length;
    let wakesAt = Infinity;
    for (let step = 0; step < count; step++) {
      const index = (pool.next + step) % count;
      const rest = this.rests.of(pool.ids[index] as string, now);
      if (rest === undefined) {
        if (take) pool.next = (index + 1) % count;
        return { key: pool.keys[index] as string, index };
      }
      if (rest.reason !== 'refused') wakesAt = Math.min(wakesAt, rest.until);
    }
    return wakesAt === Infinity ? { none: true } : { wakesAt };
  }
}
