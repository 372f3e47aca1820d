/**
 * The money path on SQLite: each step of a movement is prepared once and cached; the
 * steps of one movement run in order inside their own savepoint, and the movements of
 * one event-loop turn share one commit (each promise settles only after that commit).
 * Rows travel as arrays (raw mode): building an object per row costs more than the
 * statement that read it.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { bound, sqliteStatement, type AnyMovement, type MoneyEngine, type Movement, type Outcome, type Params, type Row, type SqliteSlot } from './movement.ts';
import { TurnBatch, type Queued } from './turn-batch.ts';

type Run = Queued<{ movement: AnyMovement; params: Params }>;

type Source = { from: number; column: number };

interface PreparedStep {
  statement: BetterSqlite3.Statement;
  columns: readonly string[];
  /** Positions of the steps read. */
  from: number[];
  slots: { kind: SqliteSlot['kind']; name: string; step: number }[];
  /** Per slot (and the `when` column last): which of the rows read, and which column of it. */
  sources: Source[];
  when: boolean;
  gate: boolean;
  /** The values bound, refilled before every run. */
  values: unknown[];
}

interface Plan {
  steps: PreparedStep[];
  answer: number;
  flags: (readonly [string, number])[];
}

export class SqliteGroupCommit implements MoneyEngine {
  readonly skipsIdleSteps = true;
  private readonly plans = new Map<string, Plan>();
  private readonly batch = new TurnBatch<Run>((group) => this.commit(group));
  private readonly inSavepoint: (movement: AnyMovement, params: Params) => Outcome;
  private readonly commitGroup: (group: Run[]) => { ok: boolean; value: unknown }[];
  private readonly commitWhole: (group: Run[]) => { ok: boolean; value: unknown }[];

  constructor(private readonly database: BetterSqlite3.Database, private readonly onRun: () => void) {
    // A transaction inside a transaction is a savepoint: a failing movement undoes only itself.
    this.inSavepoint = database.transaction((movement: AnyMovement, params: Params) => this.steps(movement, params));
    this.commitGroup = database.transaction((group: Run[]) =>
      group.map(({ payload }) => {
        try {
          return { ok: true, value: payload.movement.read(this.inSavepoint(payload.movement, payload.params)) };
        } catch (error) {
          return { ok: false, value: error };
        }
      }),
    );
    // The usual case, where no movement fails: the group's movements without a savepoint each
    // (two statements fewer per movement). A failure undoes the whole group, which then runs
    // again with savepoints, so that the failure undoes only its own movement.
    this.commitWhole = database.transaction((group: Run[]) => group.map(({ payload }) => ({ ok: true, value: this.steps(payload.movement, payload.params) })));
  }

