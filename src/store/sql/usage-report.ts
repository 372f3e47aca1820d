/**
 * The overview's four reads (series, errors by code, top models, top keys) over the rollup tables
 * (migrations 090, 094 and 096), each from the narrowest table that answers it:
 *
 * - one key: its hourly rollups (index on key_id, hour), at most a row per model and code an hour;
 * - all accounts or one: the narrow totals, whole UTC days from the daily ones and the hours at the
 *   ends from the hourly ones (usage-spans.ts); hourly charts from usage_key_hours.
 */
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { UsageQuery } from '../usage.ts';
import type { Database } from './tables.ts';
import { daySpans, type Span } from './usage-spans.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const TOP = 10;

type Num = number | string;
export interface UsageRows {
  series: { t: Num; requests: Num; errors: Num; credits: Num; prompt_tokens: Num; completion_tokens: Num; cache_read_tokens: Num; cache_write_tokens: Num }[];
  codes: { code: string; requests: Num }[];
  models: { model: string; requests: Num; credits: Num }[];
  keys: { key_id: string; account_id: string; requests: Num; credits: Num }[];
}

/** The token columns of the rollups and key totals (migrations 090, 094 and 096). */
const TOKENS = sql`prompt_tokens, completion_tokens, cache_read_tokens, cache_write_tokens`;
const TOKEN_SUMS = sql`sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens,
  sum(cache_read_tokens) AS cache_read_tokens, sum(cache_write_tokens) AS cache_write_tokens`;
const SUMS = sql`sum(requests) AS requests, sum(errors) AS errors, sum(credits) AS credits, ${TOKEN_SUMS}`;
const TOP_ORDER = sql`ORDER BY credits DESC, requests DESC LIMIT ${sql.lit(TOP)}`;
const bucketOf = (column: string, size: number) => sql`(${sql.ref(column)} / ${sql.lit(size)}) * ${sql.lit(size)}`;

async function rows<T>(db: Kysely<Database>, query: RawBuilder<unknown>): Promise<T[]> {
  return (await query.execute(db)).rows as T[];
}

/** `[from, to)` on the bucket column, within one account when asked. */
function within(column: string, from: number, to: number, accountId: string | undefined): RawBuilder<unknown> {
  const account = accountId === undefined ? sql`` : sql` AND account_id = ${accountId}`;
  return sql`${sql.ref(column)} >= ${from} AND ${sql.ref(column)} < ${to}${account}`;
}

const unionAll = (parts: RawBuilder<unknown>[]) => sql.join(parts, sql` UNION ALL `);

/** One key's overview, from its hourly rollups. */
async function keyUsage(db: Kysely<Database>, query: UsageQuery & { keyId: string }, from: number, end: number, size: number): Promise<UsageRows> {
  const range = sql`${within('hour', from, end, query.accountId)} AND key_id = ${query.keyId}`;
  const errors = sql`CASE WHEN code = '' THEN 0 ELSE requests END`;
  const [series, codes, models, keys] = await Promise.all([
    rows<UsageRows['series'][number]>(db, sql`SELECT ${bucketOf('hour', size)} AS t, sum(requests) AS requests, sum(${errors}) AS errors,
      sum(credits) AS credits, ${TOKEN_SUMS}
      FROM usage_rollups WHERE ${range} GROUP BY ${bucketOf('hour', size)} ORDER BY t`),
    rows<UsageRows['codes'][number]>(db, sql`SELECT code, sum(requests) AS requests FROM usage_rollups WHERE ${range} AND code <> ''
      GROUP BY code ORDER BY requests DESC`),
    rows<UsageRows['models'][number]>(db, sql`SELECT model, sum(requests) AS requests, sum(credits) AS credits FROM usage_rollups WHERE ${range}
      GROUP BY model ${TOP_ORDER}`),
    rows<UsageRows['keys'][number]>(db, sql`SELECT key_id, account_id, sum(requests) AS requests, sum(credits) AS credits FROM usage_rollups
      WHERE ${range} GROUP BY key_id, account_id ${TOP_ORDER}`),
  ]);
  return { series, codes, models, keys };
}

