/**
 * The request log: account and key chosen by name, model, status, code and a time range in the
 * URL; pages by cursor; auto-refresh of the newest page; CSV of the whole filtered range. Each
 * row opens the request's detail (request.tsx).
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, download, query } from '../api.ts';
import { Failure, Field, Status } from '../components.tsx';
import { count, credits, ms, when } from '../format.ts';
import { navigate, useLoad } from '../hooks.ts';
import type { Account, ApiKey, JobPage } from '../types.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const FILTERS = ['account_id', 'key_id', 'model', 'status', 'code', 'range', 'from', 'to'] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;
const RANGES: Record<string, [string, number]> = { '1h': ['Last hour', HOUR], '24h': ['Last 24 hours', DAY], '7d': ['Last 7 days', 7 * DAY], '30d': ['Last 30 days', 30 * DAY] };
/** How often the newest page reloads itself with auto-refresh on. */
const REFRESH_MS = 10_000;

/** The API's [from, to) of the URL's range: a recent window, or whole UTC days (the end day included). */
function timeRange(f: Filters): { from?: string; to?: string } {
  const recent = f.range === undefined ? undefined : RANGES[f.range];
  if (recent !== undefined) return { from: new Date(Date.now() - recent[1]).toISOString() };
  if (f.range !== 'dates') return {};
  return { from: f.from, to: f.to === undefined ? undefined : new Date(Date.parse(f.to) + DAY).toISOString().slice(0, 10) };
}

