/** Accounts, credits and the ledger (AccountStore) on Kysely. */
import { type Kysely, type Selectable, sql } from 'kysely';
import { randomUUID } from 'node:crypto';
import type { AccountPatch, AccountRecord, AccountStore, LedgerEntry, LedgerKind, NewAccount } from '../types.ts';
import { startOfUtcMonth } from '../../shared/time.ts';
import { HOLD_LIMITS, limitSettings, settingsFromRow, settingsToColumns, type HoldLimit, type LimitSetting } from '../limits.ts';
import type { AccountsTable, Database } from './tables.ts';

/** The money engine's runs reserved in memory (SQLite): an account read records them first, so it sees what is durable. */
export interface InMemoryRuns {
  /** Micro-credits still held in memory for the account (reserved since the recording). */
  heldOf(accountId: string): number;
  /** Records the account's runs reserved in memory as durable holds, and waits for the commit. */
  recordAccount(accountId: string): Promise<void>;
}

const NO_RUNS: InMemoryRuns = { heldOf: () => 0, recordAccount: async () => undefined };

export class SqlAccounts implements AccountStore {
  private readonly settings: readonly LimitSetting[];

  /** `inMemory`: the money engine's runs reserved in memory (SQLite). */
  constructor(private readonly db: Kysely<Database>, limits: readonly HoldLimit[] = HOLD_LIMITS, private readonly inMemory: InMemoryRuns = NO_RUNS) {
    this.settings = limitSettings(limits, 'account');
  }

  async createAccount(input: NewAccount): Promise<AccountRecord> {
    const row: AccountsTable = {
      id: randomUUID(),
      name: input.name,
      email: input.email,
      created_at: input.createdAt,
      has_purchase: input.hasPurchase ? 1 : 0,
      billing_emails: input.billingEmails ? 1 : 0,
      monthly_spending_limit: null,
      balance: 0,
      held: 0,
      month_start: 0,
      month_settled: 0,
      trial_runs: '',
      trial_failures: 0,
    };
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('accounts').values(row).execute();
      // The usage counter of runs without a key (the hold locks a counter row with the account row).
      await trx.insertInto('key_families').values({ family_id: row.id, account_id: row.id, day_start: 0, day_used: 0, month_start: 0, month_used: 0 }).execute();
    });
    return accountOf(row, this.settings);
  }

  async getAccount(id: string): Promise<AccountRecord | undefined> {
    await this.inMemory.recordAccount(id);
    const row = await this.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : this.withReserved(accountOf(row, this.settings));
  }

  private withReserved(account: AccountRecord): AccountRecord {
    const reserved = this.inMemory.heldOf(account.id);
    return reserved === 0 ? account : { ...account, held: account.held + reserved };
  }

  async updateAccount(id: string, patch: AccountPatch): Promise<AccountRecord | undefined> {
    const values: Partial<AccountsTable> = settingsToColumns(patch, this.settings);
    if (patch.billingEmails !== undefined) values.billing_emails = patch.billingEmails ? 1 : 0;
    if (Object.keys(values).length > 0) await this.db.updateTable('accounts').set(values).where('id', '=', id).execute();
    return this.getAccount(id);
  }

  async addCredits(accountId: string, amount: number, kind: 'topup' | 'grant', at: number): Promise<AccountRecord | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('accounts')
        .set((eb) => ({
          balance: eb('balance', '+', amount),
          ...(kind === 'topup' ? { has_purchase: 1 } : {}),
        }))
        .where('id', '=', accountId)
        .returningAll()
        .executeTakeFirst();
      if (updated === undefined) return undefined;
      await trx
        .insertInto('ledger')
        .values({ account_id: accountId, key_id: null, key_family_id: null, job_id: null, kind, amount, created_at: at })
        .execute();
      return this.withReserved(toAccount(updated));
    });
  }

  async accountSpentSince(accountId: string, since: number): Promise<number> {
    // Since a month's start, the spending limit's counter holds the answer: every settlement adds its
    // charge to the counter of its own month (money/close-movement.ts), and the month's settle rows are those
    // charges. Reading it spares the sum over the account's whole ledger (the dashboard's account page).
    if (since === startOfUtcMonth(since)) {
      const counter = await this.db.selectFrom('accounts').select(['month_start', 'month_settled']).where('id', '=', accountId).executeTakeFirst();
      const monthStart = Number(counter?.month_start ?? 0);
      if (monthStart === since) return Number(counter?.month_settled ?? 0);
      // No settlement since: it would have moved the counter to its month.
      if (monthStart < since) return 0;
    }
    const row = await this.db
      .selectFrom('ledger')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('amount'), sql<number>`0`).as('total'))
      .where('account_id', '=', accountId)
      .where('kind', '=', 'settle')
      .where('created_at', '>=', since)
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  async listLedger(accountId: string, limit: number): Promise<LedgerEntry[]> {
    await this.inMemory.recordAccount(accountId);
    const rows = await this.db
      .selectFrom('ledger')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      id: Number(r.id),
      accountId: r.account_id,
      keyId: r.key_id,
      jobId: r.job_id,
      kind: r.kind as LedgerKind,
      amount: Number(r.amount),
      createdAt: Number(r.created_at),
    }));
  }
}

/** An accounts row as the store's record (shared by every query that reads accounts). */
export function toAccount(row: Selectable<AccountsTable>): AccountRecord {
  return accountOf(row, SHIPPED_SETTINGS);
}

const SHIPPED_SETTINGS = limitSettings(HOLD_LIMITS, 'account');

/** An accounts row as its record; the limit settings (monthlySpendingLimit and any a later row adds) come from the limit table's columns. */
function accountOf(row: Selectable<AccountsTable>, settings: readonly LimitSetting[]): AccountRecord {
  return {
    ...(settingsFromRow(row, settings) as Pick<AccountRecord, 'monthlySpendingLimit'>),
    id: row.id,
    name: row.name,
    email: row.email,
    createdAt: Number(row.created_at),
    hasPurchase: Number(row.has_purchase) === 1,
    billingEmails: Number(row.billing_emails) === 1,
    balance: Number(row.balance),
    held: Number(row.held),
  };
}
