/** The shell: sign-in with the admin token, navigation, hash routes. */
import { useEffect, useState } from 'preact/hooks';
import { api, token, whenUnauthorized } from './api.ts';
import { Field } from './components.tsx';
import { useRoute } from './hooks.ts';
import { AccountPage } from './pages/account.tsx';
import { AccountsPage } from './pages/accounts.tsx';
import { CatalogPage } from './pages/catalog.tsx';
import { LogPage } from './pages/log.tsx';
import { OverviewPage } from './pages/overview.tsx';
import { RequestPage } from './pages/request.tsx';
import { AuditPage } from './pages/audit.tsx';
import { endSsoSession, resumeSsoSession, SsoSignIn } from './sso.tsx';

const NAV = [
  ['overview', 'Overview'],
  ['accounts', 'Accounts'],
  ['log', 'Request log'],
  ['catalog', 'Catalog'],
  ['audit', 'Audit log'],
] as const;

function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    token.set(value.trim());
    try {
      await api('/admin/v1/accounts?limit=1');
      onSignedIn();
    } catch (err) {
      token.clear();
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <h1>Model Gateway admin</h1>
      <form onSubmit={submit}>
        <Field label="Admin token" hint="The gateway's ADMIN_TOKEN. Kept in this tab only.">
          <input type="password" name="token" autoComplete="current-password" required value={value} onInput={(e) => setValue(e.currentTarget.value)} />
        </Field>
        <button type="submit" disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
        {error !== null && <p class="error" role="alert">{error}</p>}
      </form>
      <SsoSignIn />
    </main>
  );
}

export function App() {
  const [signedIn, setSignedIn] = useState(token.get() !== null);
  const route = useRoute();
  useEffect(() => whenUnauthorized(() => { token.clear(); setSignedIn(false); }), []);
  useEffect(() => {
    if (!signedIn) void resumeSsoSession().then((email) => { if (email !== null) setSignedIn(true); });
  }, []);
  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />;
  const [page = 'overview', id] = route.path;
  const signOut = () => { token.clear(); void endSsoSession(); setSignedIn(false); };
  return (
    <>
      <a class="skip" href="#content" onClick={(e) => { e.preventDefault(); document.getElementById('content')?.focus(); }}>Skip to content</a>
      <header class="top">
        <strong>Model Gateway</strong>
        <nav aria-label="Main">
          {NAV.map(([path, label]) => (
            <a key={path} href={`#/${path}`} aria-current={page === path ? 'page' : undefined}>{label}</a>
          ))}
        </nav>
        <button type="button" class="link" onClick={signOut}>Sign out</button>
      </header>
      <main id="content" tabIndex={-1}>
        {page === 'overview' && <OverviewPage params={route.params} />}
        {page === 'accounts' && id === undefined && <AccountsPage params={route.params} />}
        {page === 'accounts' && id !== undefined && <AccountPage id={id} />}
        {page === 'log' && id === undefined && <LogPage params={route.params} />}
        {page === 'log' && id !== undefined && <RequestPage id={id} />}
        {page === 'catalog' && <CatalogPage />}
        {page === 'audit' && <AuditPage />}
        {!NAV.some(([p]) => p === page) && <p role="alert">No page here. Choose one above.</p>}
      </main>
    </>
  );
}
