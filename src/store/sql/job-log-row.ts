/** A jobs row as the request log shows it: token counts read from its usage JSON, key names given. */
import type { Selectable } from 'kysely';
import type { JobAttempt, JobStatus } from '../types.ts';
import type { JobLogRow } from '../usage.ts';
import type { JobsTable } from './tables.ts';

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

/** A jobs row as the request log shows it (`names`: key names by id). */
export function toLogRow(r: Selectable<JobsTable>, names: Map<string, string>): JobLogRow {
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
}
