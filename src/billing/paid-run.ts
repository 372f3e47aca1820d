/**
 * The paid-run core every billed route goes through:
 *   quote (the route's) → one atomic hold with every limit (`admit`) → the run under one
 *   abort signal (client close, provider timeout, key revoked or expired) → settle or
 *   refund exactly once (`execute` guarantees it in a `finally`, panics included).
 * It knows nothing of chat: a route gives it a quote in micro-credits, a run function,
 * and the usage it measured, in whatever units it bills.
 */
import type { FastifyBaseLogger } from 'fastify';
import { GatewayError, internalError, invalidApiKey } from '../shared/errors.ts';
import { NO_RUN_METRICS, type RunMetrics } from '../shared/run-metrics.ts';
import { RECORD_AFTER_MS, RUN_ENDS_WITH_REQUEST, type HoldResult, type JobAttempt, type JobKind, type MoneyStore, type NewHold, type Refund, type RouteFacts, type Settlement, type UsageUnits } from '../store/money-contract.ts';
import type { ApiKeyRecord } from '../store/types.ts';
import { limitsOf } from '../store/limits.ts';
import { refusalError, type RefusalCodes } from './hold-refusal.ts';
import type { InFlightRuns, StopReason, StoppableRun } from './in-flight.ts';

export interface PaidRunDeps {
  /** The store's money part. */
  money: MoneyStore;
  inFlight: InFlightRuns;
  instanceId: string;
  providerTimeoutMs: number;
  logger: FastifyBaseLogger;
  now: () => number;
  /** Holds in flight for GET /metrics. */
  metrics?: RunMetrics;
  /** Closes whose first attempt failed and that are being retried, by job id (PaidRuns keeps them, to wait for them on shutdown). */
  retrying?: Map<string, Promise<void>>;
}

/** The key a run is charged to, as the access gate resolved it. */
export interface PayingKey {
  id: string;
  familyId: string;
  accountId: string;
  expiresAt: number | null;
}

/** The key a run is charged to, from the key the gate resolved. */
export function payingKeyOf(key: Pick<ApiKeyRecord, 'id' | 'familyId' | 'accountId' | 'expiresAt'>): PayingKey {
  return { id: key.id, familyId: key.familyId, accountId: key.accountId, expiresAt: key.expiresAt };
}

export interface AdmissionRequest {
  jobId: string;
  kind: JobKind;
  /** The catalog slug that runs. */
  model: string;
  key: PayingKey;
  /** The quote: the most this run can cost, in micro-credits. */
  quote: number;
  clientAddress: string | null;
  /** False for fine-tuning (never counts toward key credit limits). */
  countsTowardKeyLimits?: boolean;
  /** The route's error codes and wording for a refused hold. */
  refusal: RefusalCodes;
}

const STOP_ERRORS: Record<StopReason, () => GatewayError> = {
  timeout: () => new GatewayError('provider_timeout', 'The model provider gave no answer in time. Nothing was charged; retry.'),
  revoked: invalidApiKey,
  client_closed: () => new GatewayError('client_closed_request', 'The client closed the request.'),
};

/** How a run closed, for whoever follows it to the end (the provider-call glue's traces). */
/** Why a run is refunded: a GatewayError, or its parts. */
export interface RefundReason {
  code: string;
  message: string;
  logCause?: string | undefined;
}

export type RunClose =
  | { settled: true; usage: UsageUnits; status: Settlement['status'] }
  | { settled: false; errorCode: string; status: Refund['status'] };

/** Key expiry timers are capped at what setTimeout can wait. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * One admitted run: its abort signal, why it stopped, and its money outcome (settled or
 * refunded once). Registered with the in-flight runs as itself: no closure per run.
 */
export class PaidRun implements StoppableRun {
  private readonly controller = new AbortController();
  private reason: StopReason | undefined;
  private outcome: Promise<unknown> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private expiry: NodeJS.Timeout | undefined;
  /** The key the run is registered under, until it is released. */
  private watchedKey: string | undefined;
  private readonly metrics: RunMetrics;
  /** When the provider wait runs out (performance.now()), while it runs. */
  private waitEnds = Infinity;
  private closeListener: ((close: RunClose) => void) | undefined;
  /** How the provider-call glue routed the run: written on the job record with its close. */
  readonly route: { model?: string; attempts: JobAttempt[] } = { attempts: [] };

