/**
 * Crash recovery by process leases (docs/decisions.md "Process leases"). Each gateway process
 * holds a lease on the database's clock, renewed every third of its length while the process
 * lives; the holds of its runs are its own while the lease lives. A sweep (at start-up and at
 * every renewal) refunds in full the holds of processes whose lease has run out, each with one
 * conditional update (still processing AND owner's lease run out), so two survivors sweeping
 * at once refund each hold once, and a live process's runs never. At start-up only, the lease
 * of a process on the same boot and pid namespace whose pid is dead ends at once (a restart
 * refunds without waiting a lease): a dead pid there can only be a process that has ended.
 * Runs that go on at their provider without their process (media jobs the host has taken)
 * are first adopted by this process, to be resumed, and so are not refunded.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { MoneyStore } from '../store/money-contract.ts';
import type { InstanceStore, ProcessIdentity } from '../store/types.ts';

export const DEFAULT_LEASE_MS = 30_000;

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Where this process's pid means this process: the kernel's boot id and the pid namespace (Linux); null elsewhere (no pid check). */
export function currentPidScope(): string | null {
  try {
    return `${readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()}/${readlinkSync('/proc/self/ns/pid')}`;
  } catch {
    return null;
  }
}

export interface RecoveryOptions {
  leaseMs?: number;
  /** Takes over, before the refund, the runs of gone processes that are to be resumed (those whose owner's lease ran out by then). */
  adopt?: (goneInstanceIds: string[], ownerLeaseExpiredAt: number) => Promise<void>;
  /** This process found its own lease run out at a renewal (it was paused or cut off): its holds may have been refunded. */
  onLapse?: () => void;
}

export class OrphanRecovery {
  readonly self: ProcessIdentity;
  readonly leaseMs: number;
  /** performance.now() when the latest successful renewal was sent. */
  private renewedAt = Number.NEGATIVE_INFINITY;
  private swept = false;

  constructor(private readonly store: InstanceStore, instanceId: string, private readonly options: RecoveryOptions = {}) {
    this.self = { id: instanceId, host: hostname(), pid: process.pid, pidScope: currentPidScope() };
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  }

  /** Renews this process's lease; answers the database's clock. */
  async renew(): Promise<number> {
    const sent = performance.now();
    const { now, lapsed } = await this.store.renewLease(this.self, this.leaseMs);
    this.renewedAt = sent;
    if (lapsed) this.options.onLapse?.();
    return now;
  }

  /** Renews first unless the lease was renewed within the last half of its length (a process that was paused renews before it holds anew). */
  async ensureLease(): Promise<void> {
    if (performance.now() - this.renewedAt >= this.leaseMs / 2) await this.renew();
  }

  /** Renews, then refunds the runs of every process that is gone. Returns how many runs were refunded. */
  async sweep(): Promise<number> {
    const now = await this.renew();
    const instances = (await this.store.listInstances()).filter((i) => i.id !== this.self.id);
    const atStart = !this.swept;
    this.swept = true;
    const ended = atStart
      ? instances.filter((i) => i.pidScope !== null && i.pidScope === this.self.pidScope && !pidAlive(i.pid)).map((i) => i.id)
      : [];
    // Their leases end now: a dead pid in this scope is a process that has ended.
    await this.store.removeInstances(ended);
    const expired = instances.filter((i) => !ended.includes(i.id) && i.leaseUntil <= now).map((i) => i.id);
    // Running jobs whose process has no row (never registered, forgotten, or ended just now) have no lease.
    const known = new Set([this.self.id, ...instances.filter((i) => !ended.includes(i.id)).map((i) => i.id)]);
    const gone = [...expired, ...(await this.store.runningJobOwners()).filter((id) => !known.has(id))];
    if (this.options.adopt !== undefined && gone.length > 0) await this.options.adopt(gone, now);
    const refunded = await this.store.refundJobsOf(gone, now, now);
    await this.store.removeInstances(expired, now);
    return refunded;
  }
}

/** The money path with this process's lease made sure of before each hold. */
export function holdsUnderLease(money: MoneyStore, recovery: OrphanRecovery): MoneyStore {
  return {
    limits: money.limits,
    hold: async (hold) => {
      await recovery.ensureLease();
      return money.hold(hold);
    },
    settle: (jobId, settlement) => money.settle(jobId, settlement),
    refund: (jobId, refund) => money.refund(jobId, refund),
  };
}
