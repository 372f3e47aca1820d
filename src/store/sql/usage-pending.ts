/**
 * The dashboard's usage rollups, written in batches (migration 095). Closing a job adds one narrow
 * row to `usage_pending` (its id, settle or refund, the credits charged) in the closing movement's
 * own commit; a roller moves every pending row into the hourly rollups and the four narrow totals,
 * grouped, and deletes it, in one transaction. So:
 * - a close costs one small insert instead of five upserts (the ledger trigger of migrations 090
 *   and 094 did those on every close);
 * - the rollups stay exact: a pending row commits with its close and leaves only with its rollup,
 *   whatever crashes; two rollers (two processes) never take the same row (on PostgreSQL the
 *   DELETE locks what it takes; on SQLite writes are serial);
 * - the dashboard never reads stale figures: it rolls up what is pending before it reads.
 */
import { COLUMNS, insertTotal, rollupSelect, TOKEN_COLUMNS, TOTALS, UPSERT, upsertTotal } from './usage-rollup-sql.ts';
import type { Dialect } from './tables.ts';

/** How often the roller runs besides before each dashboard read. */
export const ROLL_EVERY_MS = 500;

const GROUP = 'hour, account_id, key_id, model, code';

/** The pending rows of `pending` (an alias of usage_pending or of the rows taken from it) summed as hourly rollup rows. */
function batch(dialect: Dialect, pending: string, where: string): string {
  return `SELECT ${GROUP}, sum(requests) AS requests, sum(credits) AS credits, ${TOKEN_COLUMNS.map((c) => `sum(${c}) AS ${c}`).join(', ')}
  FROM (${rollupSelect(dialect, 'p')} FROM ${pending} p JOIN jobs j ON j.id = p.job_id WHERE ${where}) AS closed GROUP BY ${GROUP}`;
}

/** PostgreSQL: one statement takes every pending row, adds it to the rollup and each total, and returns how many it took. */
export function postgresRollup(): string {
  const totals = TOTALS.map((t, i) => `t${i} AS (${insertTotal(t, 'b', true)} ${upsertTotal(t)})`);
  return `WITH taken AS (DELETE FROM usage_pending RETURNING job_id, kind, amount),
  b AS (${batch('postgres', 'taken', 'true')}),
  ${totals.join(',\n  ')},
  r AS (INSERT INTO usage_rollups ${COLUMNS} SELECT * FROM b ${UPSERT})
SELECT count(*) AS taken FROM taken`;
}

/**
 * SQLite: the statements of one transaction, run in order with the highest pending rowid bound to
 * `?` where there is one (rows added later wait for the next run): the batch into a temporary
 * table, the rollup and each total from it, then the pending rows go.
 */
export function sqliteRollup(): string[] {
  return [
    `CREATE TEMP TABLE IF NOT EXISTS usage_batch (hour INTEGER, account_id TEXT, key_id TEXT, model TEXT, code TEXT,
      requests INTEGER, credits INTEGER, ${TOKEN_COLUMNS.map((c) => `${c} INTEGER`).join(', ')})`,
    'DELETE FROM temp.usage_batch',
    `INSERT INTO temp.usage_batch ${batch('sqlite', 'usage_pending', 'p.rowid <= ?')}`,
    // `WHERE true`: SQLite needs a WHERE before ON CONFLICT in INSERT … SELECT to parse the upsert.
    `INSERT INTO usage_rollups ${COLUMNS} SELECT * FROM temp.usage_batch WHERE true ${UPSERT}`,
    ...TOTALS.map((t) => `${insertTotal(t, 'temp.usage_batch', true)} ${upsertTotal(t)}`),
    'DELETE FROM usage_pending WHERE rowid <= ?',
  ];
}

/** Runs the roller every ROLL_EVERY_MS and on demand; a run never overlaps another in this process. */
export class UsageRoller {
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly roll: () => Promise<void>) {}

  start(): void {
    this.timer ??= setInterval(() => void this.now().catch(() => undefined), ROLL_EVERY_MS).unref();
  }

  /** Rolls up what is pending now (after a run in progress, another, so nothing closed before this call is left). */
  async now(): Promise<void> {
    while (this.running !== undefined) await this.running.catch(() => undefined);
    const run = this.roll();
    this.running = run;
    try {
      await run;
    } finally {
      this.running = undefined;
    }
  }

  /** Stops the timer and rolls up the rest. */
  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.now();
  }
}
