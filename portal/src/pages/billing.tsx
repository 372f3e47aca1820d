/** Balance and ledger as money (signed amounts, running balance); owners: monthly spending limit and billing e-mails. */
import { useState } from 'preact/hooks';
import { creditCount, creditsAsUsd, signedUsd } from '../../../web-shared/money.ts';
import { Field, Status, useAction } from '../../../web-shared/ui.tsx';
import { useLoad } from '../../../web-shared/use-load.ts';
import { api, query } from '../api.ts';
import { when } from '../format.ts';
import type { Account, MoneyEntry, Role } from '../types.ts';

const KIND: Record<string, string> = { topup: 'Purchase', grant: 'Credits granted', settle: 'Usage', payment_refund: 'Refund to card' };

function Settings({ account, onSaved }: { account: Account; onSaved: () => void }) {
  const [limit, setLimit] = useState(account.monthly_spending_limit_credits === null ? '' : String(account.monthly_spending_limit_credits));
  const [emails, setEmails] = useState(account.billing_emails);
  const action = useAction();
  const [saved, setSaved] = useState(false);
  const save = async (event: Event) => {
    event.preventDefault();
    setSaved(false);
    const ok = await action.run(() => api(`/accounts/${account.id}`, {
      method: 'PATCH', body: { monthly_spending_limit_credits: limit.trim() === '' ? null : Number(limit), billing_emails: emails },
    }));
    if (ok) { setSaved(true); onSaved(); }
  };
  return (
    <form class="card" onSubmit={save} aria-label="Account settings">
      <h2>Spending and e-mails</h2>
      <Field label="Monthly spending limit (credits)" hint={`Empty: no limit. ${limit.trim() === '' ? '' : `= ${creditsAsUsd(Number(limit))} a month.`}`}>
        <input type="number" min={0} step="any" value={limit} onInput={(e) => setLimit(e.currentTarget.value)} />
      </Field>
      <label class="check"><input type="checkbox" checked={emails} onChange={(e) => setEmails(e.currentTarget.checked)} /> Billing e-mails (limit alerts)</label>
      <p><button type="submit" disabled={action.busy}>Save settings</button> {saved && <span role="status">Saved.</span>}</p>
      {action.error !== null && <p class="error" role="alert">{action.error}</p>}
    </form>
  );
}

interface Payments {
  enabled: boolean;
  amounts_usd: number[];
  data: { id: string; amount_usd: number; credits: number; refunded_usd: number; receipt_url: string | null; created_at: string }[];
}

