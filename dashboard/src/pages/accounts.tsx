/** Account search and creation. */
import { useState } from 'preact/hooks';
import { api, query } from '../api.ts';
import { Failure, Field, Status } from '../components.tsx';
import { credits, when } from '../format.ts';
import { navigate, useLoad } from '../hooks.ts';
import type { Account } from '../types.ts';

const caption = (n: number) =>
  n === 0 ? 'No accounts match.' : `${n} ${n === 1 ? 'account' : 'accounts'}${n === 50 ? ' (the newest 50; search to narrow)' : ''}`;

export function AccountsPage({ params }: { params: URLSearchParams }) {
  const q = params.get('q') ?? '';
  const [term, setTerm] = useState(q);
  const list = useLoad(() => api<{ data: Account[] }>(`/admin/v1/accounts${query({ q })}`), [q]);
  return (
    <section aria-labelledby="accounts-title">
      <h1 id="accounts-title">Accounts</h1>
      <div class="columns">
        <div>
          <form class="filters" role="search" onSubmit={(e) => { e.preventDefault(); navigate('accounts', { q: term }); }}>
            <Field label="Search by name, e-mail or id"><input type="search" name="q" value={term} onInput={(e) => setTerm(e.currentTarget.value)} /></Field>
            <button type="submit">Search</button>
          </form>
          <Status loading={list.loading} error={list.error} />
          {list.data !== undefined && (
            <div class="scroll">
              <table>
                <caption>{caption(list.data.data.length)}</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th><th scope="col">E-mail</th><th scope="col" class="num">Balance</th><th scope="col" class="num">Spent this month</th>
                    <th scope="col">Last activity</th>
                  </tr>
                </thead>
                <tbody>
                  {list.data.data.map((a) => (
                    <tr key={a.id}>
                      <td><a href={`#/accounts/${a.id}`}>{a.name}</a></td>
                      <td class="wrap">{a.email ?? '—'}</td>
                      <td class="num">{credits(a.balance_credits)}</td>
                      <td class="num">{credits(a.month_spent_credits)}</td>
                      <td>{a.last_activity_at == null ? 'none yet' : <a href={`#/log?account_id=${a.id}`}>{when(a.last_activity_at)}</a>}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </div>
        <NewAccount />
      </div>
    </section>
  );
}

function NewAccount() {
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [billingEmails, setBillingEmails] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const account = await api<Account>('/admin/v1/accounts', { method: 'POST', body: { name, email: email.trim() === '' ? null : email.trim(), billing_emails: billingEmails } });
      navigate(`accounts/${account.id}`);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="new-account-title">
      <h2 id="new-account-title">New account</h2>
      <Field label="Name"><input name="name" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} /></Field>
      <Field label="E-mail (optional)"><input name="email" type="email" value={email} onInput={(e) => setEmail(e.currentTarget.value)} /></Field>
      <label class="check"><input type="checkbox" checked={billingEmails} onChange={(e) => setBillingEmails(e.currentTarget.checked)} /> Billing e-mails</label>
      <button type="submit" disabled={busy}>{busy ? 'Creating…' : 'Create account'}</button>
      <Failure error={error} />
    </form>
  );
}
