/**
 * Test harness: a real gateway on an ephemeral port (SQLite in memory unless told
 * otherwise), an admin client, and a small HTTP client over undici.
 */
import { request as undiciRequest, type FormData } from 'undici';
import { loadConfig } from '../../src/config.ts';
import { createGateway, type Gateway, type GatewayOverrides } from '../../src/gateway.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test bodies are inspected freely
  json: any;
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  headers?: Record<string, string>;
  body?: unknown;
  /** Sent as-is (for invalid JSON). */
  rawBody?: string;
  /** A multipart/form-data body (undici's FormData). */
  form?: FormData;
  key?: string;
}

export async function http(url: string, options: RequestOptions = {}): Promise<HttpResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
  }
  if (body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  const method = options.method ?? (body === undefined && options.form === undefined ? 'GET' : 'POST');
  const response = await undiciRequest(url, { method, headers, body: options.form ?? body });
  const text = await response.body.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.statusCode, headers: response.headers, text, json };
}

export interface TestGateway {
  gateway: Gateway;
  /** http://127.0.0.1:port */
  url: string;
  /** http://[::1]:port */
  url6: string;
  api(path: string, options?: RequestOptions): Promise<HttpResponse>;
  admin(method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown): Promise<HttpResponse>;
  /** A new account with credits and a key; returns ids and the secret. */
  account(options?: { credits?: number; purchase?: boolean; key?: Record<string, unknown> }): Promise<{ accountId: string; keyId: string; key: string }>;
  close(): Promise<void>;
}

export async function startGateway(env: Record<string, string> = {}, overrides: GatewayOverrides = {}): Promise<TestGateway> {
  const config = loadConfig({
    DATABASE_URL: 'sqlite::memory:',
    ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
    HOST: '::',
    PORT: '0',
    // One attempt per model: the tests of each failure's answer script one failure; test/routing-*.test.ts turn retries on.
    UPSTREAM_RETRIES: '0',
    ...env,
  });
  const gateway = await createGateway(config, overrides);
  await gateway.app.listen({ port: 0, host: '::' });
  const address = gateway.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const url = `http://127.0.0.1:${address.port}`;
  const url6 = `http://[::1]:${address.port}`;
  const admin = (method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown) =>
    http(url + path, { method, body, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  return {
    gateway,
    url,
    url6,
    api: (path, options) => http(url + '/api/v1' + path, options),
    admin,
    async account(options = {}) {
      const created = await admin('POST', '/admin/v1/accounts', { name: 'test account', has_purchase: options.purchase ?? true });
      if (created.status !== 201) throw new Error(`account: ${created.text}`);
      const accountId = created.json.id as string;
      if ((options.credits ?? 100) > 0) {
        await admin('POST', `/admin/v1/accounts/${accountId}/credits`, { credits: options.credits ?? 100, purchase: options.purchase ?? true });
      }
      const key = await admin('POST', `/admin/v1/accounts/${accountId}/keys`, { name: 'test key', ...options.key });
      if (key.status !== 201) throw new Error(`key: ${key.text}`);
      return { accountId, keyId: key.json.id as string, key: key.json.key as string };
    },
    close: () => gateway.close(),
  };
}
