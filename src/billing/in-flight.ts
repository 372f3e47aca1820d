/**
 * Runs in flight per key, so a key revoked, rotated or expired mid-run ends its runs
 * at once (401 invalid_api_key, hold refunded).
 */
import type { KeyEvents } from '../keys/key-events.ts';

export type StopReason = 'timeout' | 'revoked' | 'client_closed';

export class InFlightRuns {
  private readonly byKey = new Map<string, Set<(reason: StopReason) => void>>();

  constructor(events: KeyEvents) {
    events.subscribe((change) => {
      if (change.kind !== 'revoked') return;
      for (const stop of this.byKey.get(change.keyId) ?? []) stop('revoked');
    });
  }

  /** Registers a run; `expiresAt` stops it when the key expires mid-run. Returns the unregister function. */
  register(keyId: string, expiresAt: number | null, stop: (reason: StopReason) => void): () => void {
    let set = this.byKey.get(keyId);
    if (set === undefined) {
      set = new Set();
      this.byKey.set(keyId, set);
    }
    set.add(stop);
    const expiry = expiresAt === null ? undefined : setTimeout(() => stop('revoked'), Math.max(0, Math.min(expiresAt - Date.now(), 2 ** 31 - 1)));
    return () => {
      if (expiry !== undefined) clearTimeout(expiry);
      set.delete(stop);
      if (set.size === 0) this.byKey.delete(keyId);
    };
  }
}
