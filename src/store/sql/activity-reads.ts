/**
 * The dashboard's activity reads beside the request log (usage-rollups.ts): one job with its
 * ledger rows, the accounts list with this month's charges and newest request, each key's newest
 * request, and the stacked bars' groups. Each is served by an index (docs/operations.md, "The
 * dashboard's queries and their indexes").
 */
import { type Kysely, sql } from 'kysely';
import type { LedgerKind } from '../accounts.ts';
import type { AccountActivity, JobDetail, StatementLine, UsageStack } from '../usage.ts';
import { toAccount } from './account-queries.ts';
import type { Database } from './tables.ts';
import type { StackRow } from './usage-report.ts';
import { toLogRow } from './job-log-row.ts';

/** A job by its primary key, its account's name, its media record's message, and its ledger rows (ledger_job, migration 136). */
export async function jobDetail(db: Kysely<Database>, id: string, keyNames: (ids: string[]) => Promise<Map<string, string>>): Promise<JobDetail | undefined> {
  const row = await db
    .selectFrom('jobs as j')
    .leftJoin('accounts as a', 'a.id', 'j.account_id')
    .leftJoin('media_jobs as m', 'm.job_id', 'j.id')
    .selectAll('j')
    .select(['a.name as account_name', 'm.error_message as media_error_message'])
    .where('j.id', '=', id)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  const [names, ledger] = await Promise.all([
    keyNames(row.key_id === null ? [] : [row.key_id]),
    db.selectFrom('ledger').selectAll().where('job_id', '=', id).orderBy('id').execute(),
  ]);
  return {
    ...toLogRow(row, names),
    errorMessage: row.error_message ?? row.media_error_message,
    accountName: row.account_name,
    ledger: ledger.map((l) => ({
      id: Number(l.id), accountId: l.account_id, keyId: l.key_id, jobId: l.job_id, kind: l.kind as LedgerKind, amount: Number(l.amount), createdAt: Number(l.created_at),
    })),
  };
}

/**
 * Accounts whose id, name or e-mail contains `q`, newest first, with this month's settled charges
 * (the spending limit's counter, migration 003) and their newest request: one index probe each
 * (jobs_log_account, its last entry).
 */
export async function searchAccounts(db: Kysely<Database>, q: string, limit: number, monthStart: number): Promise<AccountActivity[]> {
  let query = db
    .selectFrom('accounts')
    .selectAll()
    .select(sql<number | string | null>`(SELECT max(j.created_at) FROM jobs j WHERE j.account_id = accounts.id)`.as('last_activity_at'));
  const term = q.trim().toLowerCase();
  if (term !== '') {
    const like = `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where((eb) =>
      eb.or([
        eb('id', '=', q.trim()),
        eb(sql`lower(name)`, 'like', sql`${like} escape '\\'`),
        eb(sql`lower(coalesce(email, ''))`, 'like', sql`${like} escape '\\'`),
      ]),
    );
  }
  const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map((r) => ({
    account: toAccount(r),
    // The counter holds the month it was last moved in: an older month means nothing settled since.
    monthSpent: Number(r.month_start) === monthStart ? Number(r.month_settled) : 0,
    lastActivityAt: r.last_activity_at === null ? null : Number(r.last_activity_at),
  }));
}

/** What a ledger row does to the balance (accounts.ts LedgerKind): holds and refunds move only what is held. */
const BALANCE_CHANGE = sql<number | string>`CASE kind WHEN 'topup' THEN amount WHEN 'grant' THEN amount WHEN 'settle' THEN -amount
  WHEN 'payment_refund' THEN -amount ELSE 0 END`;
const MOVES_BALANCE = ['topup', 'grant', 'settle', 'payment_refund'] as const;

/**
 * The balance-moving rows of an account, newest first, through ledger_account (account_id, id);
 * the balance each left is the balance now less every newer row's change (for a later page, one
 * sum over the newer rows).
 */
export async function statement(db: Kysely<Database>, accountId: string, balance: number, limit: number, before?: number): Promise<StatementLine[]> {
  let query = db.selectFrom('ledger').selectAll().select(BALANCE_CHANGE.as('change')).where('account_id', '=', accountId).where('kind', 'in', [...MOVES_BALANCE]);
  if (before !== undefined) query = query.where('id', '<', before);
  const [rows, newer] = await Promise.all([
    query.orderBy('id', 'desc').limit(limit).execute(),
    before === undefined
      ? Promise.resolve(0)
      : db.selectFrom('ledger').select(sql<number | string | null>`sum(${BALANCE_CHANGE})`.as('total')).where('account_id', '=', accountId)
        .where('id', '>=', before).executeTakeFirst().then((r) => Number(r?.total ?? 0)),
  ]);
  let after = balance - newer;
  return rows.map((l) => {
    const line = {
      entry: { id: Number(l.id), accountId: l.account_id, keyId: l.key_id, jobId: l.job_id, kind: l.kind as LedgerKind, amount: Number(l.amount), createdAt: Number(l.created_at) },
      change: Number(l.change),
      balanceAfter: after,
    };
    after -= line.change;
    return line;
  });
}

/** Each key's newest request: one probe of jobs_log_key (key_id, created_at, id) per key. */
export async function lastUsed(db: Kysely<Database>, keyIds: string[]): Promise<Map<string, number>> {
  const unique = [...new Set(keyIds)];
  if (unique.length === 0) return new Map();
  const rows = await db
    .selectFrom('api_keys as k')
    .select(['k.id', sql<number | string | null>`(SELECT max(j.created_at) FROM jobs j WHERE j.key_id = k.id)`.as('last_used_at')])
    .where('k.id', 'in', unique)
    .execute();
  return new Map(rows.filter((r) => r.last_used_at !== null).map((r) => [r.id, Number(r.last_used_at)]));
}

/** The stacked rows as groups: each named one apart (in the order given), the rest (a null name) as one `other` group. */
export function toStacks(rows: StackRow[], names: string[]): UsageStack[] {
  const stacks = new Map<string | null, UsageStack>(names.map((name) => [name, { name, points: [] }]));
  const other: UsageStack = { name: '', other: true, points: [] };
  for (const r of rows) {
    const stack = r.name === null ? other : stacks.get(r.name);
    stack?.points.push({ t: Number(r.t), credits: Number(r.credits), requests: Number(r.requests) });
  }
  const named = [...stacks.values()].filter((s) => s.points.length > 0);
  return other.points.length === 0 ? named : [...named, other];
}
