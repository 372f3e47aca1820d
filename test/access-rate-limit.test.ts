/** Requests per minute: sliding 60 s window per key, counted after key, IP and scope. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.ts';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => gw.close());

describe('requests-per-minute limit', () => {
  it('61 requests on a 60-rpm key: 60 pass, the 61st is 429 with headers and no Retry-After', async () => {
    const { key } = await gw.account({ key: { requests_per_minute: 60 } });
    for (let i = 1; i <= 60; i++) {
      const r = await gw.api('/chat/completions', { key, body: {} });
      expect(r.status).not.toBe(429);
      expect(r.headers['x-ratelimit-limit']).toBe('60');
      expect(r.headers['x-ratelimit-remaining']).toBe(String(60 - i));
      expect(r.headers['x-ratelimit-reset']).toBe('60');
    }
    const refused = await gw.api('/chat/completions', { key, body: {} });
    expect(refused.status).toBe(429);
    expect(refused.json.error).toMatchObject({ code: 'rate_limit_exceeded', type: 'rate_limit_error' });
    expect(refused.headers['x-ratelimit-limit']).toBe('60');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    const reset = Number(refused.headers['x-ratelimit-reset']);
    expect(reset).toBeGreaterThanOrEqual(59);
    expect(reset).toBeLessThanOrEqual(60);
    expect(refused.headers['retry-after']).toBeUndefined();
  });

  it('401 and 403 requests are not counted', async () => {
    const { key, accountId } = await gw.account({ key: { requests_per_minute: 60, scopes: ['read'] } });
    // 403 insufficient_scope on chat, many times: none counted.
    for (let i = 0; i < 70; i++) expect((await gw.api('/chat/completions', { key, body: {} })).status).toBe(403);
    // 403 ip_not_allowed: not counted either (a second key of the same account, own window).
    const blocked = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { name: 'b', requests_per_minute: 60, ip_allowlist: ['192.0.2.1'] });
    for (let i = 0; i < 70; i++) expect((await gw.api('/chat/completions', { key: blocked.json.key, body: {} })).status).toBe(403);
    // 401s carry no key and count nowhere.
    for (let i = 0; i < 5; i++) expect((await gw.api('/chat/completions', { key: 'svc_live_' + 'c'.repeat(64), body: {} })).status).toBe(401);
    const models = await gw.api('/models?limit=1', { key });
    expect(models.status).toBe(200);
    // The read-scope key's window holds only the /models request above.
    const second = await gw.api('/models?limit=1', { key });
    expect(second.status).toBe(200);
  });

  it('rate-limit headers on success and on errors after the key check; none on 401', async () => {
    const { key } = await gw.account({ key: { requests_per_minute: 100, scopes: ['read', 'chat'] } });
    const invalidJson = await gw.api('/chat/completions', { key, rawBody: '{"model": ', headers: { 'content-type': 'application/json' } });
    expect(invalidJson.status).toBe(400);
    expect(invalidJson.json.error.code).toBe('invalid_json');
    expect(invalidJson.headers['x-ratelimit-limit']).toBe('100');
    expect(invalidJson.headers['x-ratelimit-remaining']).toBe('99');
    const scope = await gw.api('/embeddings', { key, body: {} });
    expect(scope.status).toBe(403);
    const other = await gw.api('/chat/completions', { key, body: {} });
    expect(other.headers['x-ratelimit-remaining']).toBe('98');
    const unauth = await gw.api('/chat/completions', { body: {} });
    expect(unauth.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('keys never share a count', async () => {
    const a = await gw.account({ key: { requests_per_minute: 60 } });
    const b = await gw.account({ key: { requests_per_minute: 60 } });
    for (let i = 0; i < 60; i++) await gw.api('/chat/completions', { key: a.key, body: {} });
    expect((await gw.api('/chat/completions', { key: a.key, body: {} })).status).toBe(429);
    const r = await gw.api('/chat/completions', { key: b.key, body: {} });
    expect(r.status).not.toBe(429);
    expect(r.headers['x-ratelimit-remaining']).toBe('59');
  });

  it('200 concurrent requests on a 100-rpm key let exactly 100 through', async () => {
    const { key } = await gw.account({ key: { requests_per_minute: 100 } });
    const results = await Promise.all(Array.from({ length: 200 }, () => gw.api('/chat/completions', { key, body: {} })));
    const limited = results.filter((r) => r.status === 429).length;
    expect(limited).toBe(100);
    expect(results.length - limited).toBe(100);
  });

  it('requests per minute outside 60–6000 are refused at creation', async () => {
    const { accountId } = await gw.account();
    for (const rpm of [59, 6001, 100.5]) {
      const r = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { name: 'k', requests_per_minute: rpm });
      expect(r.status, String(rpm)).toBe(400);
    }
  });
});
