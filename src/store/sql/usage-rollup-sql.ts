/**
 * The usage roller's SQL (usage-pending.ts): a closed job as an hourly rollup row, and the narrow
 * totals beside the rollups. Migrations 090 and 094 created these tables (096 added the cache columns) with their own, frozen,
 * copies of these statements; this is the live one.
 */
import type { Dialect } from './tables.ts';

/**
 * The token columns of a rollup row, each the sum of these fields of the job's usage JSON (a text
 * column, migration 003: `{"prompt_tokens":…,"completion_tokens":…,"cache_read_tokens":…}`):
 * migration 090's two, and 096's cache reads and writes (every lifetime: the price split is in
 * the job's own record).
 */
const TOKENS: Readonly<Record<string, readonly string[]>> = {
  prompt_tokens: ['prompt_tokens'],
  completion_tokens: ['completion_tokens'],
  cache_read_tokens: ['cache_read_tokens'],
  cache_write_tokens: ['cache_write_tokens', 'cache_write_1h_tokens'],
};
export const TOKEN_COLUMNS = Object.keys(TOKENS);

/** A token count from the job's usage JSON, 0 where it has none (no usage, or units of another kind such as images). */
function tokens(dialect: Dialect, fields: readonly string[]): string {
  return fields
    .map((field) => (dialect === 'sqlite' ? `coalesce(json_extract(j.usage, '$.${field}'), 0)` : `coalesce((j.usage::json->>'${field}')::numeric::bigint, 0)`))
    .join(' + ');
}

/**
 * Hour bucket, row key and amounts of a closed job, for a trigger's SELECT (`ledger` = the ledger row's alias, `j` = its job).
 * A refunded job costs 0 and counts no credits; a canceled run that was billed (settled) counts as a success.
 */
export function rollupSelect(dialect: Dialect, ledger: string): string {
  return `
  SELECT (j.created_at / 3600000) * 3600000 AS hour, j.account_id AS account_id, coalesce(j.key_id, '') AS key_id, j.model AS model,
         CASE WHEN ${ledger}.kind = 'settle' AND j.error_code IS NULL THEN '' ELSE coalesce(j.error_code, j.status) END AS code,
         1 AS requests, CASE WHEN ${ledger}.kind = 'settle' THEN ${ledger}.amount ELSE 0 END AS credits,
         ${Object.entries(TOKENS).map(([column, fields]) => `${tokens(dialect, fields)} AS ${column}`).join(', ')}`;
}

export const UPSERT = `ON CONFLICT (hour, account_id, key_id, model, code) DO UPDATE SET
  ${['requests', 'credits', ...TOKEN_COLUMNS].map((c) => `${c} = usage_rollups.${c} + excluded.${c}`).join(',\n  ')}`;

export const COLUMNS = `(hour, account_id, key_id, model, code, requests, credits, ${TOKEN_COLUMNS.join(', ')})`;

const DAY = 86_400_000;

export interface Total {
  table: string;
  /** Key columns: the bucket first. */
  keys: string[];
  amounts: string[];
  /** Where the closed job counts in this table (codes: failures only). */
  where?: string;
}

const KEY_AMOUNTS = ['requests', 'errors', 'credits', ...TOKEN_COLUMNS];
export const TOTALS: Total[] = [
  { table: 'usage_key_hours', keys: ['hour', 'account_id', 'key_id'], amounts: KEY_AMOUNTS },
  { table: 'usage_key_days', keys: ['day', 'account_id', 'key_id'], amounts: KEY_AMOUNTS },
  { table: 'usage_model_days', keys: ['day', 'account_id', 'model'], amounts: ['requests', 'credits'] },
  // Migration 137: the overview's bars stacked by model, per hour.
  { table: 'usage_model_hours', keys: ['hour', 'account_id', 'model'], amounts: ['requests', 'credits'] },
  { table: 'usage_code_days', keys: ['day', 'account_id', 'code'], amounts: ['requests'], where: "code <> ''" },
];

/** Each total's value from an hourly rollup row's columns (`code` '' for a success). */
const FROM_ROLLUP: Record<string, string> = {
  hour: `hour`,
  day: `(hour / ${DAY}) * ${DAY}`,
  account_id: 'account_id',
  key_id: 'key_id',
  model: 'model',
  code: 'code',
  requests: 'requests',
  errors: "CASE WHEN code = '' THEN 0 ELSE requests END",
  credits: 'credits',
  ...Object.fromEntries(TOKEN_COLUMNS.map((c) => [c, c])),
};

export function upsertTotal(total: Total): string {
  const add = total.amounts.map((a) => `${a} = ${total.table}.${a} + excluded.${a}`).join(', ');
  return `ON CONFLICT (${total.keys.join(', ')}) DO UPDATE SET ${add}`;
}

/** INSERT … SELECT of a total from rows shaped as hourly rollups (`source`), summed by the total's keys. */
export function insertTotal(total: Total, source: string, group: boolean): string {
  const columns = [...total.keys, ...total.amounts];
  const values = total.keys.map((k) => FROM_ROLLUP[k]).concat(total.amounts.map((a) => (group ? `sum(${FROM_ROLLUP[a]})` : FROM_ROLLUP[a])));
  return `INSERT INTO ${total.table} (${columns.join(', ')}) SELECT ${values.join(', ')} FROM ${source} WHERE ${total.where ?? 'true'}
    ${group ? `GROUP BY ${total.keys.map((k) => FROM_ROLLUP[k]).join(', ')}` : ''}`;
}
