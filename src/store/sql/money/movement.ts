/**
 * How a money movement is written once and run on both databases.
 *
 * A movement is a list of steps, each one SQL statement; a step may read the rows of
 * earlier steps it names in `from`, and runs once per combination of their rows: not at
 * all when one of them produced none. On PostgreSQL the steps become the CTEs of ONE
 * statement (one round trip, so a row lock lives for that statement and its commit); on
 * SQLite, which has no data-modifying CTEs, they run one after another, each prepared
 * once, inside one savepoint. The SQL text is the same; only these markers differ:
 *
 *   @name          an input parameter            PostgreSQL: $n::type       SQLite: ?
 *   :name          a column of a `from` row      PostgreSQL: the CTE column SQLite: ?
 *   {from}         the rows read                 PostgreSQL: FROM a, b      SQLite: (nothing)
 *   {lock} {lock:t} lock what is read            PostgreSQL: FOR UPDATE [OF t]   SQLite: (nothing: writes are serial)
 *   {exists:step}  whether a step produced a row PostgreSQL: EXISTS (…)     SQLite: a bound 0/1
 *   {when}         the step's `when` column = 1 (SQLite does not even run the statement otherwise)
 *   {returning}    the step's `gate`             PostgreSQL: RETURNING …    SQLite: (nothing; the changes count)
 *   {values} … {/values}  one row to insert      PostgreSQL: SELECT … FROM a, b  SQLite: VALUES (…) (half the cost of INSERT … SELECT)
 */

export type SqlType = 'text' | 'bigint' | 'integer';
export type SqlValue = string | number | null;
/** A parameter's value, or a function read when the statement binds it (in-memory reservations, counted at that moment). */
export type ParamValue = SqlValue | (() => SqlValue);
export type Params = Record<string, ParamValue>;

/** The value bound for a parameter. */
export function bound(value: ParamValue | undefined): SqlValue {
  return typeof value === 'function' ? value() : (value ?? null);
}
export type Row = Record<string, unknown>;

export interface Step {
  readonly name: string;
  readonly from: readonly string[];
  readonly sql: string;
  /** A column of the rows read that must be 1 for the step to do anything ({when} in its SQL); SQLite skips the statement otherwise. */
  readonly when?: string;
  /**
   * For a write whose row only says that it happened (later steps read it, not its columns): PostgreSQL
   * returns this ({returning}); SQLite counts the changes instead of returning a row, which costs less.
   */
  readonly gate?: string;
}

/** What a movement's run leaves: the answer step's first row, and which flagged steps produced a row. */
export interface Outcome {
  row: Row | undefined;
  flags: Readonly<Record<string, boolean>>;
}

export interface Movement<In, Out> {
  readonly name: string;
  /** Every input parameter with its type (PostgreSQL needs the types; SQLite ignores them). */
  readonly params: Readonly<Record<string, SqlType>>;
  readonly steps: readonly Step[];
  /** The step whose first row answers the movement. */
  readonly answer: string;
  /** Steps whose having produced a row the answer needs. */
  readonly flags: readonly string[];
  bind(input: In): Params;
  read(outcome: Outcome): Out;
}

/** Any movement, whatever its input and answer (the engines run them all alike; `bind` is a method, so bivariant). */
export type AnyMovement = Movement<unknown, unknown>;

const MARKER = /@(\w+)|:(\w+)|\{(from|when|returning|values|\/values|lock(?::[\w, ]+)?|exists:\w+)\}/g;

type Rendering = {
  param(name: string): string;
  column(name: string): string;
  from(step: Step): string;
  lock(table: string | undefined): string;
  exists(step: string): string;
  returning(gate: string): string;
  values(open: boolean, step: Step): string;
};

