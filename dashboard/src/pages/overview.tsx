/** Spend, requests, tokens (cache reads and writes apart), errors by code, top models and keys over a range, from the hourly rollups. */
import type { JSX } from 'preact';
import { useMemo } from 'preact/hooks';
import { api, query } from '../api.ts';
import { Chart, Field, Status } from '../components.tsx';
import { count, credits } from '../format.ts';
import { navigate, useLoad } from '../hooks.ts';
import type { Usage } from '../types.ts';

const DAY = 86_400_000;
const RANGES = { '24h': ['Last 24 hours', DAY], '7d': ['Last 7 days', 7 * DAY], '30d': ['Last 30 days', 30 * DAY] } as const;
type RangeName = keyof typeof RANGES | 'custom';

function span(params: URLSearchParams): { range: RangeName; from: string; to: string; bucket: 'hour' | 'day' } {
  const range = (params.get('range') ?? '24h') as RangeName;
  if (range === 'custom') {
    const from = params.get('from') ?? new Date(Date.now() - 7 * DAY).toISOString().slice(0, 10);
    const to = params.get('to') ?? new Date(Date.now() + DAY).toISOString().slice(0, 10);
    const days = (Date.parse(to) - Date.parse(from)) / DAY;
    return { range, from, to, bucket: days > 7 ? 'day' : 'hour' };
  }
  const width = (RANGES[range] ?? RANGES['24h'])[1];
  const now = Date.now();
  // Whole hours, so the same range loads the same answer within an hour's refreshes.
  const to = new Date(Math.ceil(now / 3_600_000) * 3_600_000).toISOString();
  return { range, from: new Date(Date.parse(to) - width).toISOString(), to, bucket: width > 7 * DAY ? 'day' : 'hour' };
}

export function OverviewPage({ params }: { params: URLSearchParams }) {
  const { range, from, to, bucket } = span(params);
  const accountId = params.get('account_id') ?? undefined;
  const usage = useLoad(() => api<Usage>(`/admin/v1/usage${query({ from, to, bucket, account_id: accountId })}`), [from, to, bucket, accountId]);
  const u = usage.data;
  const times = useMemo(() => (u?.series ?? []).map((p) => Date.parse(p.t)), [u]);
  const spend = useMemo(() => [{ label: 'Credits', values: (u?.series ?? []).map((p) => p.credits), color: '#2563eb' }], [u]);
  const traffic = useMemo(
    () => [
      { label: 'Requests', values: (u?.series ?? []).map((p) => p.requests), color: '#059669' },
      { label: 'Errors', values: (u?.series ?? []).map((p) => p.errors), color: '#dc2626' },
    ],
    [u],
  );
  const tokens = useMemo(() => {
    const series = u?.series ?? [];
    return [
      { label: 'Input, not cached', values: series.map((p) => p.prompt_tokens - p.cache_read_tokens - p.cache_write_tokens), color: '#7c3aed' },
      { label: 'Cache reads', values: series.map((p) => p.cache_read_tokens), color: '#0891b2' },
      { label: 'Cache writes', values: series.map((p) => p.cache_write_tokens), color: '#d97706' },
      { label: 'Output', values: series.map((p) => p.completion_tokens), color: '#475569' },
    ];
  }, [u]);
  const input = (u?.series ?? []).reduce((sum, p) => sum + p.prompt_tokens, 0);
  const read = (u?.series ?? []).reduce((sum, p) => sum + p.cache_read_tokens, 0);
  const set = (patch: Record<string, string | undefined>) =>
    navigate('overview', { range, from: range === 'custom' ? from : undefined, to: range === 'custom' ? to : undefined, account_id: accountId, ...patch });
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <Field label="Range">
          <select value={range} onChange={(e) => set({ range: e.currentTarget.value })}>
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
        {accountId !== undefined && <p>Account {accountId} <button type="button" class="link" onClick={() => set({ account_id: undefined })}>show all</button></p>}
      </form>
      <Status loading={usage.loading && u === undefined} error={usage.error} />
      {u !== undefined && (
        <>
          <dl class="tiles" aria-busy={usage.loading}>
            <div><dt>Spend</dt><dd data-testid="total-credits">{credits(u.totals.credits)} credits</dd></div>
            <div><dt>Requests</dt><dd data-testid="total-requests">{count(u.totals.requests)}</dd></div>
            <div><dt>Errors</dt><dd data-testid="total-errors">{count(u.totals.errors)}</dd></div>
            <div><dt>Input from cache</dt><dd data-testid="cached-share">{input === 0 ? '—' : `${Math.round((read / input) * 1000) / 10}%`}</dd></div>
          </dl>
          <div class="charts">
            <Chart title={`Spend per ${bucket} (credits)`} times={times} series={spend} unit="credits" />
            <Chart title={`Requests and errors per ${bucket}`} times={times} series={traffic} unit="requests" />
            <Chart title={`Tokens per ${bucket}`} times={times} series={tokens} unit="tokens" />
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

function Ranked({ caption, head, rows, values }: { caption: string; head: string[]; rows: (string | JSX.Element)[][]; values: number[] }) {
  const max = Math.max(1, ...values);
  return (
    <table class="ranked">
      <caption>{caption}</caption>
      <thead><tr>{head.map((h) => <th key={h} scope="col">{h}</th>)}</tr></thead>
      <tbody>
        {rows.length === 0 && <tr><td colSpan={head.length} class="muted">None in this range.</td></tr>}
        {rows.map((cells, i) => (
          <tr key={i} style={{ '--share': `${((values[i] ?? 0) / max) * 100}%` }}>
            {cells.map((c, j) => <td key={j} class={j === 0 ? 'bar' : 'num'}>{c}</td>)}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
