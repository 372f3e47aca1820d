/**
 * Portal sign-in and sessions, over HTTP: the sign-in page answers the same for anyone and mails a
 * link only to members; links are single-use, expire after 15 minutes and are rate-limited; session
 * cookies are HttpOnly, SameSite=Lax, Secure behind https; a sign-in never keeps the browser's old
 * session id; every change needs the CSRF token; sign-out and removal end sessions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, startGateway, type TestGateway } from './helpers/gateway.ts';
import { cookieFrom, portalSession, redeem, tokenOf } from './helpers/portal.ts';
import { linkIn, startSmtp, type TestSmtp } from './helpers/smtp.ts';

const MINUTE = 60_000;

describe('portal sign-in by e-mail link', () => {
  let gw: TestGateway;
  let smtp: TestSmtp;
  let clock = Date.now();
  let accountId = '';

  beforeAll(async () => {
    smtp = await startSmtp();
    gw = await startGateway({ SMTP_URL: smtp.url, MAIL_FROM: 'portal@gateway.test' }, { now: () => clock });
    const account = await gw.admin('POST', '/admin/v1/accounts', { name: 'Acme', email: 'Owner@Acme.test' });
    accountId = account.json.id;
  });
  afterAll(async () => {
    await gw?.close();
    await smtp?.close();
  });

  const ask = (email: string, headers: Record<string, string> = {}) => http(`${gw.url}/portal/api/sign-in/email`, { body: { email }, headers });

  it('answers the same for a member and a stranger, and mails a link only to the member', async () => {
    const member = await ask('owner@acme.test');
    const stranger = await ask('nobody@acme.test');
    expect(member.status).toBe(202);
    expect(stranger.status).toBe(202);
    expect(stranger.text).toBe(member.text);
    const mail = await smtp.waitFor('owner@acme.test');
    expect(linkIn(mail)).toMatch(new RegExp(`^${gw.url}/portal/#/link/`));
    // The stranger's request was answered first and sent nothing; the member's mail has arrived since.
    expect(smtp.mails.filter((m) => m.to === 'nobody@acme.test')).toHaveLength(0);
  });

  it('a link signs in once: the second use is 400 invalid_link', async () => {
    const link = linkIn(await smtp.waitFor('owner@acme.test'));
    const first = await redeem(gw, tokenOf(link));
    expect(first.status).toBe(200);
    expect(first.json.email).toBe('owner@acme.test');
    expect(first.json.accounts).toEqual([{ id: accountId, name: 'Acme', role: 'owner' }]);
    const again = await redeem(gw, tokenOf(link));
    expect(again.status).toBe(400);
    expect(again.json.error.code).toBe('invalid_link');
    expect(cookieFrom(again, 'mg_portal')).toBeUndefined();
  });

  it('a link expires after 15 minutes', async () => {
    const link = await gw.gateway.signInLinks.issue('owner@acme.test', `${gw.url}/portal`);
    clock += 15 * MINUTE + 1;
    const late = await redeem(gw, tokenOf(link));
    expect(late.status).toBe(400);
    expect(late.json.error.code).toBe('invalid_link');
    const fresh = await gw.gateway.signInLinks.issue('owner@acme.test', `${gw.url}/portal`);
    clock += 14 * MINUTE;
    expect((await redeem(gw, tokenOf(fresh))).status).toBe(200);
  });

  it('an unknown token is refused like a used one', async () => {
    const made = await redeem(gw, 'A'.repeat(43));
    expect(made.status).toBe(400);
    expect(made.json.error.code).toBe('invalid_link');
  });

  it('is rate-limited per address (5 an hour), for members and strangers alike', async () => {
    clock += 2 * 3_600_000;
    for (const email of ['owner@acme.test', 'stranger@acme.test']) {
      for (let i = 0; i < 5; i++) expect((await ask(email)).status).toBe(202);
      const sixth = await ask(email);
      expect(sixth.status).toBe(429);
      expect(sixth.json.error.code).toBe('sign_in_limited');
    }
    clock += 3_600_000 + 1;
    expect((await ask('owner@acme.test')).status).toBe(202);
  });

  it('refuses a sign-in request another site made (login CSRF)', async () => {
    const link = await gw.gateway.signInLinks.issue('owner@acme.test', `${gw.url}/portal`);
    const forged = await http(`${gw.url}/portal/api/sign-in/link`, { body: { token: tokenOf(link) }, headers: { origin: 'https://evil.test' } });
    expect(forged.status).toBe(403);
    expect(forged.json.error.code).toBe('csrf_failed');
    expect((await ask('owner@acme.test', { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
  });

  it('session cookies are HttpOnly, SameSite=Lax, scoped to /portal, and not Secure over plain http', async () => {
    const link = await gw.gateway.signInLinks.issue('owner@acme.test', `${gw.url}/portal`);
    const answer = await redeem(gw, tokenOf(link));
    const cookie = cookieFrom(answer, 'mg_portal');
    expect(cookie?.pair).toMatch(/^mg_portal=[A-Za-z0-9_-]{43}$/);
    expect(cookie?.attributes).toMatch(/HttpOnly/);
    expect(cookie?.attributes).toMatch(/SameSite=Lax/);
    expect(cookie?.attributes).toMatch(/Path=\/portal/);
    expect(cookie?.attributes).not.toMatch(/Secure/);
  });

  it('a sign-in mints a new session id and ends the one the browser brought (no fixation)', async () => {
    const planted = await portalSession(gw, 'owner@acme.test');
    await gw.admin('POST', '/admin/v1/accounts', { name: 'Other', email: 'victim@other.test' });
    const link = await gw.gateway.signInLinks.issue('victim@other.test', `${gw.url}/portal`);
    const answer = await redeem(gw, tokenOf(link), planted.cookie);
    const minted = cookieFrom(answer, 'mg_portal')?.pair as string;
    expect(minted).not.toBe(planted.cookie);
    expect(answer.json.email).toBe('victim@other.test');
    const old = await http(`${gw.url}/portal/api/session`, { headers: { cookie: planted.cookie } });
    expect(old.status).toBe(401);
    expect(old.json.error.code).toBe('not_signed_in');
    const fresh = await http(`${gw.url}/portal/api/session`, { headers: { cookie: minted } });
    expect(fresh.json.email).toBe('victim@other.test');
  });

  it('every change needs the session CSRF token, and a change from another site is refused', async () => {
    const s = await portalSession(gw, 'owner@acme.test');
    const key = { name: 'ci key' };
    const missing = await s.call('POST', `/accounts/${accountId}/keys`, key, { csrf: null });
    expect(missing.status).toBe(403);
    expect(missing.json.error.code).toBe('csrf_failed');
    const wrong = await s.call('POST', `/accounts/${accountId}/keys`, key, { csrf: 'x'.repeat(43) });
    expect(wrong.status).toBe(403);
    const otherSite = await s.call('POST', `/accounts/${accountId}/keys`, key, { headers: { origin: 'https://evil.test' } });
    expect(otherSite.status).toBe(403);
    expect((await s.call('GET', `/accounts/${accountId}/keys`)).json.data).toHaveLength(0);
    const made = await s.call('POST', `/accounts/${accountId}/keys`, key);
    expect(made.status).toBe(201);
  });

  it('sign-out ends the session: its cookie no longer works', async () => {
    const s = await portalSession(gw, 'owner@acme.test');
    expect((await s.call('POST', '/sign-out', undefined, { csrf: null })).status).toBe(403);
    const out = await s.call('POST', '/sign-out');
    expect(out.status).toBe(204);
    expect(cookieFrom(out, 'mg_portal')?.attributes).toMatch(/Max-Age=0/);
    const after = await s.call('GET', `/accounts/${accountId}`);
    expect(after.status).toBe(401);
    expect(after.json.error.code).toBe('not_signed_in');
  });

  it('a session lasts 7 days', async () => {
    const s = await portalSession(gw, 'owner@acme.test');
    clock += 7 * 24 * 3_600_000 - 1000;
    expect((await s.call('GET', `/accounts/${accountId}`)).status).toBe(200);
    clock += 1000;
    expect((await s.call('GET', `/accounts/${accountId}`)).status).toBe(401);
  });

  it('an owner invites a member by e-mail; removing the member ends their sessions; the last owner stays', async () => {
    const owner = await portalSession(gw, 'owner@acme.test');
    const invited = await owner.call('POST', `/accounts/${accountId}/members`, { email: 'Dev@Acme.test' });
    expect(invited.status).toBe(201);
    expect(invited.json).toMatchObject({ email: 'dev@acme.test', role: 'member', invited_by: 'owner@acme.test', emailed: true });
    const mail = await smtp.waitFor('dev@acme.test');
    expect(mail.text).toContain('invited you to the account "Acme"');
    const member = await redeem(gw, tokenOf(linkIn(mail)));
    expect(member.json.accounts).toEqual([{ id: accountId, name: 'Acme', role: 'member' }]);
    const memberCookie = cookieFrom(member, 'mg_portal')?.pair as string;
    const csrf = member.json.csrf_token as string;
    // A member may not manage members or the account's settings.
    const refused = await http(`${gw.url}/portal/api/accounts/${accountId}/members`, { body: { email: 'x@acme.test' }, headers: { cookie: memberCookie, 'x-csrf-token': csrf } });
    expect(refused.status).toBe(403);
    expect(refused.json.error.code).toBe('owner_only');

    const removed = await owner.call('DELETE', `/accounts/${accountId}/members/dev%40acme.test`);
    expect(removed.status).toBe(204);
    const after = await http(`${gw.url}/portal/api/accounts/${accountId}`, { headers: { cookie: memberCookie } });
    expect(after.status).toBe(401);

    const last = await owner.call('DELETE', `/accounts/${accountId}/members/owner%40acme.test`);
    expect(last.status).toBe(400);
    expect(last.json.error.message).toMatch(/last owner/);
  });
});

describe('portal cookies behind https', () => {
  it('carry Secure when PUBLIC_BASE_URL is https', async () => {
    const gw = await startGateway({ PUBLIC_BASE_URL: 'https://gateway.example.test' });
    try {
      await gw.admin('POST', '/admin/v1/accounts', { name: 'Acme', email: 'owner@acme.test' });
      const link = await gw.gateway.signInLinks.issue('owner@acme.test', 'https://gateway.example.test/portal');
      const answer = await redeem(gw, tokenOf(link));
      expect(cookieFrom(answer, 'mg_portal')?.attributes).toMatch(/Secure/);
    } finally {
      await gw.close();
    }
  });
});
