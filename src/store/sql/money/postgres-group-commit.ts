/**
 * The money path on PostgreSQL: each movement is ONE statement (its steps as
 * data-modifying CTEs), prepared once per connection, so a row lock lives for one
 * statement and its commit. Group commit: movements queue while the process's money
 * transactions are in flight (at most `inFlight` at once, default 2) and the next free
 * slot takes everything queued as one transaction, pipelined — BEGIN, the statements,
 * COMMIT written at once, one round trip — each still conditional and answered on its
 * own. The busier the path, the larger the batch: one commit (one fsync) serves them all.
 * A batch runs its movements ordered by lane (the account each locks first), so any two
 * batches, of this process or another, take account rows in the same order and cannot
 * wait on each other in a cycle. A failed batch retries its members one by one.
 */
import { Writable } from 'node:stream';
import type pg from 'pg';
import { bound, postgresOutcome, postgresStatement, type AnyMovement, type MoneyEngine, type Movement, type Params, type Row } from './movement.ts';
import { TurnBatch, type Queued } from './turn-batch.ts';

type Run = Queued<{ movement: AnyMovement; params: Params; lane: string | undefined }>;

/** Deadlock and serialization failures: the statement did nothing and may simply run again. */
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_ATTEMPTS = 4;

/** Movements of one transaction at most; the rest wait for the next slot. */
const MAX_BATCH = 256;

/** The connection's socket (pg keeps it as `connection.stream`; not in its types). */
function socketOf(client: pg.PoolClient): Writable | undefined {
  const stream = (client as { connection?: { stream?: unknown } }).connection?.stream;
  return stream instanceof Writable ? stream : undefined;
}

const byLane = (a: Run, b: Run) => ((a.payload.lane as string) < (b.payload.lane as string) ? -1 : (a.payload.lane as string) > (b.payload.lane as string) ? 1 : 0);

export class PostgresGroupCommit implements MoneyEngine {
  readonly skipsIdleSteps = false;
  private readonly statements = new Map<string, { text: string; order: string[] }>();
  private readonly batch = new TurnBatch<Run>((group) => this.dispatch(group));
  private readonly inFlight = new Set<Promise<void>>();
  private queued: Run[] = [];
  private busy = 0;

  constructor(private readonly pool: pg.Pool, private readonly onRun: () => void, private readonly groupCommit = true, private readonly slots = 2) {}

  run<In, Out>(movement: Movement<In, Out>, input: In, lane?: string): Promise<Out> {
    const params = movement.bind(input);
    return new Promise<Out>((resolve, reject) => {
      this.batch.add({ payload: { movement: movement as AnyMovement, params, lane }, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  async close(): Promise<void> {
    this.batch.drain();
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private dispatch(group: Run[]): void {
    for (const run of group) {
      // Without a lane (a job another process held) the lock order is unknown: alone, outside the batches.
      if (run.payload.lane === undefined || !this.groupCommit) this.track(this.single(run));
      else this.queued.push(run);
    }
    this.pump();
  }

  /** Fills the free transaction slots with what is queued. */
  private pump(): void {
    while (this.busy < this.slots && this.queued.length > 0) {
      const runs = this.queued.length <= MAX_BATCH ? this.queued : this.queued.slice(0, MAX_BATCH);
      this.queued = runs === this.queued ? [] : this.queued.slice(MAX_BATCH);
      this.busy++;
      const work = runs.length === 1 ? this.single(runs[0] as Run) : this.together(runs.sort(byLane));
      this.track(work.finally(() => {
        this.busy--;
        this.pump();
      }));
    }
  }

  private track(work: Promise<void>): void {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  private query(run: Run): pg.QueryConfig {
    const { movement, params } = run.payload;
    let statement = this.statements.get(movement.name);
    if (statement === undefined) {
      statement = postgresStatement(movement);
      this.statements.set(movement.name, statement);
    }
    this.onRun();
    return { name: `money_${movement.name}`, text: statement.text, values: statement.order.map((name) => bound(params[name])) };
  }

  private answer(run: Run, row: Row | undefined): void {
    try {
      run.resolve(run.payload.movement.read(postgresOutcome(run.payload.movement, row)));
    } catch (error) {
      run.reject(error);
    }
  }

  /** One movement alone: one statement, autocommitted. */
  private async single(run: Run): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await this.pool.query<Row>(this.query(run));
        this.answer(run, result.rows[0]);
        return;
      } catch (error) {
        if (attempt >= MAX_ATTEMPTS || !RETRYABLE.has((error as { code?: string }).code ?? '')) {
          run.reject(error);
          return;
        }
      }
    }
  }

  /** Movements of one lane in one transaction, written at once (the connection pipelines them). */
  private async together(runs: Run[]): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      for (const run of runs) run.reject(error);
      return;
    }
    let results: PromiseSettledResult<pg.QueryResult<Row>>[];
    let broken = false;
    try {
      // pg writes each query on its own (a writev per query): corked, the whole batch leaves in one write,
      // which halved the gateway's and PostgreSQL's system time per movement.
      const socket = socketOf(client);
      socket?.cork();
      let sent: Promise<PromiseSettledResult<pg.QueryResult<Row>>[]>;
      try {
        sent = Promise.allSettled([
          client.query<Row>('BEGIN'),
          ...runs.map((run) => client.query<Row>(this.query(run))),
          client.query<Row>('COMMIT'),
        ]);
      } finally {
        socket?.uncork();
      }
      results = await sent;
    } catch (error) {
      broken = true;
      results = [{ status: 'rejected', reason: error }];
    } finally {
      client.release(broken);
    }
    const commit = results[results.length - 1];
    const committed = results.every((r) => r.status === 'fulfilled') && commit?.status === 'fulfilled' && commit.value.command === 'COMMIT';
    if (!committed) {
      // Nothing of the batch was kept: every member runs again on its own.
      await Promise.all(runs.map((run) => this.single(run)));
      return;
    }
    runs.forEach((run, i) => this.answer(run, (results[i + 1] as PromiseFulfilledResult<pg.QueryResult<Row>>).value.rows[0]));
  }
}
