/** Keys: create (scopes ticked, limits, expiry, alerts; the secret shown once), rotate, revoke, last used. */
import { useState } from 'preact/hooks';
import { creditCount } from '../../../web-shared/money.ts';
import { ConfirmButton, Field, Status, useAction } from '../../../web-shared/ui.tsx';
import { useLoad } from '../../../web-shared/use-load.ts';
import { api } from '../api.ts';
import { when } from '../format.ts';
import type { IssuedKey, Key } from '../types.ts';

const SCOPES = [
  ['read', 'Read models'], ['chat', 'Chat'], ['embeddings', 'Embeddings'], ['images', 'Images'], ['video', 'Video'],
  ['audio', 'Audio'], ['jobs', 'Any job'], ['fine_tuning', 'Fine-tuning'], ['all', 'All routes'],
] as const;
const EXPIRY = [['never', 'Never'], ['30d', '30 days'], ['90d', '90 days'], ['1y', '1 year'], ['date', 'On a date…']] as const;

const optionalNumber = (text: string): number | null => (text.trim() === '' ? null : Number(text));

function Secret({ issued, onDone }: { issued: IssuedKey; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(issued.key).then(() => setCopied(true), () => setCopied(false));
  };
  return (
    <div class="card secret" role="alert">
      <h3>Your new key “{issued.name}”</h3>
      <p>Copy it now: it is shown only once.</p>
      <code data-testid="secret">{issued.key}</code>
      <p>
        <button type="button" onClick={() => void copy()}>Copy</button> {copied && <span role="status">Copied.</span>}{' '}
        <button type="button" onClick={onDone}>I have stored it</button>
      </p>
    </div>
  );
}

function NewKey({ accountId, onIssued }: { accountId: string; onIssued: (k: IssuedKey) => void }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['read', 'chat']);
  const [rpm, setRpm] = useState('600');
  const [allow, setAllow] = useState('');
  const [daily, setDaily] = useState('');
  const [monthly, setMonthly] = useState('');
  const [expiry, setExpiry] = useState('never');
  const [date, setDate] = useState('');
  const [alerts, setAlerts] = useState(false);
  const action = useAction();
  const toggle = (scope: string, on: boolean) => setScopes((s) => (on ? [...s, scope] : s.filter((x) => x !== scope)));
  const submit = async (event: Event) => {
    event.preventDefault();
    const ok = await action.run(async () => {
      const issued = await api<IssuedKey>(`/accounts/${accountId}/keys`, {
        method: 'POST',
        body: {
          name,
          scopes,
          requests_per_minute: Number(rpm),
          ip_allowlist: allow.split(/[\s,]+/).filter((s) => s !== ''),
          daily_limit_credits: optionalNumber(daily),
          monthly_limit_credits: optionalNumber(monthly),
          expires: expiry === 'date' ? date : expiry,
          email_alerts: alerts,
        },
      });
      onIssued(issued);
    });
    if (ok) setName('');
  };
  return (
    <form class="card" onSubmit={submit} aria-label="New key">
      <h2>New key</h2>
      <Field label="Key name"><input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} /></Field>
      <fieldset>
        <legend>Scopes</legend>
        {SCOPES.map(([scope, label]) => (
          <label class="check" key={scope}>
            <input type="checkbox" checked={scopes.includes(scope)} onChange={(e) => toggle(scope, e.currentTarget.checked)} /> {label}
          </label>
        ))}
      </fieldset>
      <div class="grid">
        <Field label="Requests per minute" hint="60 to 6,000; fixed once made."><input type="number" min={60} max={6000} required value={rpm} onInput={(e) => setRpm(e.currentTarget.value)} /></Field>
        <Field label="Daily limit (credits)" hint="Empty: no limit. 1 credit = $0.01."><input type="number" min={0} step="any" value={daily} onInput={(e) => setDaily(e.currentTarget.value)} /></Field>
        <Field label="Monthly limit (credits)" hint="Empty: no limit."><input type="number" min={0} step="any" value={monthly} onInput={(e) => setMonthly(e.currentTarget.value)} /></Field>
        <Field label="Expires">
          <select value={expiry} onChange={(e) => setExpiry(e.currentTarget.value)}>
            {EXPIRY.map(([value, label]) => <option key={value} value={value}>{label}</option>)}
          </select>
        </Field>
        {expiry === 'date' && <Field label="Expiry date"><input type="date" required value={date} onInput={(e) => setDate(e.currentTarget.value)} /></Field>}
      </div>
      <Field label="IP allowlist" hint="Addresses or CIDR blocks, one per line; empty allows every address. At most 50.">
        <textarea rows={2} value={allow} onInput={(e) => setAllow(e.currentTarget.value)} />
      </Field>
      <label class="check"><input type="checkbox" checked={alerts} onChange={(e) => setAlerts(e.currentTarget.checked)} /> E-mail alerts at 80 % and at a limit</label>
      <p><button type="submit" disabled={action.busy || scopes.length === 0}>Create key</button></p>
      {action.error !== null && <p class="error" role="alert">{action.error}</p>}
    </form>
  );
}

