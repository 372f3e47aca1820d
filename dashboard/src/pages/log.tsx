/** The request log: filters in the URL, pages by cursor, CSV export of the filtered rows. */
import { useState } from 'preact/hooks';
import { api, download, query } from '../api.ts';
import { Failure, Field, Status } from '../components.tsx';
import { count, credits, ms, when } from '../format.ts';
import { navigate, useLoad } from '../hooks.ts';
import type { JobPage } from '../types.ts';

const FILTERS = ['account_id', 'key_id', 'model', 'status', 'code'] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

export function LogPage({ params }: { params: URLSearchParams }) {
  const filters: Filters = Object.fromEntries(FILTERS.map((f) => [f, params.get(f) ?? undefined]));
  const cursor = params.get('cursor') ?? undefined;
  const key = JSON.stringify([filters, cursor]);
  const page = useLoad(() => api<JobPage>(`/admin/v1/jobs${query({ ...filters, cursor, limit: 50 })}`), [key]);
  const [exportError, setExportError] = useState<string | null>(null);
  return (
    <section aria-labelledby="log-title">
      <h1 id="log-title">Request log</h1>
      <LogFilters filters={filters} />
      <div class="actions">
        {cursor !== undefined && <button type="button" onClick={() => navigate('log', { ...filters })}>Newest</button>}
        <button type="button" onClick={() => download(`/admin/v1/jobs.csv${query(filters)}`, 'requests.csv').catch((e: unknown) => setExportError(e instanceof Error ? e.message : String(e)))}>
          Export CSV
        </button>
      </div>
      <Failure error={exportError} />
      <Status loading={page.loading} error={page.error} />
      {page.data !== undefined && (
        <>
          <div class="scroll">
            <table class="log" aria-busy={page.loading}>
              <caption>{page.data.data.length === 0 ? 'No requests match.' : `${page.data.data.length} requests, newest first`}</caption>
              <thead>
                <tr>
                  {['Time', 'Key', 'Kind', 'Model', 'Status', 'Code', 'Tokens in / out', 'Cache read / written', 'Credits', 'Latency'].map((h) => <th key={h} scope="col">{h}</th>)}
                </tr>
              </thead>
              <tbody>
                {page.data.data.map((j) => (
                  <tr key={j.id}>
                    <td>{when(j.created_at)}</td>
                    <td>{j.key_id === null ? '—' : <a href={`#/log?key_id=${j.key_id}`}>{j.key_name ?? j.key_id}</a>}</td>
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
            <button type="button" onClick={() => navigate('log', { ...filters, cursor: page.data?.next_cursor ?? undefined })}>Older requests</button>
          )}
        </>
      )}
    </section>
  );
}

function LogFilters({ filters }: { filters: Filters }) {
  const [draft, setDraft] = useState<Filters>(filters);
  const input = (name: keyof Filters, label: string) => (
    <Field label={label}>
      <input name={name} value={draft[name] ?? ''} onInput={(e) => setDraft({ ...draft, [name]: e.currentTarget.value.trim() || undefined })} />
    </Field>
  );
  return (
    <form class="filters" onSubmit={(e) => { e.preventDefault(); navigate('log', draft); }}>
      {input('account_id', 'Account id')}
      {input('key_id', 'Key id')}
      {input('model', 'Model')}
      <Field label="Status">
        <select name="status" value={draft.status ?? ''} onChange={(e) => setDraft({ ...draft, status: e.currentTarget.value || undefined })}>
          <option value="">any</option>
          {['processing', 'succeeded', 'failed', 'canceled'].map((s) => <option key={s} value={s}>{s}</option>)}
        </select>
      </Field>
      {input('code', 'Error code')}
      <button type="submit">Apply filters</button>
      <button type="button" onClick={() => { setDraft({}); navigate('log'); }}>Clear</button>
    </form>
  );
}
