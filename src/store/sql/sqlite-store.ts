/**
 * The SQLite Store: the shared SQL store, with the per-request money path (hold,
 * settle, refund) as cached prepared statements (the generic query builder prepares
 * every statement anew, which costs more than the statements themselves). Money
 * operations that arrive in the same event-loop turn commit together (group commit):
 * each still runs alone in its own savepoint, in arrival order, and its promise
 * settles only after the shared commit.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { HoldResult, NewHold, Refund, Settlement } from '../types.ts';
import type { Database } from './schema.ts';
import { SqlStore } from './sql-store.ts';
import { startWalCheckpointer } from './wal-checkpointer.ts';

interface JobMoney {
  account_id: string;
  key_id: string | null;
  key_family_id: string | null;
  held: number;
  cost: number | null;
}

type Pending = { run: () => unknown; resolve: (value: unknown) => void; reject: (error: unknown) => void };

export class SqliteStore extends SqlStore {
  private statements: ReturnType<SqliteStore['prepare']> | undefined;
  private pending: Pending[] = [];
  private flushScheduled = false;

  private stopCheckpointer: (() => Promise<void>) | undefined;

  constructor(private readonly database: BetterSqlite3.Database, file: string) {
    super('sqlite', (onQuery) => new Kysely<Database>({ dialect: new SqliteDialect({ database }), log: () => onQuery() }));
    if (file !== ':memory:') this.stopCheckpointer = startWalCheckpointer(database, file);
  }

  private prepare() {
    const db = this.database;
    const reserve = db.prepare('UPDATE accounts SET held = held + ? WHERE id = ? AND balance - held >= ?');
    const available = db.prepare('SELECT balance - held AS available FROM accounts WHERE id = ?');
    const insertJob = db.prepare(
      `INSERT INTO jobs (id, account_id, key_id, key_family_id, kind, model, status, held, cost, prompt_tokens, completion_tokens, error_code, instance_id, created_at, finished_at)
       VALUES (?, ?, ?, ?, ?, ?, 'running', ?, NULL, NULL, NULL, NULL, ?, ?, NULL)`,
    );
    const insertLedger = db.prepare('INSERT INTO ledger (account_id, key_id, key_family_id, job_id, kind, amount, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
    const closeSettled = db.prepare(
      `UPDATE jobs SET status = ?, finished_at = ?, cost = MIN(MAX(?, 0), held), prompt_tokens = ?, completion_tokens = ?
       WHERE id = ? AND status = 'running' RETURNING account_id, key_id, key_family_id, held, cost`,
    );
    const closeRefunded = db.prepare(
      `UPDATE jobs SET status = ?, finished_at = ?, error_code = ? WHERE id = ? AND status = 'running'
       RETURNING account_id, key_id, key_family_id, held, cost`,
    );
    const charge = db.prepare('UPDATE accounts SET held = held - ?, balance = balance - ? WHERE id = ?');

    const hold = db.transaction((h: NewHold): HoldResult => {
      if (reserve.run(h.amount, h.accountId, h.amount).changes !== 1) {
        const row = available.get(h.accountId) as { available: number } | undefined;
        return { ok: false, reason: 'insufficient_credits', available: row?.available ?? 0 };
      }
      insertJob.run(h.jobId, h.accountId, h.keyId, h.keyFamilyId, h.kind, h.model, h.amount, h.instanceId, h.at);
      insertLedger.run(h.accountId, h.keyId, h.keyFamilyId, h.jobId, 'hold', h.amount, h.at);
      return { ok: true };
    });
    const settle = db.transaction((jobId: string, s: Settlement): number => {
      const job = closeSettled.get(s.status, s.at, s.cost, s.usage.prompt_tokens ?? null, s.usage.completion_tokens ?? null, jobId) as JobMoney | undefined;
      if (job === undefined) return 0;
      const charged = job.cost ?? 0;
      charge.run(job.held, charged, job.account_id);
      insertLedger.run(job.account_id, job.key_id, job.key_family_id, jobId, 'settle', charged, s.at);
      return charged;
    });
    const refund = db.transaction((jobId: string, r: Refund): boolean => {
      const job = closeRefunded.get(r.status, r.at, r.errorCode, jobId) as JobMoney | undefined;
      if (job === undefined) return false;
      charge.run(job.held, 0, job.account_id);
      insertLedger.run(job.account_id, job.key_id, job.key_family_id, jobId, 'refund', job.held, r.at);
      return true;
    });
    const commitGroup = db.transaction((group: Pending[]) => {
      const outcomes: { ok: boolean; value: unknown }[] = [];
      for (const op of group) {
        try {
          outcomes.push({ ok: true, value: op.run() });
        } catch (error) {
          outcomes.push({ ok: false, value: error });
        }
      }
      return outcomes;
    });
    return { hold, settle, refund, commitGroup };
  }

  /** Queues a money operation for this turn's group commit. */
  private grouped<T>(run: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ run, resolve: resolve as (value: unknown) => void, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    const group = this.pending;
    this.pending = [];
    let outcomes: { ok: boolean; value: unknown }[];
    try {
      outcomes = this.money.commitGroup(group);
    } catch (error) {
      for (const op of group) op.reject(error);
      return;
    }
    group.forEach((op, i) => {
      const outcome = outcomes[i] as { ok: boolean; value: unknown };
      if (outcome.ok) op.resolve(outcome.value);
      else op.reject(outcome.value);
    });
  }

  private get money() {
    this.statements ??= this.prepare();
    return this.statements;
  }

  override async close(): Promise<void> {
    if (this.pending.length > 0) this.flush();
    await this.stopCheckpointer?.();
    await super.close();
  }

  override hold(hold: NewHold): Promise<HoldResult> {
    return this.grouped(() => this.money.hold(hold));
  }

  override settle(jobId: string, settlement: Settlement): Promise<number> {
    return this.grouped(() => this.money.settle(jobId, settlement));
  }

  override refund(jobId: string, refund: Refund): Promise<boolean> {
    return this.grouped(() => this.money.refund(jobId, refund));
  }
}
