/** The portal API client: the session cookie goes by itself; every change carries the CSRF token. */
let csrfToken: string | null = null;

export function setCsrf(token: string | null): void {
  csrfToken = token;
}

export class ApiError extends Error {
  constructor(message: string, readonly status: number, readonly code: string | null) {
    super(message);
  }
}

/** Called when the session is gone (signed out elsewhere, expired, removed). */
let onSignedOut: () => void = () => {};
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

export async function api<T>(path: string, options: { method?: string; body?: unknown } = {}): Promise<T> {
  const method = options.method ?? 'GET';
  const headers = new Headers();
  if (options.body !== undefined) headers.set('content-type', 'application/json');
  if (method !== 'GET' && csrfToken !== null) headers.set('x-csrf-token', csrfToken);
  let response: Response;
  try {
    response = await fetch(`/portal/api${path}`, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body), credentials: 'same-origin' });
  } catch {
    throw new ApiError('Could not reach the gateway. Check the connection and try again.', 0, null);
  }
  if (response.status === 204) return undefined as T;
  if (response.ok) return (await response.json()) as T;
  let message = `The gateway answered ${response.status}.`;
  let code: string | null = null;
  try {
    const body = (await response.json()) as { error?: { message?: string; code?: string } };
    message = body.error?.message ?? message;
    code = body.error?.code ?? null;
  } catch {
    // Not JSON: keep the status.
  }
  if (response.status === 401 && code === 'not_signed_in') onSignedOut();
  throw new ApiError(message, response.status, code);
}

export const query = (params: Record<string, string | number | undefined | null>): string => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
};
