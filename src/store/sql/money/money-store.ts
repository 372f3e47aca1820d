/**
 * The money path (MoneyStore): holds, settles and refunds through the one implementation of each
 * movement, on the database's money engine (group commit). Where this process is the database's
 * only writer (SQLite, under the process lock), a run that ends with its request is reserved in
 * memory (docs/money-path.md, "In memory, on SQLite"): nothing durable until it closes (the close
 * write set) or has run `recordAfterMs` (then recorded as a durable hold).
 */
import type { HoldResult, NewHold, Refund, Settlement } from '../../money-contract.ts';
import type { JobRecord, MoneyStore } from '../../types.ts';
import type { Kysely } from 'kysely';
import type { Database } from '../tables.ts';
import type { HoldLimit } from '../../limits.ts';
import { closeMovementFor, isTrialFailure, type Closed, type Closing } from './close-movement.ts';
import { closeWriteSetFor } from './close-write-set.ts';
import { holdMovements, NEEDS_FULL_HOLD, type HoldInput, type HoldMovements } from './hold-movement.ts';
import type { MoneyEngine, Movement } from './movement.ts';
import { recordMovementFor } from './record-movement.ts';
import { Reservations, type Reservation } from './reservations.ts';

/** At most this many hints of the full hold are kept; then they start again. */
const NEEDS_FULL_HOLD_REMEMBERED = 10_000;
const NEEDS_FULL_HOLD_FOR_MS = 60_000;
/** How often in-memory runs due for recording are looked for. */
const RECORD_SWEEP_MS = 100;

/** An engine that can read at once, outside its group commit: the in-memory admission's verdict (SQLite). */
export interface ReadNow {
  readNow<In, Out>(movement: Movement<In, Out>, input: In): Out;
}

export class SqlMoney implements MoneyStore {
  /** The account of each job this process holds: its settle or refund shares that account's group commit. */
  private readonly accountOfJob = new Map<string, string>();
  /** Key families (or accounts, for runs without a key) whose hold needed the full movement, until when to go straight to it (a hint only). */
  private readonly needsFullHold = new Map<string, number>();
  /** Runs reserved in memory; undefined where other processes share the money (PostgreSQL). */
  readonly reservations: Reservations | undefined;
  private sweep: NodeJS.Timeout | undefined;
  private readonly holds: HoldMovements;
  private readonly closeMovement: ReturnType<typeof closeMovementFor>;
  private readonly closeWriteSet: ReturnType<typeof closeWriteSetFor>;
  private readonly recordMovement: ReturnType<typeof recordMovementFor>;

  /**
   * `limits`: the table the hold checks (../../limits.ts). `exclusive`: this process is the database's only writer,
   * and its engine reads at once (SQLite).
   */
  constructor(private readonly db: Kysely<Database>, private readonly engine: MoneyEngine, readonly limits: readonly HoldLimit[], private readonly exclusive?: ReadNow) {
    this.holds = holdMovements(limits);
    this.closeMovement = closeMovementFor(limits);
    this.closeWriteSet = closeWriteSetFor(limits);
    this.recordMovement = recordMovementFor(limits);
    if (exclusive !== undefined && countsReservations(limits)) this.reservations = new Reservations();
  }

  async hold(hold: NewHold): Promise<HoldResult> {
    if (this.reservations !== undefined && hold.recordAfterMs !== undefined) {
      const answer = this.holdInMemory(hold, hold.recordAfterMs, this.reservations);
      if (answer !== undefined) return answer;
    }
    let result: HoldResult;
    try {
      result = await this.runHold(hold);
    } catch (error) {
      // Idempotent by job id: a hold retried after its commit was lost (the connection broke) finds its job.
      const job = isUniqueViolation(error) ? await this.db.selectFrom('jobs').select(['account_id', 'held']).where('id', '=', hold.jobId).executeTakeFirst() : undefined;
      if (job?.account_id !== hold.accountId || Number(job.held) !== hold.amount) throw error;
      result = { ok: true };
    }
    if (result.ok) this.accountOfJob.set(hold.jobId, hold.accountId);
    return result;
  }

