/**
 * The money path (MoneyStore): holds, settles and refunds through the one implementation of each
 * movement, on the database's money engine (group commit).
 */
import type { HoldResult, NewHold, Refund, Settlement } from '../../money-contract.ts';
import type { MoneyStore } from '../../types.ts';
import type { Kysely } from 'kysely';
import type { Database } from '../tables.ts';
import type { HoldLimit } from '../../limits.ts';
import { closeMovementFor, isTrialFailure, type Closed, type Closing } from './close-movement.ts';
import { holdMovements, NEEDS_FULL_HOLD, type HoldMovements } from './hold-movement.ts';
import type { MoneyEngine } from './movement.ts';

/** At most this many hints of the full hold are kept; then they start again. */
const NEEDS_FULL_HOLD_REMEMBERED = 10_000;
const NEEDS_FULL_HOLD_FOR_MS = 60_000;

export class SqlMoney implements MoneyStore {
  /** The account of each job this process holds: its settle or refund shares that account's group commit. */
  private readonly accountOfJob = new Map<string, string>();
  /** Key families (or accounts, for runs without a key) whose hold needed the full movement, until when to go straight to it (a hint only). */
  private readonly needsFullHold = new Map<string, number>();

  private readonly holds: HoldMovements;
  private readonly closeMovement: ReturnType<typeof closeMovementFor>;

  /** `limits`: the table the hold checks (../../limits.ts). */
  constructor(private readonly db: Kysely<Database>, private readonly engine: MoneyEngine, readonly limits: readonly HoldLimit[]) {
    this.holds = holdMovements(limits);
    this.closeMovement = closeMovementFor(limits);
  }

  async hold(hold: NewHold): Promise<HoldResult> {
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
    return this.engine.run(this.holds.full, hold, hold.accountId);
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
    this.accountOfJob.delete(closing.jobId);
    return this.engine.run(this.closeMovement, closing, lane);
  }

  /** Finishes what is queued or in flight. */
  finish(): Promise<void> {
    return this.engine.close();
  }
}

function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** A refund as a close (nothing charged, no usage). */
export function refunded(refund: Refund): Omit<Closing, 'jobId' | 'failure'> {
  return { refund: true, status: refund.status, cost: 0, usage: null, output: null, errorCode: refund.errorCode, errorMessage: refund.errorMessage ?? null, at: refund.at, model: null, attempts: refund.route?.attempts ?? null };
}