/** The overview of every account or one, from the narrow totals. */
async function accountUsage(db: Kysely<Database>, query: UsageQuery, from: number, end: number): Promise<UsageRows> {
  const { accountId } = query;
  const anyRows = async (a: number, b: number) =>
    (await rows(db, sql`SELECT 1 AS one FROM usage_key_hours WHERE ${within('hour', a, b, accountId)} LIMIT 1`)).length > 0;
  const spans = await daySpans(from, end, anyRows);
  /** Each span's rows: whole days from `daily`, hours from `hourly`. */
  const parts = (daily: (s: Span) => RawBuilder<unknown>, hourly: (s: Span) => RawBuilder<unknown>) =>
    unionAll(spans.map((s) => (s.table === 'daily' ? daily(s) : hourly(s))));
  const keyRows = parts(
    (s) => sql`SELECT day AS t, key_id, account_id, requests, errors, credits, ${TOKENS}
      FROM usage_key_days WHERE ${within('day', s.from, s.to, accountId)}`,
    (s) => sql`SELECT ${bucketOf('hour', DAY)} AS t, key_id, account_id, requests, errors, credits, ${TOKENS}
      FROM usage_key_hours WHERE ${within('hour', s.from, s.to, accountId)}`,
  );
  const series = query.bucket === 'day'
    ? sql`SELECT t, ${SUMS} FROM (${keyRows}) r GROUP BY t ORDER BY t`
    : sql`SELECT hour AS t, ${SUMS} FROM usage_key_hours WHERE ${within('hour', from, end, accountId)} GROUP BY hour ORDER BY hour`;
  const modelRows = parts(
    (s) => sql`SELECT model, requests, credits FROM usage_model_days WHERE ${within('day', s.from, s.to, accountId)}`,
    (s) => sql`SELECT model, requests, credits FROM usage_rollups WHERE ${within('hour', s.from, s.to, accountId)}`,
  );
  const codeRows = parts(
    (s) => sql`SELECT code, requests FROM usage_code_days WHERE ${within('day', s.from, s.to, accountId)}`,
    (s) => sql`SELECT code, requests FROM usage_rollups WHERE ${within('hour', s.from, s.to, accountId)} AND code <> ''`,
  );
  const [seriesRows, codes, models, keys] = await Promise.all([
    rows<UsageRows['series'][number]>(db, series),
    rows<UsageRows['codes'][number]>(db, sql`SELECT code, sum(requests) AS requests FROM (${codeRows}) r GROUP BY code ORDER BY requests DESC`),
    rows<UsageRows['models'][number]>(db, sql`SELECT model, sum(requests) AS requests, sum(credits) AS credits FROM (${modelRows}) r
      GROUP BY model ${TOP_ORDER}`),
    rows<UsageRows['keys'][number]>(db, sql`SELECT key_id, account_id, sum(requests) AS requests, sum(credits) AS credits FROM (${keyRows}) r
      WHERE key_id <> '' GROUP BY key_id, account_id ${TOP_ORDER}`),
  ]);
  return { series: seriesRows, codes, models, keys };
}

/** One group's amounts in one bucket, for the bars stacked by model or key (`name` null: the rest together). */
export interface StackRow { t: Num; name: string | null; credits: Num; requests: Num }

/**
 * The stacked bars' rows for the hours starting in [query.from, query.to): per bucket and model
 * (usage_model_hours, whole days from usage_model_days) or per bucket and key (the key totals),
 * each of `names` apart and the rest summed as one null group, so the answer is a few rows a bucket.
 */
export async function stackRows(db: Kysely<Database>, query: UsageQuery, by: 'model' | 'key', names: string[]): Promise<StackRow[]> {
  const from = Math.floor(query.from / HOUR) * HOUR;
  const end = Math.ceil(query.to / HOUR) * HOUR;
  const size = query.bucket === 'day' ? DAY : HOUR;
  const { accountId, keyId } = query;
  const column = by === 'model' ? 'model' : 'key_id';
  const named = names.length === 0 ? sql`NULL` : sql`CASE WHEN name IN (${sql.join(names)}) THEN name END`;
  const grouped = (source: RawBuilder<unknown>) =>
    // By position: PostgreSQL would read the CASE's parameters twice as two expressions.
    rows<StackRow>(db, sql`SELECT t, ${named} AS name, sum(credits) AS credits, sum(requests) AS requests FROM (${source}) r GROUP BY 1, 2 ORDER BY 1`);
  const pick = (bucket: RawBuilder<unknown>, table: string) => sql`SELECT ${bucket} AS t, ${sql.ref(column)} AS name, credits, requests FROM ${sql.table(table)}`;
  // One key: its hourly rollups, a few rows an hour.
  if (keyId !== undefined) return grouped(sql`${pick(bucketOf('hour', size), 'usage_rollups')} WHERE ${within('hour', from, end, accountId)} AND key_id = ${keyId}`);
  const hourly = by === 'model' ? 'usage_model_hours' : 'usage_key_hours';
  if (query.bucket === 'hour') return grouped(sql`${pick(sql.ref('hour'), hourly)} WHERE ${within('hour', from, end, accountId)}`);
  const anyRows = async (a: number, b: number) =>
    (await rows(db, sql`SELECT 1 AS one FROM usage_key_hours WHERE ${within('hour', a, b, accountId)} LIMIT 1`)).length > 0;
  const spans = await daySpans(from, end, anyRows);
  const daily = by === 'model' ? 'usage_model_days' : 'usage_key_days';
  return grouped(unionAll(spans.map((s) => s.table === 'daily'
    ? sql`${pick(sql.ref('day'), daily)} WHERE ${within('day', s.from, s.to, accountId)}`
    : sql`${pick(bucketOf('hour', DAY), hourly)} WHERE ${within('hour', s.from, s.to, accountId)}`)));
}

/** The overview's rows for the hours starting in [query.from, query.to). */
export async function usageRows(db: Kysely<Database>, query: UsageQuery): Promise<UsageRows> {
  const from = Math.floor(query.from / HOUR) * HOUR;
  const end = Math.ceil(query.to / HOUR) * HOUR;
  const { keyId } = query;
  if (keyId !== undefined) return keyUsage(db, { ...query, keyId }, from, end, query.bucket === 'day' ? DAY : HOUR);
  return accountUsage(db, query, from, end);
}
