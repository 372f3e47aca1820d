/** The admin API client: the token from sessionStorage as Bearer, every failure as a sentence. */
const TOKEN_KEY = 'model-gateway-admin-token';

export const token = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (value: string) => sessionStorage.setItem(TOKEN_KEY, value),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null,
  ) {
    super(message);
  }
}

/** The CSRF token of a single sign-on session (sso.tsx); changes send it. */
let csrf: string | null = null;
export function setCsrf(value: string | null): void {
  csrf = value;
}

/** Called when the token is refused, so the app can ask for it again. */
let onUnauthorized: () => void = () => {};
export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

async function send(path: string, init: RequestInit & { admin?: boolean }): Promise<Response> {
  const headers = new Headers(init.headers);
  const secret = token.get();
  if (init.admin !== false && secret !== null) headers.set('authorization', `Bearer ${secret}`);
  if (init.body !== undefined) headers.set('content-type', 'application/json');
  if (csrf !== null && init.method !== 'GET') headers.set('x-csrf-token', csrf);
  let response: Response;
  try {
    response = await fetch(path, { ...init, headers });
  } catch {
    throw new ApiError('Could not reach the gateway. Check the connection and try again.', 0, null);
  }
  if (response.ok) return response;
  let message = `The gateway answered ${response.status} ${response.statusText}.`;
  let code: string | null = null;
  try {
    const body = (await response.json()) as { error?: { message?: string; code?: string } };
    if (body.error?.message !== undefined) message = body.error.message;
    code = body.error?.code ?? null;
  } catch {
    // Not JSON: keep the status line.
  }
  if (response.status === 401 && init.admin !== false) {
    onUnauthorized();
    message = 'The admin token was refused. Sign in again.';
  }
  throw new ApiError(message, response.status, code);
}

export async function api<T>(path: string, options: { method?: string; body?: unknown; admin?: boolean } = {}): Promise<T> {
  const response = await send(path, {
    method: options.method ?? 'GET',
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    admin: options.admin,
  });
  return (await response.json()) as T;
}

export async function download(path: string, filename: string): Promise<void> {
  const response = await send(path, { method: 'GET' });
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export const query = (params: Record<string, string | number | undefined | null>): string => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
};
