/**
 * In-memory reservations (docs/money-path.md, "In memory, on SQLite"): the runs this process
 * admitted without writing anything, with the sums the admission verdict adds to the account's
 * `held` and to the key family's usage. Exact only where this process is the database's only
 * writer (SQLite, under the process lock).
 */
import type { NewHold } from '../../money-contract.ts';

/**
 * unrecorded: only here; closing: its close write set is being committed; recording: its durable hold is being
 * committed; recorded: durable (closed by the durable close).
 */
export type ReservationState = 'unrecorded' | 'closing' | 'recording' | 'recorded';

export interface Reservation {
  readonly hold: NewHold;
  /** The key family counter it counts toward (the account's own for runs without a key). */
  readonly counter: string;
  /** When it is recorded (a durable hold) if still in flight: performance.now() at the hold + recordAfterMs. */
  readonly recordAt: number;
  state: ReservationState;
  /** While recording: settles once the recording committed or failed. */
  recording?: Promise<void>;
}

export class Reservations {
  /** By job id, in the order they were made (the recording sweep stops at the first young one). */
  private readonly runs = new Map<string, Reservation>();
  private readonly heldByAccount = new Map<string, number>();
  private readonly usedByCounter = new Map<string, number>();

  /** Micro-credits this process holds in memory for the account (not yet in `accounts.held`). */
  heldOf(accountId: string): number {
    return this.heldByAccount.get(accountId) ?? 0;
  }

  /** Micro-credits this process holds in memory against the key family's counter. */
  usedOf(counter: string): number {
    return this.usedByCounter.get(counter) ?? 0;
  }

  get(jobId: string): Reservation | undefined {
    return this.runs.get(jobId);
  }

  get size(): number {
    return this.runs.size;
  }

  reserve(hold: NewHold, recordAfterMs: number): Reservation {
    const counter = hold.keyFamilyId ?? hold.accountId;
    const reservation: Reservation = { hold, counter, recordAt: performance.now() + recordAfterMs, state: 'unrecorded' };
    this.runs.set(hold.jobId, reservation);
    add(this.heldByAccount, hold.accountId, hold.amount);
    add(this.usedByCounter, counter, hold.amount);
    return reservation;
  }

  /** The sums no longer count it: its close or its recording committed (or failed). */
  unreserve(reservation: Reservation): void {
    add(this.heldByAccount, reservation.hold.accountId, -reservation.hold.amount);
    add(this.usedByCounter, reservation.counter, -reservation.hold.amount);
  }

  /** Forgets the run (it closed). */
  forget(jobId: string): void {
    this.runs.delete(jobId);
  }

  /** Unrecorded runs due for recording at `now`, oldest first. */
  *due(now: number): Generator<Reservation> {
    for (const reservation of this.runs.values()) {
      if (reservation.state !== 'unrecorded') continue;
      if (reservation.recordAt > now) return;
      yield reservation;
    }
  }

  /** The account's runs. */
  *ofAccount(accountId: string): Generator<Reservation> {
    for (const reservation of this.runs.values()) if (reservation.hold.accountId === accountId) yield reservation;
  }

  /** Every unrecorded run (shutdown records them all). */
  *unrecorded(): Generator<Reservation> {
    for (const reservation of this.runs.values()) if (reservation.state === 'unrecorded') yield reservation;
  }
}

function add(sums: Map<string, number>, key: string, amount: number): void {
  const sum = (sums.get(key) ?? 0) + amount;
  if (sum === 0) sums.delete(key);
  else sums.set(key, sum);
}