  run<In, Out>(movement: Movement<In, Out>, input: In): Promise<Out> {
    const params = movement.bind(input);
    return new Promise<Out>((resolve, reject) => {
      this.batch.add({ payload: { movement: movement as AnyMovement, params }, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /** Runs a movement that only reads, at once and outside the group commit (the in-memory admission's verdict). */
  readNow<In, Out>(movement: Movement<In, Out>, input: In): Out {
    this.onRun();
    return movement.read(this.steps(movement as AnyMovement, movement.bind(input)));
  }

  async close(): Promise<void> {
    this.batch.drain();
  }

  private commit(group: Run[]): void {
    for (let i = 0; i < group.length; i++) this.onRun();
    let outcomes: { ok: boolean; value: unknown }[];
    try {
      try {
        outcomes = this.commitWhole(group).map((o, i) => readOutcome((group[i] as Run).payload.movement, o.value as Outcome));
      } catch {
        outcomes = this.commitGroup(group);
      }
    } catch (error) {
      for (const run of group) run.reject(error);
      return;
    }
    group.forEach((run, i) => {
      const outcome = outcomes[i] as { ok: boolean; value: unknown };
      if (outcome.ok) run.resolve(outcome.value);
      else run.reject(outcome.value);
    });
  }

  /** The steps in order; each runs once per combination of the rows of the steps it reads. */
  private steps(movement: AnyMovement, params: Params): Outcome {
    const plan = this.plan(movement);
    const produced: unknown[][][] = [];
    for (const step of plan.steps) {
      const rows: unknown[][] = [];
      const read = step.from.map((i) => produced[i] as unknown[][]);
      if (read.every((r) => r.length === 1)) this.execute(step, read.map((r) => r[0] as unknown[]), params, produced, rows);
      else for (const combination of combinations(read)) this.execute(step, combination, params, produced, rows);
      produced.push(rows);
    }
    const flags: Record<string, boolean> = {};
    for (const [name, i] of plan.flags) flags[name] = (produced[i] as unknown[][]).length > 0;
    const first = (produced[plan.answer] as unknown[][])[0];
    let row: Row | undefined;
    if (first !== undefined) {
      row = {};
      (plan.steps[plan.answer] as PreparedStep).columns.forEach((column, i) => ((row as Row)[column] = first[i]));
    }
    return { row, flags };
  }

  /** One statement for one combination of the rows read. */
  private execute(step: PreparedStep, combination: unknown[][], params: Params, produced: unknown[][][], rows: unknown[][]): void {
    const { slots, sources, values } = step;
    if (step.when) {
      const source = sources[slots.length] as Source;
      if ((combination[source.from] as unknown[])[source.column] !== 1) return;
    }
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i] as PreparedStep['slots'][number];
      if (slot.kind === 'param') values[i] = bound(params[slot.name]);
      else if (slot.kind === 'column') {
        const source = sources[i] as Source;
        values[i] = (combination[source.from] as unknown[])[source.column];
      } else values[i] = (produced[slot.step] as unknown[][]).length > 0 ? 1 : 0;
    }
    // better-sqlite3 copies the values when it binds them, so one array per step serves every run.
    if (step.statement.reader) for (const row of step.statement.all(values) as unknown[][]) rows.push(row);
    else if (step.statement.run(values).changes > 0 && step.gate) rows.push([]);
  }

  /** The movement's steps prepared, with every name resolved to a position (once per movement). */
  private plan(movement: AnyMovement): Plan {
    let plan = this.plans.get(movement.name);
    if (plan !== undefined) return plan;
    const index = (name: string) => {
      const i = movement.steps.findIndex((s) => s.name === name);
      if (i < 0) throw new Error(`${movement.name}: no step ${name}`);
      return i;
    };
    const steps: PreparedStep[] = [];
    for (const step of movement.steps) {
      const { text, slots } = sqliteStatement(step, movement);
      const statement = this.database.prepare(text);
      if (statement.reader) statement.raw(true);
      const from = step.from.map(index);
      // Where each column comes from: which of the rows read, and which column of it (the `when` column last).
      const wanted = [...slots.map((s) => (s.kind === 'column' ? s.name : undefined)), step.when];
      const sources = wanted.map((name): Source => {
        if (name === undefined) return { from: -1, column: -1 };
        for (let f = 0; f < from.length; f++) {
          const column = (steps[from[f] as number] as PreparedStep).columns.indexOf(name);
          if (column >= 0) return { from: f, column };
        }
        throw new Error(`${movement.name}.${step.name}: no column ${name} in the rows read`);
      });
      steps.push({
        statement,
        columns: statement.reader ? statement.columns().map((c) => c.name) : [],
        from,
        slots: slots.map((s) => ({ kind: s.kind, name: s.name, step: s.kind === 'flag' ? index(s.name) : -1 })),
        sources,
        when: step.when !== undefined,
        gate: step.gate !== undefined,
        values: new Array<unknown>(slots.length),
      });
    }
    plan = { steps, answer: index(movement.answer), flags: movement.flags.map((name) => [name, index(name)] as const) };
    this.plans.set(movement.name, plan);
    return plan;
  }
}

/** Every way of picking one row from each list (one empty pick when there are no lists). */
function combinations(lists: unknown[][][]): unknown[][][] {
  return lists.reduce<unknown[][][]>((acc, list) => acc.flatMap((picked) => list.map((row) => [...picked, row])), [[]]);
}

/** A committed movement's answer (a throwing `read` fails that movement only). */
function readOutcome(movement: AnyMovement, outcome: Outcome): { ok: boolean; value: unknown } {
  try {
    return { ok: true, value: movement.read(outcome) };
  } catch (error) {
    return { ok: false, value: error };
  }
}
