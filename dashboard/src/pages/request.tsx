/**
 * One request in detail: what ran (model, provider, the provider's model id), how it ended (status,
 * code and the message its client was answered), the money (held against charged), its attempts
 * at the providers, and its ledger rows. Reached from the request log (#/log/<id>).
 */
import { api } from '../api.ts';
import { Status } from '../components.tsx';
import { count, credits, ms, when } from '../format.ts';
import { useLoad } from '../hooks.ts';
import type { JobDetail } from '../types.ts';

const LEDGER_KINDS: Record<string, string> = { hold: 'Hold', settle: 'Charge', refund: 'Hold released (refund)' };

export function RequestPage({ id }: { id: string }) {
  const job = useLoad(() => api<JobDetail>(`/admin/v1/jobs/${encodeURIComponent(id)}`), [id]);
  const j = job.data;
  return (
    <section aria-labelledby="request-title">
      <p><a href="#/log">← Request log</a></p>
      <h1 id="request-title">Request <code>{id.slice(0, 8)}</code></h1>
      <Status loading={job.loading && j === undefined} error={job.error} />
      {j !== undefined && (
        <>
          <dl class="tiles">
            <div><dt>Status</dt><dd data-testid="status" class={j.status === 'succeeded' ? 'ok' : j.status === 'processing' ? '' : 'bad'}>{j.status}</dd></div>
            <div><dt>Held (credits)</dt><dd data-testid="held">{credits(j.held_credits)}</dd></div>
            <div><dt>Charged (credits)</dt><dd data-testid="charged">{credits(j.credits)}</dd></div>
            <div><dt>Latency</dt><dd>{ms(j.latency_ms)}</dd></div>
          </dl>
          {j.code !== null && (
            <div class="card problem" role="note" aria-label="Error">
              <h2>Error <code>{j.code}</code></h2>
              <p data-testid="error-message">{j.error_message ?? 'No message was kept (the request ended before the gateway recorded messages).'}</p>
            </div>
          )}
          <dl class="facts" aria-label="Request">
            <dt>Id</dt><dd><code>{j.id}</code></dd>
            <dt>Account</dt><dd><a href={`#/accounts/${j.account_id}`}>{j.account_name ?? j.account_id}</a></dd>
            <dt>Key</dt><dd>{j.key_id === null ? '—' : <a href={`#/log?account_id=${j.account_id}&key_id=${j.key_id}`}>{j.key_name ?? j.key_id}</a>}</dd>
            <dt>Kind</dt><dd>{j.kind}</dd>
            <dt>Model</dt><dd>{j.model}</dd>
            <dt>Provider</dt><dd data-testid="provider">{j.provider ?? '—'}</dd>
            <dt>Provider's model id</dt><dd data-testid="provider-model-id">{j.provider_model_id === null ? '—' : <code>{j.provider_model_id}</code>}</dd>
            <dt>Started</dt><dd>{when(j.created_at)}</dd>
            <dt>Finished</dt><dd>{when(j.finished_at)}</dd>
            <dt>Tokens in / out</dt><dd>{count(j.prompt_tokens)} / {count(j.completion_tokens)}</dd>
            <dt>Of the input, cache read / written</dt><dd>{count(j.cache_read_tokens ?? 0)} / {count(j.cache_write_tokens ?? 0)}</dd>
            <dt>Hold against charge</dt>
            <dd>held {credits(j.held_credits)}, charged {credits(j.credits ?? 0)}, released {credits(Math.max(0, j.held_credits - (j.credits ?? 0)))}</dd>
          </dl>
          <h2>Attempts</h2>
          {j.attempts === null || j.attempts.length === 0 ? (
            <p class="muted">No provider calls were recorded for this request.</p>
          ) : (
            <div class="scroll">
              <table aria-label="Attempts">
                <thead>
                  <tr>{['#', 'Model', 'Provider', "Provider's model id", 'Key', 'HTTP status', 'Code', 'Then', 'Time'].map((h) => <th key={h} scope="col">{h}</th>)}</tr>
                </thead>
                <tbody>
                  {j.attempts.map((a, i) => (
                    <tr key={i}>
                      <td class="num">{i + 1}</td>
                      <td>{a.model}</td>
                      <td>{a.provider}</td>
                      <td><code>{a.deployment}</code></td>
                      <td>key {a.key + 1}</td>
                      <td class="num">{a.status === 0 ? 'none' : a.status}</td>
                      <td>{a.code ?? '—'}</td>
                      <td>{a.retry === undefined ? (i === (j.attempts?.length ?? 0) - 1 ? 'answered' : '—') : `retried (${a.retry.replace('_', ' ')})`}</td>
                      <td class="num">{ms(a.ms)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <h2>Ledger rows</h2>
          <div class="scroll">
            <table aria-label="Ledger rows">
              <thead><tr><th scope="col">Time</th><th scope="col">Movement</th><th scope="col" class="num">Credits</th></tr></thead>
              <tbody>
                {j.ledger.length === 0 && <tr><td colSpan={3} class="muted">No ledger rows.</td></tr>}
                {j.ledger.map((l) => (
                  <tr key={l.id}><td>{when(l.created_at)}</td><td>{LEDGER_KINDS[l.kind] ?? l.kind}</td><td class="num">{credits(l.credits)}</td></tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