function render(step: Step, movement: AnyMovement, r: Rendering): string {
  return step.sql.replace(MARKER, (_whole, param: string | undefined, column: string | undefined, marker: string | undefined) => {
    if (param !== undefined) {
      if (!(param in movement.params)) throw new Error(`${movement.name}.${step.name}: undeclared parameter @${param}`);
      return r.param(param);
    }
    if (column !== undefined) {
      if (column in movement.params) throw new Error(`${movement.name}.${step.name}: column :${column} shadows a parameter`);
      return r.column(column);
    }
    const [kind, argument] = (marker as string).split(':') as [string, string | undefined];
    if (kind === 'from') return r.from(step);
    if (kind === 'values' || kind === '/values') return r.values(kind === 'values', step);
    if (kind === 'returning') {
      if (step.gate === undefined) throw new Error(`${movement.name}.${step.name}: {returning} without a gate`);
      return r.returning(step.gate);
    }
    if (kind === 'when') {
      if (step.when === undefined) throw new Error(`${movement.name}.${step.name}: {when} without a when column`);
      return `${r.column(step.when)} = 1`;
    }
    if (kind === 'lock') return r.lock(argument);
    return r.exists(argument as string);
  });
}

/** The answer column that carries {exists:step} on PostgreSQL. */
function existsFlag(step: string): string {
  return `${step}__exists`;
}

/** A movement as one PostgreSQL statement, and the order of its positional parameters. */
export function postgresStatement(movement: AnyMovement): { text: string; order: string[] } {
  const order: string[] = [];
  const rendering: Rendering = {
    param(name) {
      let index = order.indexOf(name);
      if (index < 0) index = order.push(name) - 1;
      return `$${index + 1}::${movement.params[name] as SqlType}`;
    },
    column: (name) => name,
    from: (step) => (step.from.length === 0 ? '' : `FROM ${step.from.join(', ')}`),
    lock: (table) => (table === undefined ? 'FOR UPDATE' : `FOR UPDATE OF ${table}`),
    exists: (step) => `EXISTS (SELECT 1 FROM ${step})`,
    returning: (gate) => `RETURNING ${gate}`,
    values: (open, step) => (open ? 'SELECT ' : ` ${rendering.from(step)}`),
  };
  const ctes = movement.steps.map((step) => `${step.name} AS (\n${render(step, movement, rendering)}\n)`);
  const flags = movement.flags.map((flag) => `, EXISTS (SELECT 1 FROM ${flag}) AS ${existsFlag(flag)}`).join('');
  return { text: `WITH ${ctes.join(',\n')}\nSELECT ${movement.answer}.*${flags} FROM ${movement.answer}`, order };
}

/** Where a value of an SQLite statement comes from, in the order of its `?` placeholders. */
export type SqliteSlot = { kind: 'param' | 'column' | 'flag'; name: string };

/** One step as an SQLite statement with positional placeholders (binding by name costs more than the statement). */
export function sqliteStatement(step: Step, movement: AnyMovement): { text: string; slots: SqliteSlot[] } {
  const slots: SqliteSlot[] = [];
  const slot = (kind: SqliteSlot['kind'], name: string) => {
    slots.push({ kind, name });
    return '?';
  };
  const text = render(step, movement, {
    param: (name) => slot('param', name),
    column: (name) => slot('column', name),
    from: () => '',
    lock: () => '',
    exists: (name) => `(${slot('flag', name)} = 1)`,
    returning: () => '',
    values: (open) => (open ? 'VALUES (' : ')'),
  });
  return { text, slots };
}

/** The answer of a PostgreSQL run: its one row carries the answer's columns and the flags. */
export function postgresOutcome(movement: AnyMovement, row: Row | undefined): Outcome {
  const flags: Record<string, boolean> = {};
  for (const flag of movement.flags) flags[flag] = row?.[existsFlag(flag)] === true;
  return { row, flags };
}

/** Runs movements on one database, a turn's worth in one commit. */
export interface MoneyEngine {
  /**
   * Whether a step whose `when` column is 0 costs nothing (SQLite does not run it); on PostgreSQL every CTE of a
   * statement is initialised, so a movement without the steps a case never runs is cheaper there.
   */
  readonly skipsIdleSteps: boolean;
  /**
   * `lane` names what the movement locks first (the account): on PostgreSQL movements of one lane
   * share a transaction and different lanes never do, so two batches cannot wait on each other.
   */
  run<In, Out>(movement: Movement<In, Out>, input: In, lane?: string): Promise<Out>;
  /** Finishes what is queued or in flight. */
  close(): Promise<void>;
}
