/** An account's keys: usage bars against their limits, creation (secret shown once), edit, rotate, revoke. */
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ConfirmButton, Failure, Field, Status, UsageBar } from '../components.tsx';
import { when } from '../format.ts';
import { useAction, useLoad } from '../hooks.ts';
import type { ApiKey, IssuedKey, KeyUsage } from '../types.ts';

const SCOPES = ['read', 'chat', 'embeddings', 'images', 'video', 'audio', 'jobs', 'fine_tuning', 'all'];

const EXPIRY = [['never', 'Never'], ['30d', 'In 30 days'], ['90d', 'In 90 days'], ['1y', 'In 1 year'], ['date', 'On a date…']] as const;
const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

const limitOrNull = (text: string): number | null => (text.trim() === '' ? null : Number(text));

export function KeysSection({ accountId }: { accountId: string }) {
  const keys = useLoad(() => api<ApiKey[]>(`/admin/v1/accounts/${accountId}/keys`), [accountId]);
  const [secret, setSecret] = useState<IssuedKey | null>(null);
  const issued = (key: IssuedKey) => {
    setSecret(key);
    keys.reload();
  };
  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      {secret !== null && <Secret issued={secret} onClose={() => setSecret(null)} />}
      <Status loading={keys.loading && keys.data === undefined} error={keys.error} />
      <ul class="keys">
        {keys.data?.length === 0 && <li class="muted">No keys yet.</li>}
        {keys.data?.map((k) => <KeyRow key={k.id} apiKey={k} onChange={keys.reload} onIssued={issued} />)}
      </ul>
      <NewKey accountId={accountId} onIssued={issued} />
    </section>
  );
}

function Secret({ issued, onClose }: { issued: IssuedKey; onClose: () => void }) {
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(issued.key);
      setCopied('Copied.');
    } catch {
      setCopied('Copying was refused by the browser: select the key and copy it by hand.');
    }
  };
  return (
    <div class="secret" role="alert" aria-labelledby="secret-title">
      <h3 id="secret-title">New key “{issued.name}”: copy it now, it is shown only once</h3>
      <code data-testid="secret">{issued.key}</code>
      <div class="actions">
        <button type="button" onClick={copy}>Copy key</button>
        <button type="button" onClick={onClose}>I have stored it</button>
      </div>
      {copied !== null && <p role="status">{copied}</p>}
    </div>
  );
}

function KeyRow({ apiKey: k, onChange, onIssued }: { apiKey: ApiKey; onChange: () => void; onIssued: (key: IssuedKey) => void }) {
  const usage = useLoad(() => api<KeyUsage>(`/admin/v1/keys/${k.id}/usage`), [k.id, k.daily_limit_credits, k.monthly_limit_credits]);
  const [editing, setEditing] = useState(false);
  const action = useAction();
  const revoke = () => action.run(() => api(`/admin/v1/keys/${k.id}/revoke`, { method: 'POST' })).then((ok) => ok && onChange());
  const rotate = () => action.run(async () => onIssued(await api<IssuedKey>(`/admin/v1/keys/${k.id}/rotate`, { method: 'POST' })));
  return (
    <li class={`key ${k.status}`} aria-label={`Key ${k.name}`}>
      <div class="key-head">
        <strong>{k.name}</strong> <code>{k.key_prefix}…</code> <span class={`badge ${k.status}`}>{k.status}</span>
        <small class="muted"> {k.scopes.join(', ')} · {k.requests_per_minute} rpm · expires {k.expires_at === null ? 'never' : when(k.expires_at)}{k.ip_allowlist.length > 0 ? ` · ${k.ip_allowlist.length} allowed addresses` : ''}</small>
      </div>
      <p class="key-times">
        <span>Created {when(k.created_at)}</span> · <span data-testid="last-used">Last used {k.last_used_at == null ? 'never' : when(k.last_used_at)}</span> ·{' '}
        <a href={`#/log?account_id=${k.account_id}&key_id=${k.id}`}>Requests</a> · <a href={`#/overview?range=30d&account_id=${k.account_id}&key_id=${k.id}`}>Usage</a>
      </p>
      <Status loading={usage.loading && usage.data === undefined} error={usage.error} />
      {usage.data !== undefined && (
        <div class="bars">
          <UsageBar label="Today" used={usage.data.day_credits} limit={k.daily_limit_credits} />
          <UsageBar label="This month" used={usage.data.month_credits} limit={k.monthly_limit_credits} />
        </div>
      )}
      {k.status === 'active' && (
        <div class="actions">
          <button type="button" onClick={() => setEditing(!editing)} aria-expanded={editing}>Edit limits</button>
          <ConfirmButton label="Rotate" question={`Rotate “${k.name}”? The current secret stops working now.`} onConfirm={rotate} />
          <ConfirmButton label="Revoke" danger question={`Revoke “${k.name}”? Requests with it are refused from now on.`} onConfirm={revoke} />
        </div>
      )}
      {editing && <EditLimits apiKey={k} onDone={() => { setEditing(false); onChange(); }} />}
      <Failure error={action.error} />
    </li>
  );
}

