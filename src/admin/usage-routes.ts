/**
 * The dashboard's admin reads (README "Admin API"): usage charts from the hourly rollups, the
 * job log paged by cursor (and as CSV), and account search. Registered inside the admin plugin,
 * behind its token check.
 */
import { Readable } from 'node:stream';
import { setImmediate } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { microToCredits } from '../billing/money.ts';
import { GatewayError } from '../shared/errors.ts';
import { iso } from '../shared/time.ts';
import { startOfUtcMonth } from '../shared/time.ts';
import type { JobLogFilter, JobLogRow, UsagePoint, UsageStack, UsageStore } from '../store/usage.ts';
import { accountView } from './views.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Widest ranges a chart may ask for: about 5 weeks of hours, about 13 months of days. */
const MAX_RANGE = { hour: 36 * DAY, day: 400 * DAY } as const;
const CSV_MAX_ROWS = 100_000;

const time = z.union([z.iso.datetime({ offset: true }), z.iso.date()]).transform((s) => Date.parse(s));
const id = z.string().trim().min(1).max(200);

const usageQuery = z.strictObject({
  from: time.optional(),
  to: time.optional(),
  bucket: z.enum(['hour', 'day']).default('hour'),
  account_id: id.optional(),
  key_id: id.optional(),
  /** Bars stacked by model or key: the answer's `stacks`. */
  stack: z.enum(['model', 'key']).optional(),
});

/** How many models or keys a stacked chart shows apart; the rest are one "other" group. */
const STACKS = 8;