  /** Without a key: a run resumed from a process that is gone (no key watch, no provider wait). */
  constructor(readonly jobId: string, readonly quote: number, private readonly deps: PaidRunDeps, key: PayingKey | undefined) {
    this.metrics = deps.metrics ?? NO_RUN_METRICS;
    if (key !== undefined) {
      this.watchedKey = key.id;
      deps.inFlight.add(key.id, this);
      if (key.expiresAt !== null) this.expiry = setTimeout(stopAsRevoked, Math.max(0, Math.min(key.expiresAt - Date.now(), MAX_TIMER_MS)), this);
      this.armTimeout();
    }
    this.metrics.holdOpened();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why the run was stopped early, if it was. */
  get stopReason(): StopReason | undefined {
    return this.reason;
  }

  /** True once the run is settled or refunded. */
  get finished(): boolean {
    return this.outcome !== undefined;
  }

  /** (Re)starts the provider wait; re-arming refreshes the one timer instead of making a new one per chunk. */
  armTimeout(): void {
    if (this.timer === undefined) this.timer = setTimeout(stopAsTimedOut, this.deps.providerTimeoutMs, this);
    else this.timer.refresh();
    this.waitEnds = performance.now() + this.deps.providerTimeoutMs;
  }

  /** Milliseconds left of the provider wait (Infinity for a run without one): retries and rests wait only within it. */
  waitLeftMs(): number {
    return this.timer === undefined ? Infinity : Math.max(0, this.waitEnds - performance.now());
  }

  /** `listener` hears how the run closed, once, when it settles or refunds (one listener per run). */
  observeClose(listener: (close: RunClose) => void): void {
    this.closeListener = listener;
  }

  /** Throws when the run was stopped early (its answer must not be delivered as a success). */
  throwIfStopped(): void {
    if (this.reason !== undefined) throw new Error(`run stopped: ${this.reason}`);
  }

  stop(reason: StopReason): void {
    if (this.reason !== undefined || this.outcome !== undefined) return;
    this.reason = reason;
    this.controller.abort();
  }

  /** The error to answer with: the stop reason's, else the thrown one, else an internal error (logged). */
  errorFor(thrown: unknown): GatewayError {
    if (this.reason !== undefined) return STOP_ERRORS[this.reason]();
    if (thrown instanceof GatewayError) return thrown;
    this.deps.logger.error({ err: thrown, jobId: this.jobId }, 'paid run failed');
    return internalError();
  }

  /** Bills the usage (the charge is capped at the hold) and releases the rest. Only the first settle or refund counts. */
  settle(cost: number, usage: UsageUnits, status: Settlement['status'] = 'succeeded', output?: unknown): Promise<number> {
    if (this.outcome !== undefined) return Promise.resolve(0);
    this.release();
    const settlement: Settlement = { cost, usage, status, at: this.deps.now() };
    if (output !== undefined) settlement.output = output;
    const route = this.routeFacts();
    if (route !== undefined) settlement.route = route;
    this.closeListener?.({ settled: true, usage, status });
    // If the first attempt fails, the settle applies later, capped at the hold as always: the run's answer is still due.
    const willCharge = Math.min(Math.max(0, Math.ceil(cost)), this.quote);
    const charged = untilClosed(() => this.deps.money.settle(this.jobId, settlement), this.deps, this.jobId, willCharge);
    this.outcome = charged;
    this.metrics.holdClosed();
    return charged;
  }

  /**
   * Releases the whole hold. Only the first settle or refund counts. `error`: its code, or the error
   * the client is answered with (its message, and why for the operator, kept on the job record).
   */
  refund(error: string | RefundReason, status: Refund['status'] = 'failed'): Promise<boolean> {
    if (this.outcome !== undefined) return Promise.resolve(false);
    this.release();
    const errorCode = typeof error === 'string' ? error : error.code;
    const closing: Refund = { status, errorCode, at: this.deps.now() };
    if (typeof error !== 'string') closing.errorMessage = error.logCause === undefined ? error.message : `${error.message} (${error.logCause})`;
    const route = this.routeFacts();
    if (route?.attempts !== undefined) closing.route = { attempts: route.attempts };
    this.closeListener?.({ settled: false, errorCode, status });
    const refunded = untilClosed(() => this.deps.money.refund(this.jobId, closing), this.deps, this.jobId, true);
    this.outcome = refunded;
    this.metrics.holdClosed();
    return refunded;
  }

  /**
   * The provider has taken the run, which may now outlive its request (a media job at its
   * host): neither the provider wait nor the key's revocation or expiry stops it any more;
   * the route's own deadline does.
   */
  detach(): void {
    if (this.outcome === undefined) this.release();
  }

  /**
   * The process is shutting down while the run goes on at its provider: the hold stays, for
   * the process that resumes the run to settle or refund. Counts as the run's outcome here.
   */
  leave(): void {
    if (this.outcome !== undefined) return;
    this.release();
    this.outcome = Promise.resolve();
    this.metrics.holdClosed();
  }

  /** Waits for the settle or refund to be durable. */
  async done(): Promise<void> {
    await this.outcome;
  }

  private routeFacts(): RouteFacts | undefined {
    const { model, attempts } = this.route;
    if (model === undefined && attempts.length === 0) return undefined;
    const facts: RouteFacts = {};
    if (model !== undefined) facts.model = model;
    if (attempts.length > 0) facts.attempts = attempts;
    return facts;
  }

  private release(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.expiry !== undefined) clearTimeout(this.expiry);
    this.expiry = undefined;
    if (this.watchedKey !== undefined) this.deps.inFlight.remove(this.watchedKey, this);
    this.watchedKey = undefined;
  }
}

