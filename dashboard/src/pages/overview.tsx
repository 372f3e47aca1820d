/**
 * Spend, requests and tokens (cache reads and writes apart) as bars per hour or day over the
 * chosen range, stacked by model or key on demand; errors by code, top models and keys. From the
 * rollups; every time in UTC.
 */
import type { JSX } from 'preact';
import { useMemo } from 'preact/hooks';
import { api, query } from '../api.ts';
import { Chart, type ChartSeries, Field, Status } from '../components.tsx';
import { count, credits } from '../format.ts';
import { navigate, useLoad } from '../hooks.ts';
import type { Usage } from '../types.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const RANGES = { '24h': ['Last 24 hours', DAY], '7d': ['Last 7 days', 7 * DAY], '30d': ['Last 30 days', 30 * DAY] } as const;
type RangeName = keyof typeof RANGES | 'custom';
/** The API's widest hourly range (36 days). */
const MAX_HOURLY = 36 * DAY;
const PALETTE = ['#2563eb', '#059669', '#d97706', '#7c3aed', '#db2777', '#0891b2', '#65a30d', '#dc2626', '#64748b'];

function span(params: URLSearchParams): { range: RangeName; from: string; to: string; bucket: 'hour' | 'day' } {
  const range = (params.get('range') ?? '24h') as RangeName;
  let from: string;
  let to: string;
  if (range === 'custom') {
    from = params.get('from') ?? new Date(Date.now() - 7 * DAY).toISOString().slice(0, 10);
    to = params.get('to') ?? new Date(Date.now() + DAY).toISOString().slice(0, 10);
  } else {
    const width = (RANGES[range] ?? RANGES['24h'])[1];
    // Whole hours, so the same range loads the same answer within an hour's refreshes.
    to = new Date(Math.ceil(Date.now() / HOUR) * HOUR).toISOString();
    from = new Date(Date.parse(to) - width).toISOString();
  }
  const width = Date.parse(to) - Date.parse(from);
  const asked = params.get('bucket');
  const bucket = width > MAX_HOURLY ? 'day' : asked === 'hour' || asked === 'day' ? asked : width > 7 * DAY ? 'day' : 'hour';
  return { range, from, to, bucket };
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

export function OverviewPage({ params }: { params: URLSearchParams }) {
  const { range, from, to, bucket } = span(params);
  const accountId = params.get('account_id') ?? undefined;
  const keyId = params.get('key_id') ?? undefined;
  const stack = params.get('stack') === 'model' || params.get('stack') === 'key' ? (params.get('stack') as 'model' | 'key') : undefined;
  const usage = useLoad(
    () => api<Usage>(`/admin/v1/usage${query({ from, to, bucket, account_id: accountId, key_id: keyId, stack })}`),
    [from, to, bucket, accountId, keyId, stack],
  );
  const u = usage.data;
  const times = useMemo(() => (u?.series ?? []).map((p) => Date.parse(p.t)), [u]);
  const charts = useMemo(() => {
    const series = u?.series ?? [];
    const stacks = u?.stacks ?? [];
    const stacked = (pick: 'credits' | 'requests'): ChartSeries[] =>
      stacks.map((s, i) => ({ label: s.label, values: s[pick], color: PALETTE[i % PALETTE.length] as string }));
    return {
      spend: stacks.length > 0 ? stacked('credits') : [{ label: 'Credits', values: series.map((p) => p.credits), color: '#2563eb' }],
      requests: stacks.length > 0 ? stacked('requests') : [
        { label: 'Succeeded', values: series.map((p) => p.requests - p.errors), color: '#059669' },
        { label: 'Errors', values: series.map((p) => p.errors), color: '#dc2626' },
      ],
      tokens: [
        { label: 'Input, not cached', values: series.map((p) => p.prompt_tokens - p.cache_read_tokens - p.cache_write_tokens), color: '#7c3aed' },
        { label: 'Cache reads', values: series.map((p) => p.cache_read_tokens), color: '#0891b2' },
        { label: 'Cache writes', values: series.map((p) => p.cache_write_tokens), color: '#d97706' },
        { label: 'Output', values: series.map((p) => p.completion_tokens), color: '#475569' },
      ],
    };
  }, [u]);
  const chartRange: [number, number] = [Date.parse(from), Date.parse(to)];
  const tokens = (field: 'prompt_tokens' | 'completion_tokens' | 'cache_read_tokens' | 'cache_write_tokens') => sum((u?.series ?? []).map((p) => p[field]));
  const input = tokens('prompt_tokens');
  const set = (patch: Record<string, string | undefined>) =>
    navigate('overview', {
      range, from: range === 'custom' ? from : undefined, to: range === 'custom' ? to : undefined, bucket: params.get('bucket') ?? undefined,
      stack, account_id: accountId, key_id: keyId, ...patch,
    });
  const hourly = Date.parse(to) - Date.parse(from) <= MAX_HOURLY;
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <Field label="Range">
          <select name="range" value={range} onChange={(e) => set({ range: e.currentTarget.value, bucket: undefined })}>
            {Object.entries(RANGES).map(([name, [label]]) => <option key={name} value={name}>{label}</option>)}
            <option value="custom">Chosen dates</option>
          </select>
        </Field>
        {range === 'custom' && (
          <>
            <Field label="From (UTC)"><input type="date" value={from.slice(0, 10)} onChange={(e) => set({ range: 'custom', from: e.currentTarget.value, to })} /></Field>
            <Field label="To (UTC)"><input type="date" value={to.slice(0, 10)} onChange={(e) => set({ range: 'custom', from, to: e.currentTarget.value })} /></Field>
          </>
        )}
        <Field label="Bars per">
          <select name="bucket" value={bucket} onChange={(e) => set({ bucket: e.currentTarget.value })}>
            {hourly && <option value="hour">hour</option>}
            <option value="day">day</option>
          </select>
        </Field>
        <Field label="Stack by">
          <select name="stack" value={stack ?? ''} onChange={(e) => set({ stack: e.currentTarget.value || undefined })}>
            <option value="">nothing</option>
            <option value="model">model</option>
            <option value="key">key</option>
          </select>
        </Field>
        {accountId !== undefined && <p>Account <code>{accountId.slice(0, 8)}</code> <button type="button" class="link" onClick={() => set({ account_id: undefined, key_id: undefined })}>show all</button></p>}
        {keyId !== undefined && <p>Key <code>{keyId.slice(0, 8)}</code> <button type="button" class="link" onClick={() => set({ key_id: undefined })}>every key</button></p>}
      </form>
      <Status loading={usage.loading && u === undefined} error={usage.error} />
      {u !== undefined && (
        <>
          <dl class="tiles" aria-busy={usage.loading}>
            <div><dt>Spend</dt><dd data-testid="total-credits">{credits(u.totals.credits)} credits</dd></div>
            <div>
              <dt>Tokens in / out</dt>
              <dd data-testid="total-tokens">{count(input)} / {count(tokens('completion_tokens'))}</dd>
              <small>cache read {count(tokens('cache_read_tokens'))} · written {count(tokens('cache_write_tokens'))}</small>
            </div>
            <div><dt>Requests</dt><dd data-testid="total-requests">{count(u.totals.requests)}</dd></div>
            <div><dt>Errors</dt><dd data-testid="total-errors">{count(u.totals.errors)}</dd></div>
            <div><dt>Input from cache</dt><dd data-testid="cached-share">{input === 0 ? '—' : `${Math.round((tokens('cache_read_tokens') / input) * 1000) / 10}%`}</dd></div>
          </dl>
          <div class="charts">
            <Chart title={`Spend per ${bucket} (credits)${stack === undefined ? '' : `, by ${stack}`}`} times={times} series={charts.spend} range={chartRange} bucket={bucket} stacked format={credits} />
            <Chart title={`Requests per ${bucket}${stack === undefined ? '' : `, by ${stack}`}`} times={times} series={charts.requests} range={chartRange} bucket={bucket} stacked format={count} />
            <Chart title={`Tokens per ${bucket}`} times={times} series={charts.tokens} range={chartRange} bucket={bucket} stacked format={count} />
          </div>
          <div class="tables">
            <Ranked caption="Errors by code" head={['Code', 'Requests']} rows={u.errors_by_code.map((e) => [e.code, count(e.requests)])} values={u.errors_by_code.map((e) => e.requests)} />
            <Ranked caption="Top models" head={['Model', 'Requests', 'Credits']} rows={u.top_models.map((m) => [m.model, count(m.requests), credits(m.credits)])} values={u.top_models.map((m) => m.credits)} />
            <Ranked
              caption="Top keys"
              head={['Key', 'Requests', 'Credits']}
              rows={u.top_keys.map((k) => [<a key={k.key_id} href={`#/accounts/${k.account_id}`}>{k.key_name ?? k.key_id}</a>, count(k.requests), credits(k.credits)])}
              values={u.top_keys.map((k) => k.credits)}
            />
          </div>
        </>
      )}
    </section>
  );
}

/** A ranking: each row's bar is its share of the largest value (whatever the unit: credits under one included). */
function Ranked({ caption, head, rows, values }: { caption: string; head: string[]; rows: (string | JSX.Element)[][]; values: number[] }) {
  const max = Math.max(0, ...values);
  return (
    <table class="ranked">
      <caption>{caption}</caption>
      <thead><tr>{head.map((h) => <th key={h} scope="col">{h}</th>)}</tr></thead>
      <tbody>
        {rows.length === 0 && <tr><td colSpan={head.length} class="muted">None in this range.</td></tr>}
        {rows.map((cells, i) => (
          <tr key={i} style={{ '--share': `${max === 0 ? 0 : Math.round(((values[i] ?? 0) / max) * 1000) / 10}%` }}>
            {cells.map((c, j) => <td key={j} class={j === 0 ? 'bar' : 'num'}>{c}</td>)}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