function KeyItem({ accountId, k, onChange, onIssued }: { accountId: string; k: Key; onChange: () => void; onIssued: (i: IssuedKey) => void }) {
  const action = useAction();
  const revoke = () => action.run(async () => { await api(`/accounts/${accountId}/keys/${k.id}/revoke`, { method: 'POST' }); onChange(); });
  const rotate = () => action.run(async () => { onIssued(await api<IssuedKey>(`/accounts/${accountId}/keys/${k.id}/rotate`, { method: 'POST' })); onChange(); });
  const limits = [k.daily_limit_credits === null ? null : `${creditCount(k.daily_limit_credits)} a day`, k.monthly_limit_credits === null ? null : `${creditCount(k.monthly_limit_credits)} a month`].filter((x) => x !== null);
  return (
    <li class={`key ${k.status}`} aria-label={`Key ${k.name}`}>
      <div class="key-head">
        <strong>{k.name}</strong> <code>{k.key_prefix}…</code> <span class={`badge ${k.status}`}>{k.status}</span>
      </div>
      <dl class="facts">
        <div><dt>Scopes</dt><dd>{k.scopes.join(', ')}</dd></div>
        <div><dt>Rate</dt><dd>{k.requests_per_minute}/min</dd></div>
        <div><dt>Limits (credits)</dt><dd>{limits.length === 0 ? 'none' : limits.join(', ')}</dd></div>
        <div><dt>Expires</dt><dd>{k.expires_at === null ? 'never' : when(k.expires_at)}</dd></div>
        <div><dt>Last used</dt><dd>{k.last_used_at === null ? 'never' : when(k.last_used_at)}</dd></div>
        {k.ip_allowlist.length > 0 && <div><dt>Allowed addresses</dt><dd>{k.ip_allowlist.join(', ')}</dd></div>}
      </dl>
      {k.status === 'active' && (
        <p class="actions">
          <button type="button" onClick={() => void rotate()} disabled={action.busy}>Rotate</button>{' '}
          <ConfirmButton label="Revoke" question="Revoke this key now? Requests with it stop at once." onConfirm={() => void revoke()} />
        </p>
      )}
      {action.error !== null && <p class="error" role="alert">{action.error}</p>}
    </li>
  );
}

export function KeysPage({ accountId }: { accountId: string }) {
  const keys = useLoad(() => api<{ data: Key[] }>(`/accounts/${accountId}/keys`), [accountId]);
  const [issued, setIssued] = useState<IssuedKey | null>(null);
  const show = (k: IssuedKey) => { setIssued(k); keys.reload(); };
  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      {issued !== null && <Secret issued={issued} onDone={() => setIssued(null)} />}
      <Status loading={keys.loading && keys.data === undefined} error={keys.error} />
      {keys.data !== undefined && (
        <>
          <ul class="keys">
            {keys.data.data.map((k) => <KeyItem key={k.id} accountId={accountId} k={k} onChange={keys.reload} onIssued={show} />)}
          </ul>
          {keys.data.data.length === 0 && <p class="muted">No keys yet.</p>}
          <NewKey accountId={accountId} onIssued={show} />
        </>
      )}
    </section>
  );
}