/** Waits between attempts to close a hold: from 200 ms, doubling, at most 10 s. */
function* closeRetryWaits(): Generator<number> {
  for (let wait = 200; ; wait = Math.min(wait * 2, 10_000)) yield wait;
}

/**
 * Calls `attempt` after each wait until it answers true; a failed attempt is logged and the next wait follows.
 * Timers do not keep the process alive (a stopping gateway waits for retried closes itself).
 */
async function afterEachWait(waits: Iterable<number>, attempt: () => Promise<boolean>, logger: FastifyBaseLogger, jobId: string, failed: string): Promise<void> {
  for (const wait of waits) {
    await new Promise((resolve) => setTimeout(resolve, wait).unref());
    try {
      if (await attempt()) return;
    } catch (err) {
      logger.error({ err, jobId }, failed);
    }
  }
}

/**
 * Closes a hold, and if that fails (a dropped connection, a deadlock past its retries) tries again in
 * the background until it succeeds, so the credits are not held until the process ends. A close only
 * applies to a job still processing, so an attempt after one that did commit (its answer lost) moves
 * nothing. The caller gets the first attempt's answer, or when it failed, `willApply`: what the close
 * applies once it succeeds (the charge capped at the hold; a refund). The run's answer does not wait
 * for the database to come back, and a run settled later is never answered as an internal error.
 * A close being retried is kept in `deps.retrying` until it applies: the job is still held meanwhile.
 */
function untilClosed<T>(close: () => Promise<T>, deps: PaidRunDeps, jobId: string, willApply: T): Promise<T> {
  return close().catch((failure: unknown) => {
    deps.logger.error({ err: failure, jobId }, 'closing the hold failed; trying again in the background');
    const closed = async () => {
      await close();
      deps.logger.warn({ jobId }, 'hold closed on a later attempt');
      return true;
    };
    const retrying = afterEachWait(closeRetryWaits(), closed, deps.logger, jobId, 'closing the hold failed; trying again');
    deps.retrying?.set(jobId, retrying);
    void retrying.finally(() => deps.retrying?.delete(jobId));
    return willApply;
  });
}

/**
 * When to look for a hold whose answer was lost: its transaction may still commit on the database after the
 * connection broke, so more than once; a refund finds no processing job (and moves nothing) when it did not.
 */