/** Buying credits through Stripe Checkout (owners), and every payment with its receipt. */
function Purchases({ accountId, role }: { accountId: string; role: Role }) {
  const payments = useLoad(() => api<Payments>(`/accounts/${accountId}/payments`), [accountId]);
  const action = useAction();
  const returned = new URLSearchParams(location.hash.split('?')[1] ?? '').get('checkout');
  const buy = (usd: number) => action.run(async () => {
    location.assign((await api<{ url: string }>(`/accounts/${accountId}/checkout`, { method: 'POST', body: { amount_usd: usd } })).url);
  });
  const p = payments.data;
  return (
    <>
      {p?.enabled === true && role === 'owner' && (
        <div class="card" aria-label="Buy credits">
          <h2>Buy credits</h2>
          <p class="muted">Paid by card through Stripe. 1 credit = $0.01; a purchase also lifts the trial limits.</p>
          <p class="actions">
            {p.amounts_usd.map((usd) => <button key={usd} type="button" class="primary" disabled={action.busy} onClick={() => void buy(usd)}>Buy ${usd}</button>)}
          </p>
          {returned === 'canceled' && <p role="status">The payment was canceled; nothing was charged.</p>}
          {returned !== null && returned !== 'canceled' && <p role="status">Thank you: the credits appear here as soon as Stripe confirms the payment.</p>}
          {action.error !== null && <p class="error" role="alert">{action.error}</p>}
        </div>
      )}
      <Status loading={payments.loading && p === undefined} error={payments.error} />
      {p !== undefined && p.data.length > 0 && (
        <div class="scroll">
          <table class="receipts">
            <caption>Payments</caption>
            <thead><tr><th scope="col">Time</th><th scope="col" class="num">Paid</th><th scope="col" class="num">Credits</th><th scope="col" class="num">Refunded</th><th scope="col">Receipt</th></tr></thead>
            <tbody>
              {p.data.map((r) => (
                <tr key={r.id}>
                  <td>{when(r.created_at)}</td>
                  <td class="num">{creditsAsUsd(r.amount_usd * 100)}</td>
                  <td class="num">{creditCount(r.credits)}</td>
                  <td class="num">{r.refunded_usd === 0 ? '—' : creditsAsUsd(r.refunded_usd * 100)}</td>
                  <td>{r.receipt_url === null ? '—' : <a href={r.receipt_url} target="_blank" rel="noopener noreferrer">Receipt</a>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

export function BillingPage({ accountId, role }: { accountId: string; role: Role }) {
  const account = useLoad(() => api<Account>(`/accounts/${accountId}`), [accountId]);
  const [before, setBefore] = useState<number | undefined>(undefined);
  const ledger = useLoad(() => api<{ data: MoneyEntry[]; next_before: number | null }>(`/accounts/${accountId}/ledger${query({ before, limit: 50 })}`), [accountId, before]);
  const a = account.data;
  return (
    <section aria-labelledby="billing-title">
      <h2 id="billing-title">Balance</h2>
      <Status loading={account.loading && a === undefined} error={account.error} />
      {a !== undefined && (
        <>
          <dl class="tiles">
            <div><dt>Balance</dt><dd data-testid="balance">{creditsAsUsd(a.balance_credits)}</dd><small>{creditCount(a.balance_credits)} credits</small></div>
            <div><dt>Available now</dt><dd>{creditsAsUsd(a.available_credits)}</dd><small>{creditsAsUsd(a.held_credits)} held by runs in flight</small></div>
            <div><dt>Spent this month</dt><dd>{creditsAsUsd(a.month_spent_credits)}</dd><small>{a.monthly_spending_limit_credits === null ? 'no monthly limit' : `limit ${creditsAsUsd(a.monthly_spending_limit_credits)}`}</small></div>
            <div><dt>Trial</dt><dd>{a.has_purchase ? 'No' : 'Yes'}</dd><small>{a.has_purchase ? 'a purchase lifted the trial rules' : 'trial rules apply until a purchase'}</small></div>
          </dl>
          <Purchases accountId={accountId} role={role} />
          {role === 'owner' && <Settings account={a} onSaved={account.reload} />}
        </>
      )}
      <h2>Ledger</h2>
      <Status loading={ledger.loading && ledger.data === undefined} error={ledger.error} />
      {ledger.data !== undefined && (
        <div class="scroll">
          <table class="ledger">
            <thead><tr><th scope="col">Time</th><th scope="col">What</th><th scope="col" class="num">Amount</th><th scope="col" class="num">Balance after</th></tr></thead>
            <tbody>
              {ledger.data.data.map((e) => (
                <tr key={e.id}>
                  <td>{when(e.created_at)}</td>
                  <td>{KIND[e.kind] ?? e.kind}</td>
                  <td class={`num ${e.credits < 0 ? 'minus' : 'plus'}`}>{signedUsd(e.credits)}</td>
                  <td class="num">{creditsAsUsd(e.balance_after_credits)}</td>
                </tr>
              ))}
              {ledger.data.data.length === 0 && <tr><td colSpan={4} class="muted">No movements yet.</td></tr>}
            </tbody>
          </table>
        </div>
      )}
      <p>
        {before !== undefined && <button type="button" onClick={() => setBefore(undefined)}>Newest</button>}{' '}
        {ledger.data?.next_before != null && <button type="button" onClick={() => setBefore(ledger.data?.next_before ?? undefined)}>Older</button>}
      </p>
    </section>
  );
}
