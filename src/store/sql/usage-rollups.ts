/**
 * The dashboard's reads on SQL (src/store/usage.ts). Charts read the hourly rollups the ledger
 * trigger keeps (migration-usage.ts), never the jobs table; the job log is a keyset page over
 * an index chosen by its most selective filter.
 */
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { AccountRecord, JobStatus, Store } from '../types.ts';
import type { JobLogFilter, JobLogRow, UsageQuery, UsageReport, UsageStore } from '../usage.ts';
import { toAccount } from './account-queries.ts';
import { sqlDatabaseOf } from './sql-store.ts';
import { daySpans, type Span } from './usage-spans.ts';
import type { Database } from './tables.ts';

interface UsageRollupsTable {
  hour: number;
  account_id: string;
  key_id: string;
  model: string;
  code: string;
  requests: number;
  credits: number;
  prompt_tokens: number;
  completion_tokens: number;
}

type UsageDailyTable = Omit<UsageRollupsTable, 'hour'> & { day: number };

type UsageDatabase = Database & { usage_rollups: UsageRollupsTable; usage_rollups_daily: UsageDailyTable };

interface RollupFilter {
  accountId?: string;
  keyId?: string;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const TOP = 10;

/** The dashboard's reads over a SQL store; undefined for a store of another kind. */
export function usageStoreFor(store: Store): UsageStore | undefined {
  const db = sqlDatabaseOf(store);
  return db === undefined ? undefined : new SqlUsageStore(db);
}

/** Token counts from a job's usage JSON (`{"prompt_tokens":…,"completion_tokens":…}`); null where it has none. */
function tokenCounts(usage: string | null): { prompt: number | null; completion: number | null } {
  if (usage === null) return { prompt: null, completion: null };
  let units: unknown;
  try {
    units = JSON.parse(usage);
  } catch {
    return { prompt: null, completion: null };
  }
  const count = (field: string): number | null => {
    const value = typeof units === 'object' && units !== null ? (units as Record<string, unknown>)[field] : undefined;
    return typeof value === 'number' && Number.isFinite(value) ? value : null;
  };
  return { prompt: count('prompt_tokens'), completion: count('completion_tokens') };
}

export class SqlUsageStore implements UsageStore {
  private readonly db: Kysely<UsageDatabase>;

  constructor(db: Kysely<Database>) {
    this.db = db.withTables<{ usage_rollups: UsageRollupsTable; usage_rollups_daily: UsageDailyTable }>();
  }

