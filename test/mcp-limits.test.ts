/**
 * MCP limits (spec "Tool-protocol endpoint"): 30 per minute per address without a key, 600 per
 * minute for all callers without a key together, 300 per minute per account with a key; over a
 * limit HTTP 429 with a JSON-RPC -32000 error carrying the request's id. An invalid key is 401.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { http, startGateway, type HttpResponse, type TestGateway } from './helpers/gateway.ts';

let gw: TestGateway;
beforeEach(async () => {
  // The test's requests arrive from loopback, which is the trusted edge proxy: X-Forwarded-For names the client.
  gw = await startGateway({ TRUST_PROXY: '127.0.0.1,::1' });
});
afterEach(async () => gw.close());

const ACCEPT = 'application/json, text/event-stream';

function ping(options: { id?: unknown; from?: string; key?: string; body?: unknown } = {}): Promise<HttpResponse> {
  const headers: Record<string, string> = { accept: ACCEPT };
  if (options.from !== undefined) headers['x-forwarded-for'] = options.from;
  return http(`${gw.url}/mcp`, { key: options.key, headers, body: options.body ?? { jsonrpc: '2.0', id: options.id ?? 1, method: 'ping' } });
}

async function times(n: number, make: (i: number) => Promise<HttpResponse>, batch = 10): Promise<HttpResponse[]> {
  const answers: HttpResponse[] = [];
  // Ten at a time: fast, but the order of counting stays clear. Where every one of the n
  // must pass whatever the order (each address and account exactly at its limit), more at once.
  for (let i = 0; i < n; i += batch) answers.push(...(await Promise.all(Array.from({ length: Math.min(batch, n - i) }, (_, j) => make(i + j)))));
  return answers;
}

const refusal = (id: unknown) => ({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringMatching(/Rate limit/) }, id });

describe('without a key', () => {
  it('the 31st request of an address in a minute is 429 with the JSON-RPC error and the request id; other addresses go on', async () => {
    const answers = await times(30, (i) => ping({ id: i, from: '198.51.100.7' }));
    for (const r of answers) {
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ jsonrpc: '2.0', result: {} });
    }
    const refused = await ping({ id: 'req-31', from: '198.51.100.7' });
    expect(refused.status).toBe(429);
    expect(refused.json).toEqual(refusal('req-31'));
    expect(Object.keys(refused.json)).toEqual(['jsonrpc', 'error', 'id']);
    expect(refused.headers['content-type']).toMatch(/^application\/json/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['x-ratelimit-limit']).toBe('30');
    expect((await ping({ id: 1, from: '198.51.100.8' })).status).toBe(200);
  });

  it('the id is null when the refused body is a batch, a notification or not JSON', async () => {
    await times(30, () => ping({ from: '198.51.100.9' }));
    expect((await ping({ from: '198.51.100.9', body: [{ jsonrpc: '2.0', id: 5, method: 'ping' }] })).json).toEqual(refusal(null));
    expect((await ping({ from: '198.51.100.9', body: { jsonrpc: '2.0', method: 'notifications/initialized' } })).json).toEqual(refusal(null));
    const unreadable = await http(`${gw.url}/mcp`, { rawBody: '{not json', headers: { accept: ACCEPT, 'x-forwarded-for': '198.51.100.9', 'content-type': 'application/json' } });
    expect(unreadable.status).toBe(429);
    expect(unreadable.json).toEqual(refusal(null));
  });

  it('all callers without a key share 600 per minute: the 601st is refused even from a fresh address', async () => {
    const answers = await times(600, (i) => ping({ id: i, from: `203.0.113.${Math.floor(i / 30) + 1}` }), 50);
    expect(answers.filter((r) => r.status === 200)).toHaveLength(600);
    const refused = await ping({ id: 601, from: '192.0.2.200' });
    expect(refused.status).toBe(429);
    expect(refused.json).toEqual(refusal(601));
    expect(refused.json.error.message).toMatch(/all callers without a key/);
    expect(refused.headers['x-ratelimit-limit']).toBe('600');
  }, 60_000); // 601 MCP requests: seconds of CPU, more on a busy machine

  it('GET /mcp (a notification stream) is 405 with Allow: POST: the endpoint is stateless', async () => {
    const r = await http(`${gw.url}/mcp`, { headers: { accept: 'text/event-stream' } });
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('POST');
    expect(r.json.error.code).toBe('method_not_allowed');
  });

  it('a body that is not JSON is a JSON-RPC parse error', async () => {
    const r = await http(`${gw.url}/mcp`, { rawBody: '{oops', headers: { accept: ACCEPT, 'content-type': 'application/json' } });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: expect.any(String) }, id: null });
  });
});

describe('with a key', () => {
  it('300 per minute per account, whichever of its keys is used; another account and anonymous callers are not affected', async () => {
    const first = await gw.account({ key: { scopes: ['read'] } });
    const second = await gw.admin('POST', `/admin/v1/accounts/${first.accountId}/keys`, { name: 'second', scopes: ['embeddings'] });
    const other = await gw.account();
    const answers = await times(300, (i) => ping({ id: i, key: i % 2 === 0 ? first.key : (second.json.key as string), from: '198.51.100.20' }), 50);
    expect(answers.filter((r) => r.status === 200)).toHaveLength(300);
    const refused = await ping({ id: 301, key: second.json.key as string });
    expect(refused.status).toBe(429);
    expect(refused.json).toEqual(refusal(301));
    expect(refused.headers['x-ratelimit-limit']).toBe('300');
    expect((await ping({ key: other.key })).status).toBe(200);
    // The account's keyed requests did not use up the address's anonymous window.
    expect((await ping({ from: '198.51.100.20' })).status).toBe(200);
  });

  it('MCP requests do not count toward the key\'s own requests-per-minute window', async () => {
    const { key } = await gw.account({ key: { requests_per_minute: 60 } });
    await times(70, (i) => ping({ id: i, key }));
    const r = await gw.api('/models?limit=1', { key });
    expect(r.status).toBe(200);
  });

  it('an invalid, revoked or malformed key is 401 with the error object invalid_api_key', async () => {
    const { key, keyId } = await gw.account();
    await gw.admin('POST', `/admin/v1/keys/${keyId}/revoke`);
    for (const authorization of [`Bearer svc_live_${'0'.repeat(64)}`, `Bearer ${key}`, 'Bearer nonsense', 'Basic abc']) {
      const r = await http(`${gw.url}/mcp`, { headers: { accept: ACCEPT, authorization }, body: { jsonrpc: '2.0', id: 1, method: 'ping' } });
      expect(r.status, authorization).toBe(401);
      expect(r.json).toEqual({ error: { message: 'Invalid API key', type: 'authentication_error', code: 'invalid_api_key' } });
    }
  });

  it('a key with an IP allowlist is refused from other addresses (403 ip_not_allowed)', async () => {
    const { key } = await gw.account({ key: { ip_allowlist: ['10.0.0.0/8'] } });
    expect((await ping({ key, from: '10.1.2.3' })).status).toBe(200);
    const r = await ping({ key, from: '198.51.100.1' });
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('ip_not_allowed');
  });
});
