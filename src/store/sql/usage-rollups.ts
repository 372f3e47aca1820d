/**
 * The dashboard's reads on SQL (src/store/usage.ts). Charts read the rollups and totals the usage
 * roller keeps (usage-pending.ts, run before each read; usage-report.ts), never the jobs table; the job log is a keyset page over
 * an index chosen by its most selective filter.
 */
import { type Kysely, sql } from 'kysely';
import type { AccountActivity, JobDetail, JobLogFilter, JobLogRow, StatementLine, UsageQuery, UsageReport, UsageStack, UsageStore } from '../usage.ts';
import { jobDetail, lastUsed, searchAccounts, statement, toStacks } from './activity-reads.ts';
import { stackRows, usageRows } from './usage-report.ts';
import { toLogRow } from './job-log-row.ts';
import type { Database } from './tables.ts';

export class SqlUsageStore implements UsageStore {
  /** `rollUp`: moves what is pending into the rollups, so a read sees every closed job. */
  constructor(private readonly db: Kysely<Database>, private readonly rollUp: () => Promise<void> = async () => undefined) {}

  async usage(query: UsageQuery): Promise<UsageReport> {
    await this.rollUp();
    const { series, codes, models, keys } = await usageRows(this.db, query);
    const names = await this.keyNames(keys.map((k) => k.key_id));
    return {
      series: series.map((s) => ({
        t: Number(s.t),
        requests: Number(s.requests),
        errors: Number(s.errors),
        credits: Number(s.credits),
        promptTokens: Number(s.prompt_tokens),
        completionTokens: Number(s.completion_tokens),
        cacheReadTokens: Number(s.cache_read_tokens),
        cacheWriteTokens: Number(s.cache_write_tokens),
      })),
      errorsByCode: codes.map((c) => ({ code: c.code, requests: Number(c.requests) })),
      topModels: models.map((m) => ({ model: m.model, requests: Number(m.requests), credits: Number(m.credits) })),
      topKeys: keys.map((k) => ({
        keyId: k.key_id,
        keyName: names.get(k.key_id) ?? null,
        accountId: k.account_id,
        requests: Number(k.requests),
        credits: Number(k.credits),
      })),
    };
  }

  async jobLog(filter: JobLogFilter): Promise<JobLogRow[]> {
    let q = this.db.selectFrom('jobs as j').selectAll('j');
    if (filter.accountId !== undefined) q = q.where('j.account_id', '=', filter.accountId);
    if (filter.keyId !== undefined) q = q.where('j.key_id', '=', filter.keyId);
    if (filter.model !== undefined) q = q.where('j.model', '=', filter.model);
    // A literal (one of four statuses), so that the planners match the partial index on failed and canceled jobs.
    if (filter.status !== undefined) q = q.where('j.status', '=', sql.lit(filter.status));
    if (filter.code !== undefined) q = q.where('j.error_code', '=', filter.code);
    // A time range narrows the same index walk: every log index ends in (created_at, id).
    if (filter.from !== undefined) q = q.where('j.created_at', '>=', filter.from);
    if (filter.to !== undefined) q = q.where('j.created_at', '<', filter.to);
    const before = filter.before;
    if (before !== undefined) {
      q = q.where((eb) =>
        eb.or([eb('j.created_at', '<', before.createdAt), eb.and([eb('j.created_at', '=', before.createdAt), eb('j.id', '<', before.id)])]),
      );
    }
    const rows = await q.orderBy('j.created_at', 'desc').orderBy('j.id', 'desc').limit(filter.limit).execute();
    const names = await this.keyNames(rows.map((r) => r.key_id).filter((id): id is string => id !== null));
    return rows.map((r) => toLogRow(r, names));
  }

  async job(id: string): Promise<JobDetail | undefined> {
    return jobDetail(this.db, id, (ids) => this.keyNames(ids));
  }

  async usageStacks(query: UsageQuery, by: 'model' | 'key', names: string[]): Promise<UsageStack[]> {
    await this.rollUp();
    return toStacks(await stackRows(this.db, query, by, names), names);
  }

  searchAccounts(q: string, limit: number, monthStart: number): Promise<AccountActivity[]> {
    return searchAccounts(this.db, q, limit, monthStart);
  }

  statement(accountId: string, balance: number, limit: number, before?: number): Promise<StatementLine[]> {
    return statement(this.db, accountId, balance, limit, before);
  }

  lastUsed(keyIds: string[]): Promise<Map<string, number>> {
    return lastUsed(this.db, keyIds);
  }

  async keyNames(ids: string[]): Promise<Map<string, string>> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return new Map();
    const rows = await this.db.selectFrom('api_keys').select(['id', 'name']).where('id', 'in', unique).execute();
    return new Map(rows.map((r) => [r.id, r.name]));
  }
}
