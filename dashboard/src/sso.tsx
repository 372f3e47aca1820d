/**
 * The dashboard's single sign-on (ADMIN_OIDC_EMAILS): a link to the OpenID Connect provider when the
 * gateway offers one, and the cookie session it leaves, resumed at load, whose CSRF token every change sends.
 */
import { useEffect, useState } from 'preact/hooks';
import { setCsrf } from './api.ts';

let sessionCsrf: string | null = null;

/** The signed-in operator of a cookie session, if any (its CSRF token is set for the API client). */
export async function resumeSsoSession(): Promise<string | null> {
  try {
    const response = await fetch('/admin/v1/session', { credentials: 'same-origin' });
    if (!response.ok) return null;
    const session = (await response.json()) as { email: string | null; csrf_token: string | null };
    if (session.csrf_token === null) return null;
    sessionCsrf = session.csrf_token;
    setCsrf(session.csrf_token);
    return session.email;
  } catch {
    return null;
  }
}

/** Ends the cookie session (a token session has none). */
export async function endSsoSession(): Promise<void> {
  if (sessionCsrf === null) return;
  await fetch('/admin/auth/sign-out', { method: 'POST', headers: { 'x-csrf-token': sessionCsrf } }).catch(() => undefined);
  sessionCsrf = null;
  setCsrf(null);
}

/** "Sign in with single sign-on", shown when the gateway has an OIDC provider for operators; the provider's refusal in words. */
export function SsoSignIn() {
  const [offered, setOffered] = useState(false);
  const [failed, setFailed] = useState<string | null>(null);
  const start = async () => {
    const response = await fetch('/admin/auth/oidc').catch(() => undefined);
    const body = (await response?.json().catch(() => undefined)) as { url?: string; error?: { message: string } } | undefined;
    if (body?.url !== undefined) location.assign(body.url);
    else setFailed(body?.error?.message ?? 'The identity provider could not be reached.');
  };
  const error = new URLSearchParams(location.hash.split('?')[1] ?? '').get('error');
  useEffect(() => {
    fetch('/admin/auth/options').then(async (r) => setOffered(r.ok && ((await r.json()) as { oidc: boolean }).oidc), () => setOffered(false));
  }, []);
  return (
    <>
      {error !== null && <p class="error" role="alert">{error}</p>}
      {offered && <p><button type="button" onClick={() => void start()}>Sign in with single sign-on</button></p>}
      {failed !== null && <p class="error" role="alert">{failed}</p>}
    </>
  );
}
