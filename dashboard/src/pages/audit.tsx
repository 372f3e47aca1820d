/** The admin audit log: every change made through the admin API, who made it and how it was answered. */
import { useState } from 'preact/hooks';
import { api, query } from '../api.ts';
import { Status } from '../components.tsx';
import { when } from '../format.ts';
import { useLoad } from '../hooks.ts';

interface AuditEntry {
  id: number;
  at: string;
  actor: string;
  action: string;
  account_id: string | null;
  target: string | null;
  status: number;
  detail: string | null;
}

export function AuditPage() {
  const [before, setBefore] = useState<number | undefined>(undefined);
  const log = useLoad(() => api<{ data: AuditEntry[]; next_before: number | null }>(`/admin/v1/audit${query({ limit: 100, before })}`), [before]);
  return (
    <section>
      <h1>Audit log</h1>
      <p class="muted">Every change made through the admin API or this dashboard, newest first.</p>
      <Status loading={log.loading} error={log.error} />
      {log.data !== undefined && (
        <div class="scroll">
          <table class="log" aria-label="Audit log">
            <thead><tr><th scope="col">Time</th><th scope="col">Who</th><th scope="col">Change</th><th scope="col">Account</th><th scope="col">Status</th><th scope="col">Body</th></tr></thead>
            <tbody>
              {log.data.data.map((e) => (
                <tr key={e.id}>
                  <td>{when(e.at)}</td>
                  <td>{e.actor}</td>
                  <td><code>{e.action}</code></td>
                  <td>{e.account_id === null ? '—' : <a href={`#/accounts/${e.account_id}`}>{e.account_id.slice(0, 8)}</a>}</td>
                  <td class="num">{e.status}</td>
                  <td><code>{e.detail ?? ''}</code></td>
                </tr>
              ))}
              {log.data.data.length === 0 && <tr><td colSpan={6} class="muted">No changes yet.</td></tr>}
            </tbody>
          </table>
        </div>
      )}
      <p>
        {before !== undefined && <button type="button" onClick={() => setBefore(undefined)}>Newest</button>}{' '}
        {log.data?.next_before != null && <button type="button" onClick={() => setBefore(log.data?.next_before ?? undefined)}>Older</button>}
      </p>
    </section>
  );
}
