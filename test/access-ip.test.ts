/** IP allowlists: IPv4/IPv6 addresses and CIDR blocks, with and without TRUST_PROXY. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, startGateway, type TestGateway } from './helpers/gateway.ts';

describe('allowlist without TRUST_PROXY (the socket address is the client)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw.close());

  const call = (base: string, key: string, headers: Record<string, string> = {}) =>
    fetchChat(base, key, headers);

  it('IPv4 address: 127.0.0.1 allowed, others refused with the address named', async () => {
    const allowed = await gw.account({ key: { ip_allowlist: ['127.0.0.1'] } });
    expect((await call(gw.url, allowed.key)).status).not.toBe(403);
    const refused = await gw.account({ key: { ip_allowlist: ['192.0.2.10'] } });
    const r = await call(gw.url, refused.key);
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('ip_not_allowed');
    expect(r.json.error.type).toBe('permission_error');
    expect(r.json.error.message).toContain('127.0.0.1');
  });

  it('IPv4 CIDR', async () => {
    const inside = await gw.account({ key: { ip_allowlist: ['127.0.0.0/8'] } });
    expect((await call(gw.url, inside.key)).status).not.toBe(403);
    const outside = await gw.account({ key: { ip_allowlist: ['10.0.0.0/8'] } });
    expect((await call(gw.url, outside.key)).json.error.code).toBe('ip_not_allowed');
  });

  it('IPv6 address: ::1 allowed over IPv6, refused over IPv4', async () => {
    const { key } = await gw.account({ key: { ip_allowlist: ['::1'] } });
    expect((await call(gw.url6, key)).status).not.toBe(403);
    const r = await call(gw.url, key);
    expect(r.json.error.code).toBe('ip_not_allowed');
  });

  it('IPv6 CIDR', async () => {
    const inside = await gw.account({ key: { ip_allowlist: ['::/64'] } });
    expect((await call(gw.url6, inside.key)).status).not.toBe(403);
    const outside = await gw.account({ key: { ip_allowlist: ['2001:db8::/32'] } });
    const r = await call(gw.url6, outside.key);
    expect(r.json.error.code).toBe('ip_not_allowed');
    expect(r.json.error.message).toContain('::1');
  });

  it('X-Forwarded-For is ignored without TRUST_PROXY', async () => {
    const { key } = await gw.account({ key: { ip_allowlist: ['203.0.113.7'] } });
    const r = await call(gw.url, key, { 'x-forwarded-for': '203.0.113.7' });
    expect(r.json.error.code).toBe('ip_not_allowed');
    expect(r.json.error.message).toContain('127.0.0.1');
  });

  it('an empty list allows every address', async () => {
    const { key } = await gw.account({ key: { ip_allowlist: [] } });
    expect((await call(gw.url, key)).status).not.toBe(403);
    expect((await call(gw.url6, key)).status).not.toBe(403);
  });
});

describe('allowlist with TRUST_PROXY', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ TRUST_PROXY: '127.0.0.1,::1,10.1.0.0/16' });
  });
  afterAll(async () => gw.close());

  it('IPv4 address from X-Forwarded-For (the rightmost untrusted entry)', async () => {
    const { key } = await gw.account({ key: { ip_allowlist: ['203.0.113.7'] } });
    expect((await fetchChat(gw.url, key, { 'x-forwarded-for': '203.0.113.7' })).status).not.toBe(403);
    // A forged leftmost entry does not help; the rightmost untrusted one counts.
    const forged = await fetchChat(gw.url, key, { 'x-forwarded-for': '203.0.113.7, 198.51.100.1' });
    expect(forged.json.error.code).toBe('ip_not_allowed');
    expect(forged.json.error.message).toContain('198.51.100.1');
    // Trusted proxies on the right are skipped.
    expect((await fetchChat(gw.url, key, { 'x-forwarded-for': '203.0.113.7, 10.1.2.3' })).status).not.toBe(403);
  });

  it('IPv4 CIDR from X-Forwarded-For', async () => {
    const { key } = await gw.account({ key: { ip_allowlist: ['198.51.100.0/24'] } });
    expect((await fetchChat(gw.url, key, { 'x-forwarded-for': '198.51.100.200' })).status).not.toBe(403);
    expect((await fetchChat(gw.url, key, { 'x-forwarded-for': '198.51.101.1' })).json.error.code).toBe('ip_not_allowed');
  });

  it('IPv6 address from X-Forwarded-For', async () => {
    const { key } = await gw.account({ key: { ip_allowlist: ['2001:db8::42'] } });
    expect((await fetchChat(gw.url6, key, { 'x-forwarded-for': '2001:db8::42' })).status).not.toBe(403);
    const r = await fetchChat(gw.url6, key, { 'x-forwarded-for': '2001:db8::43' });
    expect(r.json.error.code).toBe('ip_not_allowed');
    expect(r.json.error.message).toContain('2001:db8::43');
  });

  it('IPv6 CIDR from X-Forwarded-For', async () => {
    const { key } = await gw.account({ key: { ip_allowlist: ['2001:db8:abcd::/48'] } });
    expect((await fetchChat(gw.url, key, { 'x-forwarded-for': '2001:db8:abcd:12::1' })).status).not.toBe(403);
    expect((await fetchChat(gw.url, key, { 'x-forwarded-for': '2001:db8:abce::1' })).json.error.code).toBe('ip_not_allowed');
  });

  it('without X-Forwarded-For the trusted peer itself is the client', async () => {
    const { key } = await gw.account({ key: { ip_allowlist: ['127.0.0.1'] } });
    expect((await fetchChat(gw.url, key)).status).not.toBe(403);
  });

  it('an address that cannot be determined is refused when a list exists', async () => {
    const { key } = await gw.account({ key: { ip_allowlist: ['0.0.0.0/0', '::/0'] } });
    const r = await fetchChat(gw.url, key, { 'x-forwarded-for': 'not-an-ip' });
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('ip_not_allowed');
    expect(r.json.error.message).toContain('not-an-ip');
  });

  it('an untrusted peer cannot spoof X-Forwarded-For', async () => {
    const gw2 = await startGateway({ TRUST_PROXY: '10.9.9.9' });
    try {
      const { key } = await gw2.account({ key: { ip_allowlist: ['203.0.113.7'] } });
      const r = await fetchChat(gw2.url, key, { 'x-forwarded-for': '203.0.113.7' });
      expect(r.json.error.code).toBe('ip_not_allowed');
    } finally {
      await gw2.close();
    }
  });
});

describe('allowlist validation at creation', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw.close());

  it('more than 50 entries or an invalid address → 400', async () => {
    const { accountId } = await gw.account();
    const many = Array.from({ length: 51 }, (_, i) => `10.0.0.${i}`);
    const tooMany = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { name: 'k', ip_allowlist: many });
    expect(tooMany.status).toBe(400);
    const fifty = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { name: 'k', ip_allowlist: many.slice(0, 50) });
    expect(fifty.status).toBe(201);
    for (const bad of ['300.1.1.1', '10.0.0.0/33', 'example.com', '::1/129']) {
      const r = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { name: 'k', ip_allowlist: [bad] });
      expect(r.status, bad).toBe(400);
      expect(r.json.error.code).toBe('validation_failed');
    }
  });
});

function fetchChat(base: string, key: string, headers: Record<string, string> = {}) {
  return http(`${base}/api/v1/chat/completions`, { key, body: {}, headers });
}
