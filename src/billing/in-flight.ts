/**
 * Runs in flight per key, so a key revoked, rotated or expired mid-run ends its runs
 * at once (401 invalid_api_key, hold refunded).
 */
import type { KeyEvents } from '../keys/key-events.ts';

export type StopReason = 'timeout' | 'revoked' | 'client_closed';

/** A run a key change can stop (the paid-run core's runs). */
export interface StoppableRun {
  stop(reason: StopReason): void;
}

export class InFlightRuns {
  /** One run per key (the usual case) is held as itself; a Set only when a key has several. */
  private readonly byKey = new Map<string, StoppableRun | Set<StoppableRun>>();

  constructor(events: KeyEvents) {
    events.subscribe((change) => {
      if (change.kind !== 'revoked') return;
      const runs = this.byKey.get(change.keyId);
      if (runs instanceof Set) for (const run of [...runs]) run.stop('revoked');
      else runs?.stop('revoked');
    });
  }

  /** Registers a run under its key; `remove` with the same two ends it. Key expiry is the run's own timer. */
  add(keyId: string, run: StoppableRun): void {
    const runs = this.byKey.get(keyId);
    if (runs === undefined) this.byKey.set(keyId, run);
    else if (runs instanceof Set) runs.add(run);
    else this.byKey.set(keyId, new Set([runs, run]));
  }

  remove(keyId: string, run: StoppableRun): void {
    const runs = this.byKey.get(keyId);
    if (runs === run) {
      this.byKey.delete(keyId);
    } else if (runs instanceof Set) {
      runs.delete(run);
      if (runs.size === 0) this.byKey.delete(keyId);
    }
  }
}
