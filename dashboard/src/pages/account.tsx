/** One account: money, settings, keys, ledger, notifications and recent requests. */
import { useState } from 'preact/hooks';
import { api, query } from '../api.ts';
import { Failure, Field, Status } from '../components.tsx';
import { credits, ms, signed, when } from '../format.ts';
import { useAction, useLoad } from '../hooks.ts';
import type { Account, JobPage, NotificationRow, StatementPage } from '../types.ts';
import { KeysSection } from './keys.tsx';

export function AccountPage({ id }: { id: string }) {
  const account = useLoad(() => api<Account>(`/admin/v1/accounts/${id}`), [id]);
  const a = account.data;
  return (
    <section aria-labelledby="account-title">
      <h1 id="account-title">{a?.name ?? 'Account'}</h1>
      <Status loading={account.loading && a === undefined} error={account.error} />
      {a !== undefined && (
        <>
          <dl class="tiles">
            <div><dt>Balance</dt><dd data-testid="balance">{credits(a.balance_credits)}</dd></div>
            <div><dt>Held</dt><dd>{credits(a.held_credits)}</dd></div>
            <div><dt>Available</dt><dd data-testid="available">{credits(a.available_credits)}</dd></div>
            <div><dt>Spent this month</dt><dd>{credits(a.month_spent_credits)}{a.monthly_spending_limit_credits !== null && ` of ${credits(a.monthly_spending_limit_credits)}`}</dd></div>
          </dl>
          <p class="muted wrap">{a.email ?? 'no e-mail'} · created {when(a.created_at)} · <code>{a.id}</code> · <a href={`#/overview?range=30d&account_id=${a.id}`}>usage charts</a></p>
          <div class="columns">
            <AddCredits id={id} onDone={account.reload} />
            <AccountSettings account={a} onDone={account.reload} />
          </div>
          <KeysSection accountId={id} />
          <Recent id={id} />
        </>
      )}
    </section>
  );
}

function AddCredits({ id, onDone }: { id: string; onDone: () => void }) {
  const [amount, setAmount] = useState('');
  const [purchase, setPurchase] = useState(true);
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    if (await action.run(() => api(`/admin/v1/accounts/${id}/credits`, { method: 'POST', body: { credits: Number(amount), purchase } }))) {
      setAmount('');
      onDone();
    }
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="credits-title">
      <h2 id="credits-title">Add credits</h2>
      <Field label="Credits"><input name="credits" type="number" min="0.000001" step="any" required value={amount} onInput={(e) => setAmount(e.currentTarget.value)} /></Field>
      <fieldset>
        <legend>Kind</legend>
        <label class="check"><input type="radio" name="kind" checked={purchase} onChange={() => setPurchase(true)} /> Top-up (a purchase)</label>
        <label class="check"><input type="radio" name="kind" checked={!purchase} onChange={() => setPurchase(false)} /> Grant</label>
      </fieldset>
      <button type="submit" disabled={action.busy}>Add credits</button>
      <Failure error={action.error} />
    </form>
  );
}

function AccountSettings({ account, onDone }: { account: Account; onDone: () => void }) {
  const [limit, setLimit] = useState(account.monthly_spending_limit_credits === null ? '' : String(account.monthly_spending_limit_credits));
  const [billing, setBilling] = useState(account.billing_emails);
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    const body = { monthly_spending_limit_credits: limit.trim() === '' ? null : Number(limit), billing_emails: billing };
    if (await action.run(() => api(`/admin/v1/accounts/${account.id}`, { method: 'PATCH', body }))) onDone();
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <Field label="Monthly spending limit (credits)" hint="Empty for no limit.">
        <input name="monthly_limit" type="number" min="0" step="any" value={limit} onInput={(e) => setLimit(e.currentTarget.value)} />
      </Field>
      <label class="check"><input type="checkbox" checked={billing} onChange={(e) => setBilling(e.currentTarget.checked)} /> Billing e-mails</label>
      <button type="submit" disabled={action.busy}>Save settings</button>
      <Failure error={action.error} />
    </form>
  );
}

function Recent({ id }: { id: string }) {
  const notes = useLoad(() => api<NotificationRow[]>(`/admin/v1/accounts/${id}/notifications`), [id]);
  const jobs = useLoad(() => api<JobPage>(`/admin/v1/jobs?account_id=${id}&limit=10`), [id]);
  return (
    <>
      <Statement id={id} />
      <div class="columns">
        <div>
          <h2>Recent requests</h2>
          <Status loading={jobs.loading} error={jobs.error} />
          <ul class="plain">
            {jobs.data?.data.length === 0 && <li class="muted">No requests yet.</li>}
            {jobs.data?.data.map((j) => (
              <li key={j.id}>
                <a href={`#/log/${j.id}`}>{when(j.created_at)}</a> · {j.model} · {j.status}{j.code !== null ? ` (${j.code})` : ''} · {credits(j.credits)} credits · {ms(j.latency_ms)}
              </li>
            ))}
          </ul>
          <a href={`#/log?account_id=${id}`}>All requests of this account</a>
        </div>
        <div>
          <h2>Notifications</h2>
          <Status loading={notes.loading} error={notes.error} />
          <ul class="plain">
            {notes.data?.length === 0 && <li class="muted">No notifications.</li>}
            {notes.data?.map((n, i) => <li key={i}>{when(n.created_at)} · {n.kind} · {n.limit} limit of key {n.key_id}{n.emailed ? ' · e-mailed' : ''}</li>)}
          </ul>
        </div>
      </div>
    </>
  );
}

const MOVEMENTS: Record<string, string> = { topup: 'Top-up', grant: 'Grant', settle: 'Charge', payment_refund: 'Card refund' };

/** The ledger as money: every movement of the balance (one line per billed run), signed, with the balance it left. */
function Statement({ id }: { id: string }) {
  const [before, setBefore] = useState<number | undefined>(undefined);
  const page = useLoad(() => api<StatementPage>(`/admin/v1/accounts/${id}/statement${query({ limit: 20, before })}`), [id, before]);
  return (
    <section aria-labelledby="statement-title">
      <h2 id="statement-title">Statement</h2>
      <p class="muted">Top-ups, grants, one charge per billed request and card refunds, newest first. Holds of requests in flight and refunds of failed ones leave the balance as it was.</p>
      <Status loading={page.loading && page.data === undefined} error={page.error} />
      {page.data !== undefined && (
        <div class="scroll">
          <table class="statement" aria-label="Statement">
            <thead><tr><th scope="col">Time</th><th scope="col">Movement</th><th scope="col" class="num">Credits</th><th scope="col" class="num">Balance after</th></tr></thead>
            <tbody>
              {page.data.data.length === 0 && <tr><td colSpan={4} class="muted">No movements yet.</td></tr>}
              {page.data.data.map((l) => (
                <tr key={l.id}>
                  <td>{when(l.created_at)}</td>
                  <td>{l.job_id === null ? (MOVEMENTS[l.kind] ?? l.kind) : <a href={`#/log/${l.job_id}`}>{MOVEMENTS[l.kind] ?? l.kind}</a>}</td>
                  <td class={`num ${l.change_credits < 0 ? 'debit' : 'credit'}`}>{signed(l.change_credits)}</td>
                  <td class="num">{credits(l.balance_after_credits)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p class="actions">
        {before !== undefined && <button type="button" onClick={() => setBefore(undefined)}>Newest</button>}
        {page.data?.next_before != null && <button type="button" onClick={() => setBefore(page.data?.next_before ?? undefined)}>Older movements</button>}
      </p>
    </section>
  );
}
