/** One account: money, settings, keys, ledger, notifications and recent requests. */
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Failure, Field, Status } from '../components.tsx';
import { credits, ms, when } from '../format.ts';
import { useAction, useLoad } from '../hooks.ts';
import type { Account, JobPage, LedgerRow, NotificationRow } from '../types.ts';
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
          <p class="muted">{a.email ?? 'no e-mail'} · created {when(a.created_at)} · <code>{a.id}</code> · <a href={`#/overview?range=30d&account_id=${a.id}`}>usage charts</a></p>
          <dl class="tiles">
            <div><dt>Balance</dt><dd data-testid="balance">{credits(a.balance_credits)}</dd></div>
            <div><dt>Held</dt><dd>{credits(a.held_credits)}</dd></div>
            <div><dt>Available</dt><dd data-testid="available">{credits(a.available_credits)}</dd></div>
            <div><dt>Spent this month</dt><dd>{credits(a.month_spent_credits)}{a.monthly_spending_limit_credits !== null && ` of ${credits(a.monthly_spending_limit_credits)}`}</dd></div>
          </dl>
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
  const ledger = useLoad(() => api<LedgerRow[]>(`/admin/v1/accounts/${id}/ledger?limit=20`), [id]);
  const notes = useLoad(() => api<NotificationRow[]>(`/admin/v1/accounts/${id}/notifications`), [id]);
  const jobs = useLoad(() => api<JobPage>(`/admin/v1/jobs?account_id=${id}&limit=10`), [id]);
  return (
    <div class="columns">
      <div>
        <h2>Recent requests</h2>
        <Status loading={jobs.loading} error={jobs.error} />
        <ul class="plain">
          {jobs.data?.data.length === 0 && <li class="muted">No requests yet.</li>}
          {jobs.data?.data.map((j) => (
            <li key={j.id}>{when(j.created_at)} · {j.model} · {j.status}{j.code !== null ? ` (${j.code})` : ''} · {credits(j.credits)} credits · {ms(j.latency_ms)}</li>
          ))}
        </ul>
        <a href={`#/log?account_id=${id}`}>All requests of this account</a>
      </div>
      <div>
        <h2>Ledger</h2>
        <Status loading={ledger.loading} error={ledger.error} />
        <ul class="plain">
          {ledger.data?.length === 0 && <li class="muted">No movements yet.</li>}
          {ledger.data?.map((l) => <li key={l.id}>{when(l.created_at)} · {l.kind} · {credits(l.credits)}</li>)}
        </ul>
        <h2>Notifications</h2>
        <Status loading={notes.loading} error={notes.error} />
        <ul class="plain">
          {notes.data?.length === 0 && <li class="muted">No notifications.</li>}
          {notes.data?.map((n, i) => <li key={i}>{when(n.created_at)} · {n.kind} · {n.limit} limit of key {n.key_id}{n.emailed ? ' · e-mailed' : ''}</li>)}
        </ul>
      </div>
    </div>
  );
}