  async usage(query: UsageQuery): Promise<UsageReport> {
    const from = Math.floor(query.from / HOUR) * HOUR;
    // Hours starting before `to`.
    const end = Math.ceil(query.to / HOUR) * HOUR;
    // A key's rollups are all in its account's: naming the account lets the account index find them.
    const accountId = query.accountId ?? (query.keyId === undefined ? undefined : await this.keyAccount(query.keyId));
    const filter: RollupFilter = { accountId, keyId: query.keyId };
    const spans = await daySpans(from, end, (a, b) => this.anyHourly(a, b, filter));
    const bucketOf = (size: number) => sql<number>`(r.hour / ${sql.lit(size)}) * ${sql.lit(size)}`;
    // Totals by code, model and key over the whole range, from whole days where they can be.
    const rows = () => this.rollupRows(spans, bucketOf(DAY), filter);
    const seriesRows = query.bucket === 'day' ? rows() : this.rollupRows([{ table: 'hourly', from, to: end }], bucketOf(HOUR), filter);
    const [series, codes, models, keys] = await Promise.all([
      this.db
        .selectFrom(seriesRows.as('r'))
        .select([
          'r.t',
          sql<number>`sum(r.requests)`.as('requests'),
          sql<number>`sum(case when r.code = '' then 0 else r.requests end)`.as('errors'),
          sql<number>`sum(r.credits)`.as('credits'),
          sql<number>`sum(r.prompt_tokens)`.as('prompt_tokens'),
          sql<number>`sum(r.completion_tokens)`.as('completion_tokens'),
        ])
        .groupBy('r.t')
        .orderBy('r.t')
        .execute(),
      this.db.selectFrom(rows().as('r')).select(['r.code', sql<number>`sum(r.requests)`.as('requests')]).where('r.code', '<>', '').groupBy('r.code').orderBy('requests', 'desc').execute(),
      this.db
        .selectFrom(rows().as('r'))
        .select(['r.model', sql<number>`sum(r.requests)`.as('requests'), sql<number>`sum(r.credits)`.as('credits')])
        .groupBy('r.model')
        .orderBy('credits', 'desc')
        .orderBy('requests', 'desc')
        .limit(TOP)
        .execute(),
      this.db
        .selectFrom(rows().as('r'))
        .select(['r.key_id', 'r.account_id', sql<number>`sum(r.requests)`.as('requests'), sql<number>`sum(r.credits)`.as('credits')])
        .where('r.key_id', '<>', '')
        .groupBy(['r.key_id', 'r.account_id'])
        .orderBy('credits', 'desc')
        .orderBy('requests', 'desc')
        .limit(TOP)
        .execute(),
    ]);
    const names = await this.keyNames(keys.map((k) => k.key_id));
    return {
      series: series.map((s) => ({
        t: Number(s.t),
        requests: Number(s.requests),
        errors: Number(s.errors),
        credits: Number(s.credits),
        promptTokens: Number(s.prompt_tokens),
        completionTokens: Number(s.completion_tokens),
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
    if (filter.status !== undefined) q = q.where('j.status', '=', filter.status);
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
      cost: r.cost === null ? null : Number(r.cost),
      held: Number(r.held),
      createdAt: Number(r.created_at),
      finishedAt: r.finished_at === null ? null : Number(r.finished_at),
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

  /** The rollup rows of the spans, each with its bucket start `t` (hourly rows bucketed by `bucket`; daily rows by day). */
  private rollupRows(spans: Span[], bucket: RawBuilder<number>, filter: RollupFilter) {
    const parts = spans.map((span) => {
      let q =
        span.table === 'daily'
          ? this.db.selectFrom('usage_rollups_daily as r').select(sql<number>`r.day`.as('t')).where('r.day', '>=', span.from).where('r.day', '<', span.to)
          : this.db.selectFrom('usage_rollups as r').select(bucket.as('t')).where('r.hour', '>=', span.from).where('r.hour', '<', span.to);
      if (filter.accountId !== undefined) q = q.where('r.account_id', '=', filter.accountId);
      if (filter.keyId !== undefined) q = q.where('r.key_id', '=', filter.keyId);
      return q.select(['r.account_id', 'r.key_id', 'r.model', 'r.code', 'r.requests', 'r.credits', 'r.prompt_tokens', 'r.completion_tokens']);
    });
    const [first, ...rest] = parts;
    if (first === undefined) return this.db.selectFrom('usage_rollups as r').select(bucket.as('t')).where(sql<boolean>`false`)
      .select(['r.account_id', 'r.key_id', 'r.model', 'r.code', 'r.requests', 'r.credits', 'r.prompt_tokens', 'r.completion_tokens']);
    return rest.reduce((union, part) => union.unionAll(part), first);
  }

  /** Whether any hourly rollup row of the filter lies in [from, to): a seek on the primary key or the account index. */
  private async anyHourly(from: number, to: number, filter: RollupFilter): Promise<boolean> {
    let q = this.db.selectFrom('usage_rollups as r').select(sql<number>`1`.as('one')).where('r.hour', '>=', from).where('r.hour', '<', to);
    if (filter.accountId !== undefined) q = q.where('r.account_id', '=', filter.accountId);
    if (filter.keyId !== undefined) q = q.where('r.key_id', '=', filter.keyId);
    return (await q.limit(1).executeTakeFirst()) !== undefined;
  }

  private async keyAccount(keyId: string): Promise<string | undefined> {
    return (await this.db.selectFrom('api_keys').select('account_id').where('id', '=', keyId).executeTakeFirst())?.account_id;
  }

  private async keyNames(ids: string[]): Promise<Map<string, string>> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return new Map();
    const rows = await this.db.selectFrom('api_keys').select(['id', 'name']).where('id', 'in', unique).execute();
    return new Map(rows.map((r) => [r.id, r.name]));
  }
}
