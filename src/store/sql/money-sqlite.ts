/**
 * The money path on SQLite: each step of a movement is prepared once and cached; the
 * steps of one movement run in order inside their own savepoint, and the movements of
 * one event-loop turn share one commit (each promise settles only after that commit).
 */
import type BetterSqlite3 from 'better-sqlite3';
import { existsFlag, sqliteStatement, type AnyMovement, type MoneyEngine, type Movement, type Outcome, type Params, type Row } from './money-plan.ts';
import { TurnBatch, type Queued } from './turn-batch.ts';

type Run = Queued<{ movement: AnyMovement; params: Params }>;

export class SqliteMoney implements MoneyEngine {
  private readonly statements = new Map<string, BetterSqlite3.Statement>();
  private readonly batch = new TurnBatch<Run>((group) => this.commit(group));
  private readonly inSavepoint: (movement: AnyMovement, params: Params) => Outcome;
  private readonly commitGroup: (group: Run[]) => { ok: boolean; value: unknown }[];

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
  }

  run<In, Out>(movement: Movement<In, Out>, input: In): Promise<Out> {
    const params = movement.bind(input);
    return new Promise<Out>((resolve, reject) => {
      this.batch.add({ payload: { movement: movement as AnyMovement, params }, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  async close(): Promise<void> {
    this.batch.drain();
  }

  private commit(group: Run[]): void {
    let outcomes: { ok: boolean; value: unknown }[];
    try {
      outcomes = this.commitGroup(group);
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
    this.onRun();
    const rows = new Map<string, Row[]>();
    for (const step of movement.steps) {
      const statement = this.statement(movement, step.name);
      const flags: Params = {};
      for (const [name, produced] of rows) flags[existsFlag(name)] = produced.length > 0 ? 1 : 0;
      const produced: Row[] = [];
      for (const combination of combinations(step.from.map((name) => rows.get(name) ?? []))) {
        const bound = Object.assign({}, params, flags, ...combination) as Params;
        if (statement.reader) produced.push(...(statement.all(bound) as Row[]));
        else statement.run(bound);
      }
      rows.set(step.name, produced);
    }
    const flags: Record<string, boolean> = {};
    for (const flag of movement.flags) flags[flag] = (rows.get(flag)?.length ?? 0) > 0;
    return { row: rows.get(movement.answer)?.[0], flags };
  }

  private statement(movement: AnyMovement, stepName: string): BetterSqlite3.Statement {
    const key = `${movement.name}.${stepName}`;
    let statement = this.statements.get(key);
    if (statement === undefined) {
      const step = movement.steps.find((s) => s.name === stepName);
      if (step === undefined) throw new Error(`no step ${key}`);
      statement = this.database.prepare(sqliteStatement(step, movement));
      this.statements.set(key, statement);
    }
    return statement;
  }
}

/** Every way of picking one row from each list (one empty pick when there are no lists). */
function combinations(lists: Row[][]): Row[][] {
  return lists.reduce<Row[][]>((acc, list) => acc.flatMap((picked) => list.map((row) => [...picked, row])), [[]]);
}