export const UNCERTAIN_HOLD_CHECKS_MS = [1_000, 10_000, 60_000];

function refundUncertainHold(deps: PaidRunDeps, jobId: string): Promise<void> {
  const refunded = async () => {
    const done = await deps.money.refund(jobId, { status: 'failed', errorCode: 'internal_error', at: deps.now() });
    if (done) deps.logger.warn({ jobId }, 'a hold whose answer was lost had committed: refunded');
    return done;
  };
  return afterEachWait(UNCERTAIN_HOLD_CHECKS_MS, refunded, deps.logger, jobId, 'refunding a hold whose answer was lost failed; trying again');
}

function stopAsTimedOut(run: PaidRun): void {
  run.stop('timeout');
}

function stopAsRevoked(run: PaidRun): void {
  run.stop('revoked');
}

export class PaidRuns {
  private readonly retrying = new Map<string, Promise<void>>();
  private readonly deps: PaidRunDeps;

  constructor(deps: PaidRunDeps) {
    this.deps = { ...deps, retrying: this.retrying };
  }

  /** Whether this run's settle or refund is being retried: the job is still held, and must not be adopted and run again. */
  isClosing(jobId: string): boolean {
    return this.retrying.has(jobId);
  }

  /**
   * Waits, at most `ms`, for the settles and refunds being retried after a failed first attempt to apply.
   * A stopping process calls it while it still renews its lease: else a peer would refund a run whose
   * answer was delivered (billed once the close applies), or run again a media job answered as refunded.
   * True when none is left.
   */
  async retriedClosesApplied(ms: number): Promise<boolean> {
    if (this.retrying.size === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    const applied = Promise.all([...this.retrying.values()]).then(() => true);
    const done = await Promise.race([applied, waited]);
    clearTimeout(timer);
    return done && this.retrying.size === 0;
  }

  /** The atomic hold with every limit; a refusal is thrown as the route's error and nothing is created. */
  async admit(request: AdmissionRequest): Promise<PaidRun> {
    const hold: NewHold = {
      jobId: request.jobId,
      accountId: request.key.accountId,
      keyId: request.key.id,
      keyFamilyId: request.key.familyId,
      kind: request.kind,
      model: request.model,
      amount: request.quote,
      at: this.deps.now(),
      instanceId: this.deps.instanceId,
      clientAddress: request.clientAddress,
      countsTowardKeyLimits: request.countsTowardKeyLimits ?? true,
    };
    if (RUN_ENDS_WITH_REQUEST[request.kind]) hold.recordAfterMs = RECORD_AFTER_MS;
    let result: HoldResult;
    try {
      result = await this.deps.money.hold(hold);
    } catch (failure) {
      // The hold's answer is lost (a connection that broke around the commit): it may have committed. No run
      // follows it, so it is refunded if it exists, rather than holding the credits until this process ends.
      void refundUncertainHold(this.deps, hold.jobId);
      throw failure;
    }
    if (!result.ok) throw refusalError(result, request.quote, request.refusal, this.deps.now(), limitsOf(this.deps.money));
    return new PaidRun(request.jobId, request.quote, this.deps, request.key);
  }

  /** A run admitted by a process that is gone and resumed by this one (its hold is `quote`). */
  resume(jobId: string, quote: number): PaidRun {
    return new PaidRun(jobId, quote, this.deps, undefined);
  }

  /**
   * Runs `work` under `run`. Exactly one settle or refund happens: the work settles or
   * refunds itself; whatever it leaves open (a thrown error, a forgotten branch) is
   * refunded here with the error it ended on.
   */
  async execute(run: PaidRun, work: (run: PaidRun) => Promise<void>): Promise<void> {
    try {
      await work(run);
    } catch (thrown) {
      if (!run.finished) await run.refund(run.errorFor(thrown));
      else this.deps.logger.error({ err: thrown, jobId: run.jobId }, 'paid run failed after its money was settled');
    } finally {
      if (!run.finished) await run.refund('internal_error');
      await run.done();
    }
  }
}
