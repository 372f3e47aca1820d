/**
 * The SQLite Store: the shared SQL store, with the per-request money path (hold,
 * settle, refund) as cached prepared statements in synchronous transactions. The
 * generic query builder prepares every statement anew, which costs more than the
 * statements themselves here.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { HoldResult, NewHold, Settlement } from '../types.ts';
import type { Database } from './schema.ts';
import { SqlStore } from './sql-store.ts';

interface JobMoney {
  account_id: string;
  key_id: string | null;
  key_family_id: string | null;
  held: number;
  cost: number | null;
}

export class SqliteStore extends SqlStore {
  private statements: ReturnType<SqliteStore['prepare']> | undefined;

  constructor(private readonly database: BetterSqlite3.Database) {
    super('sqlite', (onQuery) => new Kysely<Database>({ dialect: new SqliteDialect({ database }), log: () => onQuery() }));
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
      `UPDATE jobs SET status = 'failed', finished_at = ?, error_code = ? WHERE id = ? AND status = 'running'
       RETURNING account_id, key_id, key_family_id, held, cost`,
    );
    const charge = db.prepare('UPDATE accounts SET held = held - ?, balance = balance - ? WHERE id = ?');

    const hold = db.transaction((h: NewHold): HoldResult => {
      if (reserve.run(h.amount, h.accountId, h.amount).changes !== 1) {
        const row = available.get(h.accountId) as { available: number } | undefined;
        return { ok: false, available: row?.available ?? 0 };
      }
      insertJob.run(h.jobId, h.accountId, h.keyId, h.keyFamilyId, h.kind, h.model, h.amount, h.instanceId, h.at);
      insertLedger.run(h.accountId, h.keyId, h.keyFamilyId, h.jobId, 'hold', h.amount, h.at);
      return { ok: true };
    });
    const settle = db.transaction((jobId: string, s: Settlement): number => {
      const job = closeSettled.get(s.status, s.at, s.cost, s.promptTokens, s.completionTokens, jobId) as JobMoney | undefined;
      if (job === undefined) return 0;
      const charged = job.cost ?? 0;
      charge.run(job.held, charged, job.account_id);
      insertLedger.run(job.account_id, job.key_id, job.key_family_id, jobId, 'settle', charged, s.at);
      return charged;
    });
    const refund = db.transaction((jobId: string, code: string, at: number): boolean => {
      const job = closeRefunded.get(at, code, jobId) as JobMoney | undefined;
      if (job === undefined) return false;
      charge.run(job.held, 0, job.account_id);
      insertLedger.run(job.account_id, job.key_id, job.key_family_id, jobId, 'refund', job.held, at);
      return true;
    });
    return { hold, settle, refund };
  }

  private get money() {
    this.statements ??= this.prepare();
    return this.statements;
  }

  override async hold(hold: NewHold): Promise<HoldResult> {
    return this.money.hold(hold);
  }

  override async settle(jobId: string, settlement: Settlement): Promise<number> {
    return this.money.settle(jobId, settlement);
  }

  override async refund(jobId: string, errorCode: string, at: number): Promise<boolean> {
    return this.money.refund(jobId, errorCode, at);
  }
}