export function LogPage({ params }: { params: URLSearchParams }) {
  const filters: Filters = Object.fromEntries(FILTERS.map((f) => [f, params.get(f) ?? undefined]));
  const cursor = params.get('cursor') ?? undefined;
  const live = params.get('live') === '1' && cursor === undefined;
  const { range: _range, from: _from, to: _to, ...exact } = filters;
  const key = JSON.stringify([filters, cursor]);
  // Each auto-refresh is a new round: a relative range ("last hour") is taken again, so it moves with the clock.
  const [round, setRound] = useState(0);
  const asked = useMemo(() => ({ ...exact, ...timeRange(filters) }), [key, round]);
  const page = useLoad(() => api<JobPage>(`/admin/v1/jobs${query({ ...asked, cursor, limit: 50 })}`), [key, round]);
  const accounts = useLoad(() => api<{ data: Account[] }>('/admin/v1/accounts?limit=200'), []);
  const names = new Map((accounts.data?.data ?? []).map((a) => [a.id, a.name]));
  useEffect(() => {
    if (!live) return;
    const timer = setInterval(() => setRound((r) => r + 1), REFRESH_MS);
    return () => clearInterval(timer);
  }, [live, key]);
  const [exportError, setExportError] = useState<string | null>(null);
  const go = (patch: Record<string, string | undefined>) => navigate('log', { ...filters, live: live ? '1' : undefined, ...patch });
  return (
    <section aria-labelledby="log-title">
      <h1 id="log-title">Request log</h1>
      <LogFilters filters={filters} accounts={accounts.data?.data ?? []} live={live} />
      <div class="actions">
        {cursor !== undefined && <button type="button" onClick={() => go({})}>Newest</button>}
        <label class="check">
          <input type="checkbox" checked={live} disabled={cursor !== undefined} onChange={(e) => go({ live: e.currentTarget.checked ? '1' : undefined })} />
          Auto-refresh every 10 s
        </label>
        <button type="button" onClick={() => download(`/admin/v1/jobs.csv${query(asked)}`, 'requests.csv').catch((e: unknown) => setExportError(e instanceof Error ? e.message : String(e)))}>
          Export CSV of this range
        </button>
      </div>
      <Failure error={exportError} />
      <Status loading={page.loading && page.data === undefined} error={page.error} />
      {page.data !== undefined && (
        <>
          <div class="scroll">
            <table class="log" aria-busy={page.loading}>
              <caption>{page.data.data.length === 0 ? 'No requests match.' : `${page.data.data.length} ${page.data.data.length === 1 ? 'request' : 'requests'}, newest first (times in UTC)`}</caption>
              <thead>
                <tr>
                  {['Time', 'Account', 'Key', 'Kind', 'Model', 'Status', 'Code', 'Tokens in / out', 'Cache read / written', 'Credits', 'Latency'].map((h) => <th key={h} scope="col">{h}</th>)}
                </tr>
              </thead>
              <tbody>
                {page.data.data.map((j) => (
                  <tr key={j.id}>
                    <td><a href={`#/log/${j.id}`} aria-label={`Request of ${when(j.created_at)}`}>{when(j.created_at)}</a></td>
                    <td><a href={`#/accounts/${j.account_id}`}>{names.get(j.account_id) ?? j.account_id.slice(0, 8)}</a></td>
                    <td>{j.key_id === null ? '—' : <a href={`#/log?account_id=${j.account_id}&key_id=${j.key_id}`}>{j.key_name ?? j.key_id}</a>}</td>
                    <td>{j.kind}</td>
                    <td><a href={`#/log?model=${encodeURIComponent(j.model)}`}>{j.model}</a></td>
                    <td>{j.status}</td>
                    <td>{j.code ?? '—'}</td>
                    <td class="num">{count(j.prompt_tokens)} / {count(j.completion_tokens)}</td>
                    <td class="num">{j.cache_read_tokens === null && j.cache_write_tokens === null ? '—' : `${count(j.cache_read_tokens ?? 0)} / ${count(j.cache_write_tokens ?? 0)}`}</td>
                    <td class="num">{credits(j.credits)}</td>
                    <td class="num">{ms(j.latency_ms)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {page.data.next_cursor !== null && (
            <button type="button" onClick={() => go({ live: undefined, cursor: page.data?.next_cursor ?? undefined })}>Older requests</button>
          )}
        </>
      )}
    </section>
  );
}

function LogFilters({ filters, accounts, live }: { filters: Filters; accounts: Account[]; live: boolean }) {
  const [draft, setDraft] = useState<Filters>(filters);
  useEffect(() => setDraft(filters), [JSON.stringify(filters)]);
  const keys = useLoad(
    () => (draft.account_id === undefined ? Promise.resolve([] as ApiKey[]) : api<ApiKey[]>(`/admin/v1/accounts/${draft.account_id}/keys`)),
    [draft.account_id],
  );
  const set = (patch: Filters) => setDraft({ ...draft, ...patch });
  const text = (name: 'model' | 'code', label: string) => (
    <Field label={label}>
      <input name={name} value={draft[name] ?? ''} onInput={(e) => set({ [name]: e.currentTarget.value.trim() || undefined })} />
    </Field>
  );
  return (
    <form class="filters" onSubmit={(e) => { e.preventDefault(); navigate('log', { ...draft, live: live ? '1' : undefined }); }}>
      <Field label="Account">
        <select name="account_id" value={draft.account_id ?? ''} onChange={(e) => set({ account_id: e.currentTarget.value || undefined, key_id: undefined })}>
          <option value="">every account</option>
          {draft.account_id !== undefined && !accounts.some((a) => a.id === draft.account_id) && <option value={draft.account_id}>{draft.account_id}</option>}
          {accounts.map((a) => <option key={a.id} value={a.id}>{a.name}</option>)}
        </select>
      </Field>
      <Field label="Key">
        <select name="key_id" value={draft.key_id ?? ''} disabled={draft.account_id === undefined} onChange={(e) => set({ key_id: e.currentTarget.value || undefined })}>
          <option value="">{draft.account_id === undefined ? 'choose an account first' : 'every key'}</option>
          {draft.key_id !== undefined && !(keys.data ?? []).some((k) => k.id === draft.key_id) && <option value={draft.key_id}>{draft.key_id}</option>}
          {(keys.data ?? []).map((k) => <option key={k.id} value={k.id}>{k.name} ({k.key_prefix}…)</option>)}
        </select>
      </Field>
      {text('model', 'Model')}
      <Field label="Status">
        <select name="status" value={draft.status ?? ''} onChange={(e) => set({ status: e.currentTarget.value || undefined })}>
          <option value="">any</option>
          {['processing', 'succeeded', 'failed', 'canceled'].map((s) => <option key={s} value={s}>{s}</option>)}
        </select>
      </Field>
      {text('code', 'Error code')}
      <Field label="Time">
        <select name="range" value={draft.range ?? ''} onChange={(e) => set({ range: e.currentTarget.value || undefined })}>
          <option value="">any time</option>
          {Object.entries(RANGES).map(([value, [label]]) => <option key={value} value={value}>{label}</option>)}
          <option value="dates">Chosen dates</option>
        </select>
      </Field>
      {draft.range === 'dates' && (
        <>
          <Field label="From (UTC)"><input name="from" type="date" value={draft.from ?? ''} onInput={(e) => set({ from: e.currentTarget.value || undefined })} /></Field>
          <Field label="To (UTC, included)"><input name="to" type="date" value={draft.to ?? ''} onInput={(e) => set({ to: e.currentTarget.value || undefined })} /></Field>
        </>
      )}
      <button type="submit">Apply filters</button>
      <button type="button" onClick={() => { setDraft({}); navigate('log'); }}>Clear</button>
    </form>
  );
}