  /**
   * The in-memory admission: the durable hold's verdict read at once with this process's reservations added, exact
   * because nothing else writes meanwhile. Undefined when the run needs the durable hold (an account without a
   * purchase, a key with credit limits: their rules, logs and alerts live in rows).
   */
  private holdInMemory(hold: NewHold, recordAfterMs: number, reservations: Reservations): HoldResult | undefined {
    const counter = hold.keyFamilyId ?? hold.accountId;
    const input: HoldInput = { ...hold, reserved: reservations.heldOf(hold.accountId), reservedUse: reservations.usedOf(counter) };
    const outcome = (this.exclusive as ReadNow).readNow(this.holds.verdict, input);
    const row = outcome.row;
    if (row === undefined) return this.holds.answer(outcome);
    if (Number(row.a_purchase) !== 1 || Number(row.v_limited) === 1) return undefined;
    if (row.v_refusal !== null && row.v_refusal !== undefined) return this.holds.answer(outcome);
    reservations.reserve(hold, recordAfterMs);
    if (this.sweep === undefined) {
      this.sweep = setInterval(() => this.recordDue(reservations), RECORD_SWEEP_MS);
      this.sweep.unref();
    }
    return { ok: true };
  }

  /**
   * Where idle steps cost (PostgreSQL), the lean hold first, unless this key family or account needed the full one
   * last time; the lean hold writes nothing when it does not apply, and the full one then checks everything.
   */
  private async runHold(hold: NewHold): Promise<HoldResult> {
    const counter = hold.keyFamilyId ?? hold.accountId;
    if (!this.engine.skipsIdleSteps && !((this.needsFullHold.get(counter) ?? 0) > hold.at)) {
      const lean = await this.engine.run(this.holds.lean, hold, hold.accountId);
      if (lean !== NEEDS_FULL_HOLD) return lean;
      if (this.needsFullHold.size >= NEEDS_FULL_HOLD_REMEMBERED) this.needsFullHold.clear();
      // A key whose limits are removed, or an account that buys credits, goes lean again after a while.
      this.needsFullHold.set(counter, hold.at + NEEDS_FULL_HOLD_FOR_MS);
    }
    const reservations = this.reservations;
    // The durable hold counts the in-memory reservations made before its statement runs.
    const input: HoldInput = reservations === undefined
      ? hold
      : { ...hold, reserved: () => reservations.heldOf(hold.accountId), reservedUse: () => reservations.usedOf(counter) };
    return this.engine.run(this.holds.full, input, hold.accountId);
  }

  async settle(jobId: string, settlement: Settlement): Promise<number> {
    const closed = await this.close({
      jobId, refund: false, status: settlement.status, cost: settlement.cost, usage: settlement.usage,
      output: settlement.output ?? null, errorCode: null, at: settlement.at, failure: false,
      model: settlement.route?.model ?? null, attempts: settlement.route?.attempts ?? null,
    });
    return closed.charged;
  }

  async refund(jobId: string, refund: Refund): Promise<boolean> {
    return (await this.close({ jobId, ...refunded(refund), failure: isTrialFailure(refund.status, refund.errorCode) })).closed;
  }

  /** Closes a job; `lane` is the account it locks first (a job another process held: unknown, so it runs alone). */
  close(closing: Closing, lane = this.accountOfJob.get(closing.jobId)): Promise<Closed> {
    const reservation = this.reservations?.get(closing.jobId);
    if (reservation !== undefined) return this.closeReserved(reservation, closing, this.reservations as Reservations);
    this.accountOfJob.delete(closing.jobId);
    return this.engine.run(this.closeMovement, closing, lane);
  }

  /** A run reserved in memory: the close write set if it was never recorded, else the durable close (queued after its recording). */
  private async closeReserved(reservation: Reservation, closing: Closing, reservations: Reservations): Promise<Closed> {
    const jobId = closing.jobId;
    if (reservation.state === 'recording') await reservation.recording;
    if (reservation.state === 'closing') return { closed: false, charged: 0 };
    if (reservation.state === 'recorded') {
      reservations.forget(jobId);
      return this.engine.run(this.closeMovement, closing, reservation.hold.accountId);
    }
    reservation.state = 'closing';
    let closed: Closed;
    try {
      closed = await this.engine.run(this.closeWriteSet, { hold: reservation.hold, closing }, reservation.hold.accountId);
    } catch (error) {
      // Nothing was written: the run is still reserved, and a later attempt closes it.
      reservation.state = 'unrecorded';
      throw error;
    }
    reservations.unreserve(reservation);
    reservations.forget(jobId);
    return closed;
  }

