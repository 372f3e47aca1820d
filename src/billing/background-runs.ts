/**
 * Paid runs that outlive their request (media jobs, fine-tuning jobs): each runs in the
 * background under the paid-run core (`execute`: exactly one settle or refund), is tracked
 * while it runs, and on shutdown is told to stop (`signal`) and awaited; a run that stops
 * for shutdown `leave`s its hold for the next process to resume.
 * A run stays known here (`has`) until its settle or refund has applied: one whose close is
 * still being retried is still held in the store, and must not be adopted and run again.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { PaidRun, PaidRuns } from './paid-run.ts';

export class BackgroundRuns<T> {
  private readonly active = new Map<string, Promise<T>>();
  private readonly shutdown = new AbortController();

  /** `failed`: the outcome of a run whose body ended without one, or whose settle or refund could not be recorded. */
  constructor(private readonly runs: PaidRuns, private readonly logger: FastifyBaseLogger, private readonly failed: () => T, private readonly what: string) {}

  /** Aborted when the process shuts down. */
  get signal(): AbortSignal {
    return this.shutdown.signal;
  }

  /** Whether the run runs here, or has ended here and its close has not applied yet. */
  has(jobId: string): boolean {
    return this.active.has(jobId) || this.runs.isClosing(jobId);
  }

  /** The run's outcome once it is settled, refunded or left; undefined when it does not run here. */
  finished(jobId: string): Promise<T> | undefined {
    return this.active.get(jobId);
  }

  launch(run: PaidRun, body: (run: PaidRun) => Promise<T>): Promise<T> {
    let outcome: T | undefined;
    const finished = this.runs
      .execute(run, async (paid) => {
        outcome = await body(paid);
      })
      .then((): T => outcome ?? this.failed())
      .catch((err: unknown): T => {
        // Only the store failing to record the settle or refund gets here; the hold stays for recovery.
        this.logger.error({ err, jobId: run.jobId }, `${this.what} could not record its outcome`);
        return this.failed();
      })
      .finally(() => this.active.delete(run.jobId));
    this.active.set(run.jobId, finished);
    return finished;
  }

  /** Stops every run's waiting; running jobs stay held for the next process to resume. */
  async close(): Promise<void> {
    this.shutdown.abort();
    await Promise.allSettled([...this.active.values()]);
  }
}