export const jobsQuery = z.strictObject({
  account_id: id.optional(),
  key_id: id.optional(),
  model: id.optional(),
  status: z.enum(['processing', 'succeeded', 'failed', 'canceled']).optional(),
  code: id.optional(),
  /** Created in [from, to). */
  from: time.optional(),
  to: time.optional(),
  cursor: z.string().max(400).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

const accountsQuery = z.strictObject({
  q: z.string().max(200).default(''),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

function parseQuery<T>(schema: z.ZodType<T>, query: unknown): T {
  const result = schema.safeParse(query ?? {});
  if (result.success) return result.data;
  const flat = z.flattenError(result.error);
  const fieldErrors = flat.fieldErrors as Record<string, string[]>;
  const message = [...flat.formErrors, ...Object.entries(fieldErrors).map(([f, m]) => `${f}: ${m.join('; ')}`)].join('; ');
  throw new GatewayError('validation_failed', message || 'Invalid query.', { details: { formErrors: flat.formErrors, fieldErrors } });
}

function invalid(field: string, message: string): GatewayError {
  return new GatewayError('validation_failed', `${field}: ${message}`, { details: { formErrors: [], fieldErrors: { [field]: [message] } } });
}

const EMPTY_POINT: Omit<UsagePoint, 't'> = { requests: 0, errors: 0, credits: 0, promptTokens: 0, completionTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

/** The start of every bucket (whole UTC hours or days) that [from, to) touches. */
function bucketStarts(from: number, to: number, bucket: 'hour' | 'day'): number[] {
  const size = bucket === 'hour' ? HOUR : DAY;
  const starts: number[] = [];
  for (let t = Math.floor(from / size) * size; t < to; t += size) starts.push(t);
  return starts;
}

/** Stacks as the API answers them: each group's credits and requests per bucket of the series (zeros filled), keys named. */
async function stackViews(stacks: UsageStack[], buckets: number[], keys: UsageStore | undefined) {
  const names = keys === undefined ? new Map<string, string>() : await keys.keyNames(stacks.map((s) => s.name).filter((n) => n !== ''));
  return stacks.map((s) => {
    const at = new Map(s.points.map((p) => [p.t, p]));
    return {
      name: s.other === true ? 'other' : s.name,
      label: s.other === true ? 'Others' : keys === undefined ? s.name : (names.get(s.name) ?? s.name),
      credits: buckets.map((t) => microToCredits(at.get(t)?.credits ?? 0)),
      requests: buckets.map((t) => at.get(t)?.requests ?? 0),
    };
  });
}

/** The request log's filter from its query (the admin's and the portal's; the account is the caller's to set). */
export function jobLogFilter(query: Omit<z.infer<typeof jobsQuery>, 'account_id'>): JobLogFilter {
  return {
    keyId: query.key_id,
    model: query.model,
    status: query.status,
    code: query.code,
    from: query.from,
    to: query.to,
    before: query.cursor === undefined ? undefined : decodeCursor(query.cursor),
    limit: query.limit,
  };
}

/** A page cursor is the last row's (created_at, id), opaque to clients. */
export function encodeCursor(row: { createdAt: number; id: string }): string {
  return Buffer.from(`${row.createdAt}.${row.id}`).toString('base64url');
}

export function decodeCursor(cursor: string): { createdAt: number; id: string } {
  const text = Buffer.from(cursor, 'base64url').toString();
  const dot = text.indexOf('.');
  const createdAt = Number(text.slice(0, dot));
  if (dot < 1 || !Number.isSafeInteger(createdAt)) throw invalid('cursor', 'not a cursor this API returned');
  return { createdAt, id: text.slice(dot + 1) };
}

export function jobView(row: JobLogRow) {
  return {
    id: row.id,
    account_id: row.accountId,
    key_id: row.keyId,
    key_name: row.keyName,
    kind: row.kind,
    model: row.model,
    status: row.status,
    code: row.errorCode,
    prompt_tokens: row.promptTokens,
    completion_tokens: row.completionTokens,
    cache_read_tokens: row.cacheReadTokens,
    cache_write_tokens: row.cacheWriteTokens,
    credits: row.cost === null ? null : microToCredits(row.cost),
    held_credits: microToCredits(row.held),
    created_at: iso(row.createdAt),
    finished_at: row.finishedAt === null ? null : iso(row.finishedAt),
    latency_ms: row.finishedAt === null ? null : row.finishedAt - row.createdAt,
    attempts: row.attempts,
  };
}

const CSV_COLUMNS = [
  'created_at', 'id', 'account_id', 'key_id', 'key_name', 'kind', 'model', 'status', 'code',
  'prompt_tokens', 'completion_tokens', 'cache_read_tokens', 'cache_write_tokens', 'credits', 'latency_ms',
] as const;

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  // Quote when needed, and defuse spreadsheet formulas.
  const safe = /^[=+\-@\t\r]/.test(text) && typeof value === 'string' ? `'${text}` : text;
  return /[",\n\r]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

export function registerUsageRoutes(admin: FastifyInstance, usage: UsageStore, now: () => number): void {
  admin.get('/usage', async (request) => {
    const query = parseQuery(usageQuery, request.query);
    const to = query.to ?? now();
    const from = query.from ?? to - DAY;
    if (from >= to) throw invalid('from', 'must be before to');
    if (to - from > MAX_RANGE[query.bucket]) throw invalid('bucket', `a range of ${Math.round((to - from) / DAY)} days needs bucket=day`);
    const range = { from, to, bucket: query.bucket, accountId: query.account_id, keyId: query.key_id };
    const report = await usage.usage(range);
    // Stacked: the models or keys the report ranks first, each apart; the rest together.
    const stackNames = query.stack === 'model' ? report.topModels.map((m) => m.model) : report.topKeys.map((k) => k.keyId);
    const stacks = query.stack === undefined ? undefined : await usage.usageStacks(range, query.stack, stackNames.slice(0, STACKS));
    // Every bucket of the range, zeros where nothing ran: the charts' x axis is the range asked for.
    const buckets = bucketStarts(from, to, query.bucket);
    const byTime = new Map(report.series.map((p) => [p.t, p]));
    const series = buckets.map((t) => byTime.get(t) ?? { ...EMPTY_POINT, t });
    const totals = report.series.reduce(
      (t, p) => ({ requests: t.requests + p.requests, errors: t.errors + p.errors, credits: t.credits + p.credits }),
      { requests: 0, errors: 0, credits: 0 },
    );
    return {
      from: iso(from),
      to: iso(to),
      bucket: query.bucket,
      totals: { requests: totals.requests, errors: totals.errors, credits: microToCredits(totals.credits) },
      series: series.map((p) => ({
        t: iso(p.t),
        requests: p.requests,
        errors: p.errors,
        credits: microToCredits(p.credits),
        prompt_tokens: p.promptTokens,
        completion_tokens: p.completionTokens,
        cache_read_tokens: p.cacheReadTokens,
        cache_write_tokens: p.cacheWriteTokens,
      })),
      errors_by_code: report.errorsByCode,
      top_models: report.topModels.map((m) => ({ ...m, credits: microToCredits(m.credits) })),
      top_keys: report.topKeys.map((k) => ({
        key_id: k.keyId, key_name: k.keyName, account_id: k.accountId, requests: k.requests, credits: microToCredits(k.credits),
      })),
      ...(stacks === undefined ? {} : { stacks: await stackViews(stacks, buckets, query.stack === 'key' ? usage : undefined) }),
    };
  });

  const jobFilter = (raw: unknown): JobLogFilter => {
    const query = parseQuery(jobsQuery, raw);
    return { ...jobLogFilter(query), accountId: query.account_id };
  };

  admin.get('/jobs', async (request) => {
    const filter = jobFilter(request.query);
    // One row more than asked tells whether another page exists.
    const rows = await usage.jobLog({ ...filter, limit: filter.limit + 1 });
    const page = rows.slice(0, filter.limit);
    const last = page.at(-1);
    return { data: page.map(jobView), next_cursor: rows.length > filter.limit && last !== undefined ? encodeCursor(last) : null };
  });

  admin.get('/jobs.csv', async (request, reply) => {
    const filter = jobFilter({ ...(request.query as object), limit: '500' });
    reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="jobs.csv"');
    return reply.send(jobLogCsv(usage, filter));
  });

  admin.get('/accounts', async (request) => {
    const query = parseQuery(accountsQuery, request.query);
    const accounts = await usage.searchAccounts(query.q, query.limit, startOfUtcMonth(now()));
    return { data: accounts.map((a) => ({ ...accountView(a.account, a.monthSpent), last_activity_at: a.lastActivityAt === null ? null : iso(a.lastActivityAt) })) };
  });
}

/** The job log as CSV, up to 100,000 rows, read a page at a time as the client reads (admin and portal). */
export function jobLogCsv(usage: UsageStore, filter: JobLogFilter): Readable {
  async function* lines() {
    yield CSV_COLUMNS.join(',') + '\n';
    let before = filter.before;
    for (let sent = 0; sent < CSV_MAX_ROWS; ) {
      const rows = await usage.jobLog({ ...filter, before, limit: 500 });
      if (rows.length === 0) return;
      yield rows.map((r) => {
        const view = jobView(r);
        return CSV_COLUMNS.map((c) => csvCell(view[c])).join(',') + '\n';
      }).join('');
      sent += rows.length;
      const last = rows.at(-1);
      if (rows.length < 500 || last === undefined) return;
      before = { createdAt: last.createdAt, id: last.id };
      // SQLite answers synchronously: without a turn of the event loop between pages, an export of
      // 100,000 rows would hold every other request (and its own first bytes) until the socket filled.
      await setImmediate();
    }
  }
  // One page read ahead at most: a client that stops reading stops the queries.
  return Readable.from(lines(), { highWaterMark: 1 });
}
