/** The portal's shell: sign-in (e-mail link, OIDC), the link's landing page, the account switcher and pages. */
import { useEffect, useState } from 'preact/hooks';
import { Field, Status, useAction } from '../../web-shared/ui.tsx';
import { useLoad } from '../../web-shared/use-load.ts';
import { api, ApiError, setCsrf, whenSignedOut } from './api.ts';
import { BillingPage } from './pages/billing.tsx';
import { KeysPage } from './pages/keys.tsx';
import { MembersPage } from './pages/members.tsx';
import { NotificationsPage } from './pages/notifications.tsx';
import { UsagePage } from './pages/usage.tsx';
import type { Session } from './types.ts';

const PAGES = [
  ['keys', 'Keys'],
  ['usage', 'Usage'],
  ['billing', 'Balance'],
  ['notifications', 'Notifications'],
  ['members', 'Members'],
] as const;

function useHash(): string[] {
  const read = () => location.hash.replace(/^#\/?/, '').split('?')[0]?.split('/').filter((p) => p !== '') ?? [];
  const [path, setPath] = useState(read);
  useEffect(() => {
    const update = () => setPath(read());
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return path;
}

function SignIn() {
  const options = useLoad(() => api<{ email: boolean; oidc: boolean }>('/sign-in-options'), []);
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState<string | null>(null);
  const action = useAction();
  const error = new URLSearchParams(location.hash.split('?')[1] ?? '').get('error');
  const submit = async (event: Event) => {
    event.preventDefault();
    await action.run(async () => setSent((await api<{ message: string }>('/sign-in/email', { method: 'POST', body: { email } })).message));
  };
  return (
    <main class="signin">
      <h1>Sign in to Model Gateway</h1>
      {error !== null && <p class="error" role="alert">{error}</p>}
      <Status loading={options.loading} error={options.error} />
      {options.data?.email !== false && (
        <form onSubmit={submit} class="card">
          <Field label="E-mail address" hint="We send a sign-in link to members of an account.">
            <input type="email" name="email" autoComplete="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
          </Field>
          <button type="submit" disabled={action.busy}>Send me a sign-in link</button>
          {sent !== null && <p role="status" class="ok">{sent}</p>}
          {action.error !== null && <p class="error" role="alert">{action.error}</p>}
        </form>
      )}
      {options.data?.oidc === true && (
        <p><button type="button" class="primary" disabled={action.busy} onClick={() => void action.run(async () => { location.assign((await api<{ url: string }>('/sign-in/oidc')).url); })}>Sign in with single sign-on</button></p>
      )}
    </main>
  );
}

function LinkLanding({ token, onSession }: { token: string; onSession: (s: Session) => void }) {
  const action = useAction();
  const use = () => action.run(async () => {
    const session = await api<Session>('/sign-in/link', { method: 'POST', body: { token } });
    onSession(session);
    // Replaces the spent link in the history (and fires hashchange, which replaceState would not).
    location.replace('#/');
  });
  return (
    <main class="signin">
      <h1>Sign in to Model Gateway</h1>
      <p>This link signs you in once.</p>
      <button type="button" class="primary" disabled={action.busy} onClick={() => void use()}>Sign in</button>
      {action.error !== null && <p class="error" role="alert">{action.error} <a href="#/sign-in">Ask for a new link</a>.</p>}
    </main>
  );
}

export function App() {
  const path = useHash();
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const signedIn = (s: Session | null) => {
    setCsrf(s?.csrf_token ?? null);
    setSession(s);
  };
  useEffect(() => {
    whenSignedOut(() => signedIn(null));
    api<Session>('/session').then(signedIn, (err: unknown) => {
      if (err instanceof ApiError && err.status === 401) signedIn(null);
      else setSession(null);
    });
  }, []);
  if (path[0] === 'link' && path[1] !== undefined) return <LinkLanding token={path[1]} onSession={signedIn} />;
  if (session === undefined) return <main><p class="muted" role="status">Loading…</p></main>;
  if (session === null) return <SignIn />;
  if (session.accounts.length === 0) return <main><h1>No account</h1><p>{session.email} is not a member of any account. Ask an owner to invite you.</p></main>;

  const [first, accountId = session.accounts[0]?.id ?? '', page = 'keys'] = path;
  const inAccount = first === 'a';
  const current = session.accounts.find((a) => a.id === accountId);
  const signOut = async () => {
    await api('/sign-out', { method: 'POST' }).catch(() => undefined);
    signedIn(null);
    location.hash = '#/sign-in';
  };
  return (
    <>
      <header class="top">
        <strong>Model Gateway</strong>
        {session.accounts.length > 1 && (
          <select aria-label="Account" value={accountId} onChange={(e) => { location.hash = `#/a/${e.currentTarget.value}/${page}`; }}>
            {session.accounts.map((a) => <option key={a.id} value={a.id}>{a.name}</option>)}
          </select>
        )}
        <nav aria-label="Pages">
          {PAGES.map(([p, label]) => (
            <a key={p} href={`#/a/${accountId}/${p}`} aria-current={(inAccount ? page : 'keys') === p ? 'page' : undefined}>{label}</a>
          ))}
        </nav>
        <span class="who">{session.email}</span>
        <button type="button" class="link" onClick={() => void signOut()}>Sign out</button>
      </header>
      <main id="content">
        {/* An account id typed into the URL is asked of the gateway all the same: it answers only a member. */}
        {(
          <>
            <h1>{current?.name ?? 'Account'} {current !== undefined && <small class="muted">({current.role})</small>}</h1>
            {(!inAccount || page === 'keys') && <KeysPage accountId={accountId} />}
            {inAccount && page === 'usage' && <UsagePage accountId={accountId} />}
            {inAccount && page === 'billing' && <BillingPage accountId={accountId} role={current?.role ?? 'member'} />}
            {inAccount && page === 'notifications' && <NotificationsPage accountId={accountId} />}
            {inAccount && page === 'members' && <MembersPage accountId={accountId} role={current?.role ?? 'member'} self={session.email} />}
          </>
        )}
      </main>
    </>
  );
}
