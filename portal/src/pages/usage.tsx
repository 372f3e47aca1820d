/** Usage: spend, requests and tokens by day, model and key; the request log with filters and CSV. */
import { useState } from 'preact/hooks';
import { creditsAsUsd } from '../../../web-shared/money.ts';
import { Status } from '../../../web-shared/ui.tsx';
import { useLoad } from '../../../web-shared/use-load.ts';
import { api, query } from '../api.ts';
import { count, when } from '../format.ts';
import type { Job, Usage, UsageAmounts } from '../types.ts';

const RANGES = [[7, 'Last 7 days'], [30, 'Last 30 days'], [90, 'Last 90 days']] as const;

function Breakdown<T extends UsageAmounts>({ title, column, rows, label }: { title: string; column: string; rows: T[]; label: (row: T) => string }) {
  const top = Math.max(0, ...rows.map((r) => r.credits));
  return (
    <div class="scroll">
      <table class="ranked">
        <caption>{title}</caption>
        <thead><tr><th scope="col">{column}</th><th scope="col" class="num">Spend</th><th scope="col" class="num">Requests</th><th scope="col" class="num">Tokens in / out</th></tr></thead>
        <tbody>
          {rows.map((r) => (
            <tr key={label(r)}>
              <td class="bar" style={{ '--share': `${top === 0 ? 0 : Math.round((r.credits / top) * 100)}%` }}>{label(r)}</td>
              <td class="num">{creditsAsUsd(r.credits)}</td>
              <td class="num">{count(r.requests)}{r.errors > 0 && <small> ({count(r.errors)} failed)</small>}</td>
              <td class="num">{count(r.prompt_tokens)} / {count(r.completion_tokens)}</td>
            </tr>
          ))}
          {rows.length === 0 && <tr><td colSpan={4} class="muted">Nothing in this range.</td></tr>}
        </tbody>
      </table>
    </div>
  );
}

function RequestLog({ accountId }: { accountId: string }) {
  const [filters, setFilters] = useState({ model: '', status: '', key_id: '' });
  const [applied, setApplied] = useState(filters);
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors.at(-1);
  const log = useLoad(() => api<{ data: Job[]; next_cursor: string | null }>(`/accounts/${accountId}/jobs${query({ ...applied, cursor, limit: 25 })}`), [accountId, applied, cursor]);
  const apply = (event: Event) => {
    event.preventDefault();
    setCursors([undefined]);
    setApplied(filters);
  };
  return (
    <section aria-labelledby="log-title">
      <h2 id="log-title">Request log</h2>
      <form class="filters" onSubmit={apply}>
        <label class="field"><span>Model</span><input value={filters.model} onInput={(e) => setFilters({ ...filters, model: e.currentTarget.value })} /></label>
        <label class="field"><span>Status</span>
          <select value={filters.status} onChange={(e) => setFilters({ ...filters, status: e.currentTarget.value })}>
            <option value="">any</option><option value="succeeded">succeeded</option><option value="failed">failed</option><option value="canceled">canceled</option><option value="processing">processing</option>
          </select>
        </label>
        <button type="submit">Apply filters</button>
        <a class="button" href={`/portal/api/accounts/${accountId}/jobs.csv${query(applied)}`} download="requests.csv">Download CSV</a>
      </form>
      <Status loading={log.loading} error={log.error} />
      {log.data !== undefined && (
        <div class="scroll">
          <table class="log">
            <thead><tr><th scope="col">Time</th><th scope="col">Model</th><th scope="col">Key</th><th scope="col">Status</th><th scope="col" class="num">Tokens in / out</th><th scope="col" class="num">Cost</th></tr></thead>
            <tbody>
              {log.data.data.map((j) => (
                <tr key={j.id}>
                  <td>{when(j.created_at)}</td>
                  <td>{j.model}</td>
                  <td>{j.key_name ?? '—'}</td>
                  <td>{j.status}{j.code !== null && <small> {j.code}</small>}</td>
                  <td class="num">{count(j.prompt_tokens)} / {count(j.completion_tokens)}</td>
                  <td class="num">{creditsAsUsd(j.credits)}</td>
                </tr>
              ))}
              {log.data.data.length === 0 && <tr><td colSpan={6} class="muted">No requests.</td></tr>}
            </tbody>
          </table>
        </div>
      )}
      <p>
        {cursors.length > 1 && <button type="button" onClick={() => setCursors(cursors.slice(0, -1))}>Newer</button>}{' '}
        {log.data?.next_cursor != null && <button type="button" onClick={() => setCursors([...cursors, log.data?.next_cursor ?? undefined])}>Older</button>}
      </p>
    </section>
  );
}

export function UsagePage({ accountId }: { accountId: string }) {
  const [days, setDays] = useState(30);
  const usage = useLoad(() => {
    const to = Date.now();
    return api<Usage>(`/accounts/${accountId}/usage${query({ from: new Date(to - days * 86_400_000).toISOString(), to: new Date(to).toISOString() })}`);
  }, [accountId, days]);
  const u = usage.data;
  return (
    <section aria-labelledby="usage-title">
      <h2 id="usage-title">Usage</h2>
      <label class="field inline"><span>Range</span>
        <select value={days} onChange={(e) => setDays(Number(e.currentTarget.value))}>{RANGES.map(([d, label]) => <option key={d} value={d}>{label}</option>)}</select>
      </label>
      <Status loading={usage.loading && u === undefined} error={usage.error} />
      {u !== undefined && (
        <>
          <dl class="tiles">
            <div><dt>Spend</dt><dd data-testid="spend">{creditsAsUsd(u.totals.credits)}</dd></div>
            <div><dt>Requests</dt><dd data-testid="requests">{count(u.totals.requests)}</dd></div>
            <div><dt>Tokens in</dt><dd>{count(u.totals.prompt_tokens)}</dd></div>
            <div><dt>Tokens out</dt><dd>{count(u.totals.completion_tokens)}</dd></div>
          </dl>
          <div class="tables">
            <Breakdown title="By day" column="Day (UTC)" rows={u.by_day} label={(r) => r.day} />
            <Breakdown title="By model" column="Model" rows={u.by_model} label={(r) => r.model} />
            <Breakdown title="By key" column="Key" rows={u.by_key} label={(r) => r.key_name ?? (r.key_id === null ? 'no key' : r.key_id)} />
          </div>
        </>
      )}
      <RequestLog accountId={accountId} />
    </section>
  );
}
