/**
 * The dashboard's reads on SQL (src/store/usage.ts). Charts read the rollups and totals the usage
 * roller keeps (usage-pending.ts, run before each read; usage-report.ts), never the jobs table; the job log is a keyset page over
 * an index chosen by its most selective filter.
 */
import { type Kysely, sql } from 'kysely';
import type { AccountRecord, JobAttempt, JobStatus } from '../types.ts';
import type { JobLogFilter, JobLogRow, UsageQuery, UsageReport, UsageStore } from '../usage.ts';
import { toAccount } from './account-queries.ts';
import { usageRows } from './usage-report.ts';
import type { Database } from './tables.ts';

interface TokenCounts {
  prompt: number | null;
  completion: number | null;
  cacheRead: number | null;
  cacheWrite: number | null;
}

const NO_TOKENS: TokenCounts = { prompt: null, completion: null, cacheRead: null, cacheWrite: null };

/** Token counts from a job's usage JSON (`{"prompt_tokens":…,"completion_tokens":…,"cache_read_tokens":…}`); null where it has none. */
function tokenCounts(usage: string | null): TokenCounts {
  if (usage === null) return NO_TOKENS;
  let units: unknown;
  try {
    units = JSON.parse(usage);
  } catch {
    return NO_TOKENS;
  }
  const count = (field: string): number | null => {
    const value = typeof units === 'object' && units !== null ? (units as Record<string, unknown>)[field] : undefined;
    return typeof value === 'number' && Number.isFinite(value) ? value : null;
  };
  const writes = [count('cache_write_tokens'), count('cache_write_1h_tokens')].filter((n) => n !== null);
  return {
    prompt: count('prompt_tokens'),
    completion: count('completion_tokens'),
    cacheRead: count('cache_read_tokens'),
    cacheWrite: writes.length === 0 ? null : writes.reduce((a, b) => a + b, 0),
  };
}

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
    const before = filter.before;
    if (before !== undefined) {
      q = q.where((eb) =>
        eb.or([eb('j.created_at', '<', before.createdAt), eb.and([eb('j.created_at', '=', before.createdAt), eb('j.id', '<', before.id)])]),
      );
    }
    const rows = await q.orderBy('j.created_at', 'desc').orderBy('j.id', 'desc').limit(filter.limit).execute();
    const names = await this.keyNames(rows.map((r) => r.key_id).filter((id): id is string => id !== null));
    return rows.map((r) => {
      const tokens = tokenCounts(r.usage);
      return {
      id: r.id,
      accountId: r.account_id,
      keyId: r.key_id,
      keyName: r.key_id === null ? null : (names.get(r.key_id) ?? null),
      kind: r.kind,
      model: r.model,
      status: r.status as JobStatus,
      errorCode: r.error_code,
      promptTokens: tokens.prompt,
      completionTokens: tokens.completion,
      cacheReadTokens: tokens.cacheRead,
      cacheWriteTokens: tokens.cacheWrite,
      cost: r.cost === null ? null : Number(r.cost),
      held: Number(r.held),
      createdAt: Number(r.created_at),
      finishedAt: r.finished_at === null ? null : Number(r.finished_at),
      attempts: r.attempts === null ? null : (JSON.parse(r.attempts) as JobAttempt[]),
      };
    });
  }

  async searchAccounts(q: string, limit: number): Promise<AccountRecord[]> {
    let query = this.db.selectFrom('accounts').selectAll();
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
    return rows.map(toAccount);
  }

  private async keyNames(ids: string[]): Promise<Map<string, string>> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return new Map();
    const rows = await this.db.selectFrom('api_keys').select(['id', 'name']).where('id', 'in', unique).execute();
    return new Map(rows.map((r) => [r.id, r.name]));
  }
}
