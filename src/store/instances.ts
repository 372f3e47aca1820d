/** Gateway processes and their leases (crash recovery). */

/** A gateway process as it registers itself. */
export interface ProcessIdentity {
  id: string;
  host: string;
  pid: number;
  /** Boot id and pid namespace of its host (null: unknown): a pid is only checked by a process of the same scope. */
  pidScope: string | null;
}

export interface InstanceRecord extends ProcessIdentity {
  /** The database's clock until which the process is taken to be alive. */
  leaseUntil: number;
}

/**
 * The processes that own running jobs, each with a lease on the database's clock (docs/decisions.md "Process
 * leases"). Every time here is the database's clock, so the processes' own clocks never matter.
 */
export interface InstanceStore {
  /**
   * Registers this process or renews its lease: alive until the database's clock + `leaseMs`. Answers the
   * database's clock, and whether the process had a lease before that had run out (or was forgotten): its
   * runs' holds may have been refunded meanwhile.
   */
  renewLease(instance: ProcessIdentity, leaseMs: number): Promise<{ now: number; lapsed: boolean }>;
  listInstances(): Promise<InstanceRecord[]>;
  /** Forgets processes that are gone: with `expiredAt`, only those whose lease had run out by then. */
  removeInstances(ids: string[], expiredAt?: number): Promise<void>;
  /** Instance ids owning processing jobs (some may have no instance row at all). */
  runningJobOwners(): Promise<string[]>;
  /**
   * Refunds in full the processing jobs owned by these processes (not a trial failure: the gateway's fault), each
   * with one conditional update, so a job is refunded once however many processes sweep at once. With
   * `ownerLeaseExpiredAt` (the database's clock), a job is refunded only if its owner's lease had run out by then
   * (or its owner has no row): never a live process's. Returns how many.
   */
  refundJobsOf(instanceIds: string[], at: number, ownerLeaseExpiredAt?: number): Promise<number>;
}