function EditLimits({ apiKey: k, onDone }: { apiKey: ApiKey; onDone: () => void }) {
  const text = (v: number | null) => (v === null ? '' : String(v));
  const [daily, setDaily] = useState(text(k.daily_limit_credits));
  const [monthly, setMonthly] = useState(text(k.monthly_limit_credits));
  const [threshold, setThreshold] = useState(String(k.warning_threshold));
  const [alerts, setAlerts] = useState(k.email_alerts);
  const [confirming, setConfirming] = useState(false);
  const action = useAction();
  const save = async () => {
    const body = { daily_limit_credits: limitOrNull(daily), monthly_limit_credits: limitOrNull(monthly), warning_threshold: Number(threshold), email_alerts: alerts };
    if (await action.run(() => api(`/admin/v1/keys/${k.id}`, { method: 'PATCH', body }))) onDone();
  };
  return (
    <form class="card inline" onSubmit={(e) => { e.preventDefault(); setConfirming(true); }} aria-label={`Limits of ${k.name}`}>
      <Field label="Daily limit (credits)" hint="Empty for none."><input name="daily_limit" type="number" min="0" step="any" value={daily} onInput={(e) => setDaily(e.currentTarget.value)} /></Field>
      <Field label="Monthly limit (credits)" hint="Empty for none."><input name="monthly_limit" type="number" min="0" step="any" value={monthly} onInput={(e) => setMonthly(e.currentTarget.value)} /></Field>
      <Field label="Warning threshold (0–1)"><input name="warning_threshold" type="number" min="0" max="1" step="0.05" value={threshold} onInput={(e) => setThreshold(e.currentTarget.value)} /></Field>
      <label class="check"><input type="checkbox" checked={alerts} onChange={(e) => setAlerts(e.currentTarget.checked)} /> E-mail alerts</label>
      {!confirming && <button type="submit">Save limits</button>}
      {confirming && (
        <span class="confirm" role="group" aria-label="Confirm the new limits">
          <span>Apply these limits to the next request?</span>
          <button type="button" disabled={action.busy} onClick={save}>Yes, save limits</button>
          <button type="button" onClick={() => setConfirming(false)}>Cancel</button>
        </span>
      )}
      <Failure error={action.error} />
    </form>
  );
}

function NewKey({ accountId, onIssued }: { accountId: string; onIssued: (key: IssuedKey) => void }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['read', 'chat']);
  const [rpm, setRpm] = useState('600');
  const [allow, setAllow] = useState('');
  const [daily, setDaily] = useState('');
  const [monthly, setMonthly] = useState('');
  const [expires, setExpires] = useState('never');
  const [expiryDate, setExpiryDate] = useState('');
  const [threshold, setThreshold] = useState('0.8');
  const [alerts, setAlerts] = useState(false);
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    const body = {
      name, scopes, requests_per_minute: Number(rpm),
      ip_allowlist: allow.split(/[\s,]+/).filter((a) => a !== ''),
      daily_limit_credits: limitOrNull(daily), monthly_limit_credits: limitOrNull(monthly),
      expires: expires === 'date' ? expiryDate : expires, warning_threshold: Number(threshold), email_alerts: alerts,
    };
    await action.run(async () => {
      onIssued(await api<IssuedKey>(`/admin/v1/accounts/${accountId}/keys`, { method: 'POST', body }));
      // The next key starts from the defaults, not this key's limits.
      setName(''); setScopes(['read', 'chat']); setRpm('600'); setAllow(''); setDaily(''); setMonthly('');
      setExpires('never'); setExpiryDate(''); setThreshold('0.8'); setAlerts(false);
    });
  };
  const toggle = (scope: string, on: boolean) => setScopes(on ? [...scopes, scope] : scopes.filter((s) => s !== scope));
  return (
    <form class="card" onSubmit={submit} aria-labelledby="new-key-title">
      <h3 id="new-key-title">New key</h3>
      <Field label="Key name"><input name="key_name" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} /></Field>
      <fieldset class="scopes">
        <legend>Scopes</legend>
        {SCOPES.map((s) => <label key={s} class="check"><input type="checkbox" checked={scopes.includes(s)} onChange={(e) => toggle(s, e.currentTarget.checked)} /> {s}</label>)}
      </fieldset>
      <div class="grid">
        <Field label="Requests per minute" hint="60–6000"><input name="rpm" type="number" min="60" max="6000" required value={rpm} onInput={(e) => setRpm(e.currentTarget.value)} /></Field>
        <Field label="Daily limit (credits)" hint="Empty for none."><input name="new_daily_limit" type="number" min="0" step="any" value={daily} onInput={(e) => setDaily(e.currentTarget.value)} /></Field>
        <Field label="Monthly limit (credits)" hint="Empty for none."><input name="new_monthly_limit" type="number" min="0" step="any" value={monthly} onInput={(e) => setMonthly(e.currentTarget.value)} /></Field>
        <Field label="Expires">
          <select name="expires" value={expires} onChange={(e) => setExpires(e.currentTarget.value)}>
            {EXPIRY.map(([value, label]) => <option key={value} value={value}>{label}</option>)}
          </select>
        </Field>
        {expires === 'date' && (
          <Field label="Expiry date (UTC)" hint="The key stops working at the start of this day.">
            <input name="expiry_date" type="date" required min={tomorrow()} value={expiryDate} onInput={(e) => setExpiryDate(e.currentTarget.value)} />
          </Field>
        )}
        <Field label="Warning threshold (0–1)"><input name="threshold" type="number" min="0" max="1" step="0.05" value={threshold} onInput={(e) => setThreshold(e.currentTarget.value)} /></Field>
      </div>
      <Field label="IP allowlist" hint="Addresses or CIDRs, separated by spaces or commas; empty allows any (at most 50).">
        <textarea name="allowlist" rows={2} value={allow} onInput={(e) => setAllow(e.currentTarget.value)} />
      </Field>
      <label class="check"><input type="checkbox" checked={alerts} onChange={(e) => setAlerts(e.currentTarget.checked)} /> E-mail alerts</label>
      <button type="submit" disabled={action.busy}>{action.busy ? 'Creating…' : 'Create key'}</button>
      <Failure error={action.error} />
    </form>
  );
}
