/**
 * The portal's reads of one account: usage by day, model and key from the hourly rollups
 * (migration 090, kept by the usage roller), the ledger as money with a running balance, and
 * when each key was last used (the job log's key index).
 */
import { type Kysely, sql } from 'kysely';
import type { MoneyEntry, PortalUsage, PortalUsageRow } from '../portal.ts';
import type { LedgerKind } from '../types.ts';
import type { PortalDatabase } from './portal-tables.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;

/** The ledger kinds that move the balance, and their sign; holds and their releases only move what is held. */
const BALANCE_KINDS: Partial<Record<LedgerKind, 1 | -1>> = { topup: 1, grant: 1, settle: -1, payment_refund: -1 };
const SIGNED = sql<number>`CASE WHEN kind IN ('settle', 'payment_refund') THEN -amount ELSE amount END`;

type Num = number | string;
interface UsageSql { g: Num; requests: Num; errors: Num; credits: Num; prompt_tokens: Num; completion_tokens: Num }

const usageRow = (r: UsageSql, group: string | number): PortalUsageRow => ({
  group,
  requests: Number(r.requests),
  errors: Number(r.errors),
  credits: Number(r.credits),
  promptTokens: Number(r.prompt_tokens),
  completionTokens: Number(r.completion_tokens),
});

export class PortalReads {
  constructor(protected readonly db: Kysely<PortalDatabase>, private readonly rollUp: () => Promise<void> = async () => undefined) {}

  async usage(accountId: string, from: number, to: number): Promise<PortalUsage> {
    await this.rollUp();
    const start = Math.floor(from / HOUR) * HOUR;
    const end = Math.ceil(to / HOUR) * HOUR;
    const grouped = async (group: ReturnType<typeof sql>) => (await sql<UsageSql>`
      SELECT ${group} AS g, sum(requests) AS requests, sum(CASE WHEN code = '' THEN 0 ELSE requests END) AS errors, sum(credits) AS credits,
             sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens
      FROM usage_rollups WHERE account_id = ${accountId} AND hour >= ${start} AND hour < ${end}
      GROUP BY ${group} ORDER BY ${group}`.execute(this.db)).rows;
    const [days, models, keys] = await Promise.all([
      grouped(sql`(hour / ${sql.lit(DAY)}) * ${sql.lit(DAY)}`),
      grouped(sql.ref('model')),
      grouped(sql.ref('key_id')),
    ]);
    const bySpend = (a: PortalUsageRow, b: PortalUsageRow) => b.credits - a.credits || b.requests - a.requests;
    return {
      byDay: days.map((r) => usageRow(r, Number(r.g))),
      byModel: models.map((r) => usageRow(r, String(r.g))).sort(bySpend),
      // Runs without a key are rolled up under ''.
      byKey: keys.map((r) => usageRow(r, String(r.g))).sort(bySpend),
    };
  }

  async moneyLedger(accountId: string, options: { limit: number; before?: number }): Promise<MoneyEntry[]> {
    const kinds = Object.keys(BALANCE_KINDS);
    return this.db.transaction().execute(async (trx) => {
      const account = await trx.selectFrom('accounts').select('balance').where('id', '=', accountId).executeTakeFirst();
      if (account === undefined) return [];
      let page = trx.selectFrom('ledger').select(['id', 'kind', 'amount', 'job_id', 'key_id', 'created_at'])
        .where('account_id', '=', accountId).where('kind', 'in', kinds);
      if (options.before !== undefined) page = page.where('id', '<', options.before);
      const rows = await page.orderBy('id', 'desc').limit(options.limit).execute();
      // The balance after the page's newest row: today's balance less what every newer row moved.
      let newer = 0;
      if (options.before !== undefined) {
        const sum = await trx.selectFrom('ledger').select(sql<Num>`coalesce(sum(${SIGNED}), 0)`.as('moved'))
          .where('account_id', '=', accountId).where('kind', 'in', kinds).where('id', '>=', options.before).executeTakeFirstOrThrow();
        newer = Number(sum.moved);
      }
      let after = Number(account.balance) - newer;
      return rows.map((r) => {
        const kind = r.kind as LedgerKind;
        const amount = (BALANCE_KINDS[kind] ?? 1) * Number(r.amount);
        const entry = { id: Number(r.id), kind, amount, balanceAfter: after, jobId: r.job_id, keyId: r.key_id, createdAt: Number(r.created_at) };
        after -= amount;
        return entry;
      });
    });
  }

  async keysLastUsed(keyIds: string[]): Promise<Map<string, number>> {
    if (keyIds.length === 0) return new Map();
    const rows = await this.db.selectFrom('jobs').select((eb) => ['key_id', eb.fn.max('created_at').as('last')])
      .where('key_id', 'in', keyIds).groupBy('key_id').execute();
    return new Map(rows.map((r) => [r.key_id as string, Number(r.last)]));
  }
}