  /** Records the in-memory runs still in flight `recordAfterMs` after their hold. */
  private recordDue(reservations: Reservations): void {
    if (reservations.size === 0) {
      clearInterval(this.sweep);
      this.sweep = undefined;
      return;
    }
    for (const reservation of [...reservations.due(performance.now())]) this.record(reservation, reservations);
  }

  private record(reservation: Reservation, reservations: Reservations): Promise<void> {
    reservation.state = 'recording';
    reservation.recording = this.engine.run(this.recordMovement, reservation.hold, reservation.hold.accountId).then(
      (recorded) => {
        if (!recorded) throw new Error(`recording job ${reservation.hold.jobId}: its account is gone`);
        reservations.unreserve(reservation);
        reservation.state = 'recorded';
      },
    ).catch(() => {
      // Nothing durable was written: the run stays in memory and its close writes everything (the next sweep tries again).
      if (reservation.state === 'recording') reservation.state = 'unrecorded';
    });
    return reservation.recording;
  }

  /** Micro-credits held in memory for the account and not yet recorded. */
  heldOf(accountId: string): number {
    return this.reservations?.heldOf(accountId) ?? 0;
  }

  /** Records the account's in-memory runs now (an admin or portal read of the account then sees them as durable holds). */
  async recordAccount(accountId: string): Promise<void> {
    const reservations = this.reservations;
    if (reservations === undefined || reservations.size === 0) return;
    const waits: Promise<void>[] = [];
    for (const reservation of reservations.ofAccount(accountId)) {
      if (reservation.state === 'unrecorded') waits.push(this.record(reservation, reservations));
      else if (reservation.state === 'recording' && reservation.recording !== undefined) waits.push(reservation.recording);
    }
    await Promise.all(waits);
  }

  /** A run reserved in memory and not recorded, as GET /jobs/{id} shows it (processing). */
  inFlightJob(jobId: string): JobRecord | undefined {
    const reservation = this.reservations?.get(jobId);
    if (reservation === undefined || reservation.state === 'recorded') return undefined;
    const h = reservation.hold;
    return {
      id: h.jobId, accountId: h.accountId, keyId: h.keyId, keyFamilyId: h.keyFamilyId, kind: h.kind, model: h.model, status: 'processing',
      held: h.amount, cost: null, usage: null, output: null, attempts: null, errorCode: null, clientAddress: h.clientAddress, createdAt: h.at, finishedAt: null,
    };
  }

  /** Finishes what is queued or in flight; runs still reserved in memory are recorded first (the next process refunds them). */
  async finish(): Promise<void> {
    clearInterval(this.sweep);
    this.sweep = undefined;
    const recorded = [...(this.reservations?.unrecorded() ?? [])].map((reservation) => this.record(reservation, this.reservations as Reservations));
    await this.engine.close();
    await Promise.all(recorded);
  }
}

/**
 * Whether the in-memory admission is exact for this table: every row a run adds to, except the trial rules (their
 * accounts take the durable hold), says what its usage counts of the reservations (`Reading.reserved`). A row that
 * does not would be read without the runs in memory and pass them: then every run takes the durable hold.
 */
function countsReservations(limits: readonly HoldLimit[]): boolean {
  return limits.every((l) => l.owner === 'trial' || l.adds === 0 || l.used.reserved !== undefined);
}

function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** A refund as a close (nothing charged, no usage). */
export function refunded(refund: Refund): Omit<Closing, 'jobId' | 'failure'> {
  return { refund: true, status: refund.status, cost: 0, usage: null, output: null, errorCode: refund.errorCode, errorMessage: refund.errorMessage ?? null, at: refund.at, model: null, attempts: refund.route?.attempts ?? null };
}
