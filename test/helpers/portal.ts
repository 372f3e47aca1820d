/** A signed-in portal session for tests: its cookie and CSRF token, and calls that carry them. */
import { http, type HttpResponse, type TestGateway } from './gateway.ts';

export interface PortalSession {
  email: string;
  /** `mg_portal=…` as the browser sends it. */
  cookie: string;
  csrf: string;
  /** The session's answer at sign-in (accounts with roles). */
  session: { email: string; accounts: { id: string; name: string; role: string }[] };
  call(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, options?: { csrf?: string | null; headers?: Record<string, string> }): Promise<HttpResponse>;
}

/** The `name=value` of a Set-Cookie named `name` (undefined when none). */
export function cookieFrom(response: HttpResponse, name: string): { pair: string; attributes: string } | undefined {
  const header = response.headers['set-cookie'];
  const all = header === undefined ? [] : Array.isArray(header) ? header : [header];
  const line = all.find((c) => c.startsWith(`${name}=`));
  if (line === undefined) return undefined;
  const [pair = '', ...attributes] = line.split(';');
  return { pair: pair.trim(), attributes: attributes.join(';') };
}

export async function redeem(gw: TestGateway, token: string, cookie?: string): Promise<HttpResponse> {
  return http(`${gw.url}/portal/api/sign-in/link`, { body: { token }, headers: cookie === undefined ? {} : { cookie } });
}

export const tokenOf = (link: string): string => link.split('#/link/')[1] as string;

/** Signs `email` in through a link the gateway issues (no mail). */
export async function portalSession(gw: TestGateway, email: string): Promise<PortalSession> {
  const link = await gw.gateway.signInLinks.issue(email, `${gw.url}/portal`);
  const answer = await redeem(gw, tokenOf(link));
  if (answer.status !== 200) throw new Error(`sign-in: ${answer.status} ${answer.text}`);
  const cookie = cookieFrom(answer, 'mg_portal')?.pair as string;
  const csrf = answer.json.csrf_token as string;
  return {
    email,
    cookie,
    csrf,
    session: answer.json,
    call: (method, path, body, options = {}) => {
      const headers: Record<string, string> = { cookie, ...options.headers };
      const token = options.csrf === undefined ? csrf : options.csrf;
      if (token !== null) headers['x-csrf-token'] = token;
      return http(`${gw.url}/portal/api${path}`, { method, body, headers });
    },
  };
}
