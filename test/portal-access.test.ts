/**
 * Every portal account route, as a table: a member of another account, naming this account's id
 * (and this account's key ids) in the URL, is refused with 404 and none of its data, and nothing
 * changes; without a session every route is 401. The table is checked against the routes the
 * gateway registered, so a new route without a row fails here. Each row also runs for the
 * account's own owner, so the refusals are not of a request that could never work.
 */
import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStripeEmulator, type StripeEmulator } from '../emulators/stripe.ts';
import { http, startGateway, type TestGateway } from './helpers/gateway.ts';
import { portalSession, type PortalSession } from './helpers/portal.ts';

interface Fixture {
  keyId: string;
  member: string;
}

interface Row {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Under /portal/api/accounts/:accountId. */
  path: string;
  body?: (n: number) => unknown;
  /** The owner's own call answers this. */
  ok: number;
}

const ROUTES: Row[] = [
  { method: 'GET', path: '', ok: 200 },
  { method: 'PATCH', path: '', body: () => ({ monthly_spending_limit_credits: 500, billing_emails: false }), ok: 200 },
  { method: 'GET', path: '/members', ok: 200 },
  { method: 'POST', path: '/members', body: (n) => ({ email: `invitee${n}@secret.test` }), ok: 201 },
  { method: 'DELETE', path: '/members/:email', ok: 204 },
  { method: 'GET', path: '/notifications', ok: 200 },
  { method: 'GET', path: '/ledger', ok: 200 },
  { method: 'GET', path: '/keys', ok: 200 },
  { method: 'POST', path: '/keys', body: (n) => ({ name: `made ${n}` }), ok: 201 },
  { method: 'PATCH', path: '/keys/:keyId', body: () => ({ daily_limit_credits: 1 }), ok: 200 },
  { method: 'POST', path: '/keys/:keyId/revoke', ok: 200 },
  { method: 'POST', path: '/keys/:keyId/rotate', ok: 201 },
  { method: 'GET', path: '/keys/:keyId/usage', ok: 200 },
  { method: 'GET', path: '/usage', ok: 200 },
  { method: 'GET', path: '/jobs', ok: 200 },
  { method: 'GET', path: '/jobs.csv', ok: 200 },
  { method: 'GET', path: '/payments', ok: 200 },
  { method: 'POST', path: '/checkout', body: () => ({ amount_usd: 10 }), ok: 201 },
];

const PREFIX = '/portal/api/accounts/:accountId';

describe('portal: every account route refuses another account', () => {
  const registered: string[] = [];
  let gw: TestGateway;
  let secret: { accountId: string; keyId: string };
  let owner: PortalSession;
  let stranger: PortalSession;
  let strangerAccount = '';
  let n = 0;
  let stripe: StripeEmulator;

  beforeAll(async () => {
    stripe = await startStripeEmulator();
    gw = await startGateway({ STRIPE_SECRET_KEY: stripe.secretKey, STRIPE_WEBHOOK_SECRET: stripe.webhookSecret, STRIPE_API_BASE: stripe.baseUrl }, {
      routes: (app) => app.addHook('onRoute', (route: RouteOptions) => {
        if (!route.url.startsWith(PREFIX)) return;
        for (const method of [route.method].flat()) if (method !== 'HEAD') registered.push(`${method} ${route.url.slice(PREFIX.length)}`);
      }),
    });
    const a = await gw.admin('POST', '/admin/v1/accounts', { name: 'Secret Corp', email: 'boss@secret.test' });
    await gw.admin('POST', `/admin/v1/accounts/${a.json.id}/credits`, { credits: 4321.5, purchase: true });
    const key = await gw.admin('POST', `/admin/v1/accounts/${a.json.id}/keys`, { name: 'secret key' });
    secret = { accountId: a.json.id, keyId: key.json.id };
    const b = await gw.admin('POST', '/admin/v1/accounts', { name: 'Mallory Ltd', email: 'mallory@evil.test' });
    strangerAccount = b.json.id;
    owner = await portalSession(gw, 'boss@secret.test');
    stranger = await portalSession(gw, 'mallory@evil.test');
  });
  afterAll(async () => {
    await gw?.close();
    await stripe?.close();
  });

  /** A fresh key and member of the secret account, so destructive rows have something to act on. */
  async function fixture(): Promise<Fixture> {
    n++;
    const key = await gw.admin('POST', `/admin/v1/accounts/${secret.accountId}/keys`, { name: `fixture ${n}` });
    const member = `member${n}@secret.test`;
    await owner.call('POST', `/accounts/${secret.accountId}/members`, { email: member });
    return { keyId: key.json.id, member };
  }

  const urlOf = (row: Row, accountId: string, f: Fixture) =>
    `/accounts/${accountId}${row.path.replace(':keyId', f.keyId).replace(':email', encodeURIComponent(f.member))}`;

  it('the table lists every registered account route', () => {
    expect(registered.length).toBeGreaterThan(10);
    expect(new Set(registered)).toEqual(new Set(ROUTES.map((r) => `${r.method} ${r.path}`)));
  });

  it.each(ROUTES)('$method $path: another account’s member gets 404 and nothing of it', async (row) => {
    const f = await fixture();
    const before = (await gw.admin('GET', `/admin/v1/accounts/${secret.accountId}/keys`)).text;
    const members = (await owner.call('GET', `/accounts/${secret.accountId}/members`)).text;

    const refused = await stranger.call(row.method, urlOf(row, secret.accountId, f), row.body?.(n));
    expect(refused.status).toBe(404);
    expect(refused.json.error.code).toBe('account_not_found');
    for (const leak of ['Secret Corp', 'secret.test', f.keyId, secret.keyId, '4321.5']) expect(refused.text).not.toContain(leak);
    expect((await gw.admin('GET', `/admin/v1/accounts/${secret.accountId}/keys`)).text).toBe(before);
    expect((await owner.call('GET', `/accounts/${secret.accountId}/members`)).text).toBe(members);

    // The stranger's own account id with this account's key id: the key is not found.
    if (row.path.includes(':keyId')) {
      const crossKey = await stranger.call(row.method, urlOf(row, strangerAccount, f), row.body?.(n));
      expect(crossKey.status).toBe(404);
      expect(crossKey.json.error.code).toBe('key_not_found');
      expect((await gw.admin('GET', `/admin/v1/accounts/${secret.accountId}/keys`)).text).toBe(before);
    }

    const anonymous = await http(`${gw.url}/portal/api${urlOf(row, secret.accountId, f)}`, { method: row.method, body: row.body?.(n) });
    expect(anonymous.status).toBe(401);
    expect(anonymous.json.error.code).toBe('not_signed_in');

    const own = await owner.call(row.method, urlOf(row, secret.accountId, f), row.body?.(n));
    expect(own.status, own.text).toBe(row.ok);
  });
});
