/**
 * Crash recovery: holds left by gateway processes that are gone are refunded in full.
 * A process on this host is gone when its pid is not alive; one elsewhere when it has
 * not beaten for ORPHAN_AFTER_MS (PostgreSQL deployments with several hosts).
 * Runs that go on at their provider without their process (media jobs the host has
 * taken) are first adopted by this process, to be resumed, and so are not refunded.
 */
import { hostname } from 'node:os';
import type { Store } from '../store/types.ts';

export const HEARTBEAT_MS = 10_000;
export const ORPHAN_AFTER_MS = 30_000;

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class OrphanRecovery {
  readonly self: { id: string; host: string; pid: number };

  /** `adopt` takes over, before the refund, the runs of gone processes that are to be resumed. */
  constructor(private readonly store: Store, instanceId: string, private readonly adopt?: (goneInstanceIds: string[]) => Promise<void>) {
    this.self = { id: instanceId, host: hostname(), pid: process.pid };
  }

  /** Beats, then refunds the runs of every process that is gone. Returns how many runs were refunded. */
  async sweep(now = Date.now()): Promise<number> {
    await this.store.heartbeat(this.self, now);
    const instances = await this.store.listInstances();
    const known = new Map(instances.map((i) => [i.id, i]));
    const gone = instances
      .filter((i) => i.id !== this.self.id)
      .filter((i) => (i.host === this.self.host ? !pidAlive(i.pid) : i.heartbeatAt < now - ORPHAN_AFTER_MS))
      .map((i) => i.id);
    // Running jobs whose process never registered are orphans too.
    const unregistered = (await this.store.runningJobOwners()).filter((id) => id !== this.self.id && !known.has(id));
    if (this.adopt !== undefined && gone.length + unregistered.length > 0) await this.adopt([...gone, ...unregistered]);
    const refunded = await this.store.refundJobsOf([...gone, ...unregistered], now);
    await this.store.removeInstances(gone);
    return refunded;
  }
}
