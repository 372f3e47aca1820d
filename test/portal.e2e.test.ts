/**
 * The customer portal end to end, in headless Chromium: sign-in by an e-mail link captured by a
 * test SMTP server and through a real OpenID Connect provider (oidc-provider); a key made with
 * ticked scopes and a limit, used on the API, then revoked; an invited member seeing the account;
 * another account's id typed into the URL refused; a change without the CSRF token refused;
 * sign-out ending the session; every page on a 390-px phone without sideways scrolling; the
 * dashboard's OIDC sign-in and its audit log. With PORTAL_SCREENSHOTS=1, writes docs/screenshots/portal-*.png.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { http } from './helpers/gateway.ts';
import { startOidcProvider, type TestOidcProvider } from './helpers/oidc-provider.ts';
import { linkIn, startSmtp, type TestSmtp } from './helpers/smtp.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOTS = process.env.PORTAL_SCREENSHOTS === '1' ? fileURLToPath(new URL('../docs/screenshots/', import.meta.url)) : undefined;
const hi = [{ role: 'user', content: 'Hello there' }];

describe.skipIf(!existsSync(CHROMIUM) && process.env.CI === undefined)('customer portal in a browser', () => {
  let h: ChatHarness;
  let smtp: TestSmtp;
  let idp: TestOidcProvider;
  let browser: Browser;
  let owner: BrowserContext;
  let page: Page;
  let acme = '';
  let other = '';
  let keySecret = '';
  const built = mkdtempSync(join(tmpdir(), 'gw-portal-e2e-'));

  const shot = async (p: Page, name: string) => {
    if (SCREENSHOTS !== undefined) await p.screenshot({ path: `${SCREENSHOTS}portal-${name}.png`, fullPage: true });
  };
  /** Nothing wider than the phone: no sideways scrolling. */
  const fitsPhone = async (p: Page) => {
    expect(await p.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
  };

  beforeAll(async () => {
    // Both apps built into a folder of this test's own: another test file may be building dist/ meanwhile.
    for (const app of ['portal', 'dashboard'] as const) {
      await build({ configFile: fileURLToPath(new URL(`../${app}/vite.config.ts`, import.meta.url)), logLevel: 'warn', build: { outDir: join(built, app), emptyOutDir: true } });
    }
    smtp = await startSmtp();
    idp = await startOidcProvider();
    h = await startChatHarness({
      SMTP_URL: smtp.url,
      MAIL_FROM: 'portal@gateway.test',
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: idp.clientId,
      OIDC_CLIENT_SECRET: idp.clientSecret,
      ADMIN_OIDC_EMAILS: 'ops@gateway.test',
    }, [], { webAppDirs: { portal: join(built, 'portal'), dashboard: join(built, 'dashboard') } });
    idp.serve([`${h.gw.url}/portal/auth/oidc/callback`, `${h.gw.url}/admin/auth/oidc/callback`]);
    const a = await h.gw.admin('POST', '/admin/v1/accounts', { name: 'Acme Robotics', email: 'owner@acme.test', has_purchase: true });
    acme = a.json.id;
    await h.gw.admin('POST', `/admin/v1/accounts/${acme}/credits`, { credits: 100, purchase: true });
    const b = await h.gw.admin('POST', '/admin/v1/accounts', { name: 'Globex Secret Labs', email: 'boss@globex.test' });
    other = b.json.id;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
    owner = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await owner.newPage();
    if (SCREENSHOTS !== undefined) mkdirSync(SCREENSHOTS, { recursive: true });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await smtp?.close();
    await idp?.close();
    rmSync(built, { recursive: true, force: true });
  });

  it('signs in with a link mailed to the owner', { timeout: 120_000 }, async () => {
    await page.goto(`${h.gw.url}/portal/`);
    await page.getByLabel('E-mail address').fill('owner@acme.test');
    await shot(page, 'sign-in');
    await page.getByRole('button', { name: 'Send me a sign-in link' }).click();
    await page.getByText('a sign-in link is on its way').waitFor();
    const link = linkIn(await smtp.waitFor('owner@acme.test'));
    await page.goto(link);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Acme Robotics' }).waitFor();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    // The link is spent: opening it again signs no one in.
    const again = await browser.newPage();
    await again.goto(link);
    await again.getByRole('button', { name: 'Sign in' }).click();
    await again.getByText('has been used or has expired').waitFor();
    await again.close();
  });

  it('creates a key with ticked scopes and a limit, shows the secret once, and the key works', { timeout: 120_000 }, async () => {
    const form = page.getByRole('form', { name: 'New key' });
    expect(await form.getByLabel('Chat').isChecked()).toBe(true);
    expect(await form.getByLabel('Read models').isChecked()).toBe(true);
    expect(await form.getByLabel('Embeddings').isChecked()).toBe(false);
    await form.getByLabel('Key name').fill('ci pipeline');
    await form.getByLabel('Embeddings').check();
    await form.getByLabel('Daily limit (credits)').fill('5');
    await form.getByLabel('Expires').selectOption('90d');
    await form.getByRole('button', { name: 'Create key' }).click();
    keySecret = (await page.getByTestId('secret').textContent()) ?? '';
    expect(keySecret).toMatch(/^svc_live_[0-9a-f]{64}$/);
    await shot(page, 'key-created');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    const item = page.getByRole('listitem', { name: 'Key ci pipeline' });
    await item.getByText('read, chat, embeddings').waitFor();
    await item.getByText('5 a day').waitFor();
    expect(await page.content()).not.toContain(keySecret);

    h.openai.enqueue({ kind: 'text', text: 'Hi!', usage: { input: 1000, output: 500 } });
    const chat = await h.gw.api('/chat/completions', { key: keySecret, body: { model: 'gpt-test', messages: hi, max_tokens: 1000 } });
    expect(chat.status).toBe(200);
    const images = await h.gw.api('/images/generations', { key: keySecret, body: { model: 'gpt-test', prompt: 'x' } });
    expect(images.status).toBe(403);
    expect(images.json.error.code).toBe('insufficient_scope');

    await page.reload();
    await page.getByRole('listitem', { name: 'Key ci pipeline' }).getByText(/Last used/).waitFor();
    expect(await page.getByRole('listitem', { name: 'Key ci pipeline' }).textContent()).not.toContain('Last usednever');
    await shot(page, 'keys');
  });

  it('shows usage, the request log and the ledger as money', { timeout: 120_000 }, async () => {
    await page.getByRole('link', { name: 'Usage' }).click();
    await expect.poll(() => page.getByTestId('requests').textContent()).toBe('1');
    expect(await page.getByTestId('spend').textContent()).toBe('$0.00625');
    expect(await page.getByRole('table', { name: 'By model' }).textContent()).toContain('gpt-test');
    expect(await page.getByRole('table', { name: 'By key' }).textContent()).toContain('ci pipeline');
    expect(await page.locator('table.log tbody tr').first().textContent()).toContain('1,000 / 500');
    await shot(page, 'usage');

    await page.getByRole('link', { name: 'Balance' }).click();
    await expect.poll(() => page.getByTestId('balance').textContent()).toBe('$0.99375');
    const rows = page.locator('table.ledger tbody tr');
    expect(await rows.nth(0).textContent()).toContain('Usage−$0.00625$0.99375');
    expect(await rows.nth(1).textContent()).toContain('Purchase+$1.00$1.00');
    await shot(page, 'balance');
  });

  it('revokes the key; the API refuses it', { timeout: 60_000 }, async () => {
    await page.getByRole('link', { name: 'Keys' }).click();
    const item = page.getByRole('listitem', { name: 'Key ci pipeline' });
    await item.getByRole('button', { name: 'Revoke' }).click();
    await item.getByRole('button', { name: 'Yes, revoke' }).click();
    await item.getByText('revoked', { exact: true }).waitFor();
    const refused = await h.gw.api('/chat/completions', { key: keySecret, body: { model: 'gpt-test', messages: hi } });
    expect(refused.status).toBe(401);
    expect(refused.json.error.code).toBe('invalid_api_key');
  });

  it('refuses a change without the CSRF token, from the signed-in page itself', async () => {
    const answer = await page.evaluate(async (id) => {
      const r = await fetch(`/portal/api/accounts/${id}/keys`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"forged"}' });
      return { status: r.status, body: await r.text() };
    }, acme);
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body).error.code).toBe('csrf_failed');
  });

  it('an invited member signs in and sees the account, and another account stays out of reach', { timeout: 120_000 }, async () => {
    await page.getByRole('link', { name: 'Members' }).click();
    const invite = page.getByRole('form', { name: 'Invite a member' });
    await invite.getByLabel('Their e-mail address').fill('dev@acme.test');
    await invite.getByRole('button', { name: 'Invite' }).click();
    await page.getByText('Invited dev@acme.test').waitFor();
    await page.getByRole('listitem', { name: 'Member dev@acme.test' }).waitFor();
    await shot(page, 'members');

    const dev = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const devPage = await dev.newPage();
    await devPage.goto(linkIn(await smtp.waitFor('dev@acme.test')));
    await devPage.getByRole('button', { name: 'Sign in' }).click();
    await devPage.getByRole('heading', { name: 'Acme Robotics' }).waitFor();
    await devPage.getByText('(member)').waitFor();

    // Another account's id typed into the URL: the gateway answers 404 and the page shows none of its data.
    await devPage.goto(`${h.gw.url}/portal/#/a/${other}/billing`);
    await devPage.getByText(`No account with id ${other}.`).first().waitFor();
    expect(await devPage.content()).not.toContain('Globex');
    const probe = await devPage.evaluate(async (id) => {
      const r = await fetch(`/portal/api/accounts/${id}/keys`);
      return { status: r.status, body: await r.text() };
    }, other);
    expect(probe.status).toBe(404);
    expect(probe.body).not.toContain('Globex');
    await dev.close();
  });

  it('every page fits a 390-px phone', { timeout: 120_000 }, async () => {
    const phone = await owner.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    for (const p of ['keys', 'usage', 'billing', 'notifications', 'members']) {
      await phone.goto(`${h.gw.url}/portal/#/a/${acme}/${p}`);
      await phone.getByRole('heading', { name: 'Acme Robotics' }).waitFor();
      await phone.waitForLoadState('networkidle');
      await fitsPhone(phone);
      if (p === 'keys' || p === 'usage') await shot(phone, `phone-${p}`);
    }
    await phone.close();
    await page.goto(`${h.gw.url}/portal/#/a/${acme}/notifications`);
    await page.getByRole('heading', { name: 'Notifications' }).waitFor();
    await shot(page, 'notifications');
  });

  it('sign-out ends the session: its cookie no longer opens the account', { timeout: 60_000 }, async () => {
    const before = (await owner.cookies()).find((c) => c.name === 'mg_portal');
    expect(before?.httpOnly).toBe(true);
    expect(before?.sameSite).toBe('Lax');
    await page.goto(`${h.gw.url}/portal/#/a/${acme}/keys`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Send me a sign-in link' }).waitFor();
    const replay = await http(`${h.gw.url}/portal/api/accounts/${acme}`, { headers: { cookie: `mg_portal=${before?.value ?? ''}` } });
    expect(replay.status).toBe(401);
  });

  it('signs in through the OpenID Connect provider', { timeout: 120_000 }, async () => {
    const context = await browser.newContext();
    const sso = await context.newPage();
    await sso.goto(`${h.gw.url}/portal/`);
    await sso.getByRole('button', { name: 'Sign in with single sign-on' }).click();
    await sso.locator('input[name=login]').fill('boss@globex.test');
    await sso.locator('input[name=password]').fill('anything');
    await sso.locator('button[type=submit]').click();
    await sso.locator('button[type=submit]').click(); // consent
    await sso.getByRole('heading', { name: 'Globex Secret Labs' }).waitFor();
    expect(sso.url()).toBe(`${h.gw.url}/portal/`);
    // A person the provider vouches for who is no member of any account gets no session.
    await context.clearCookies();
    await sso.goto(`${h.gw.url}/portal/`);
    await sso.getByRole('button', { name: 'Sign in with single sign-on' }).click();
    await sso.locator('input[name=login]').fill('stranger@nowhere.test');
    await sso.locator('input[name=password]').fill('anything');
    await sso.locator('button[type=submit]').click();
    await sso.locator('button[type=submit]').click();
    await sso.getByText('stranger@nowhere.test is not a member of any account').waitFor();
    expect((await context.cookies()).some((c) => c.name === 'mg_portal')).toBe(false);
    await context.close();
  });

  it('the admin dashboard signs in through OIDC for ADMIN_OIDC_EMAILS, and its changes reach the audit log', { timeout: 120_000 }, async () => {
    const context = await browser.newContext();
    const ops = await context.newPage();
    await ops.goto(`${h.gw.url}/admin`);
    await ops.getByRole('button', { name: 'Sign in with single sign-on' }).click();
    await ops.locator('input[name=login]').fill('ops@gateway.test');
    await ops.locator('input[name=password]').fill('anything');
    await ops.locator('button[type=submit]').click();
    await ops.locator('button[type=submit]').click();
    await ops.waitForURL(`${h.gw.url}/admin/`);
    await ops.getByRole('heading', { name: 'Overview' }).waitFor();
    const change = await ops.evaluate(async (id) => {
      const session = await (await fetch('/admin/v1/session')).json() as { csrf_token: string; actor: string };
      const forged = await fetch(`/admin/v1/accounts/${id}/credits`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"credits":5,"purchase":false}' });
      const made = await fetch(`/admin/v1/accounts/${id}/credits`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrf_token }, body: '{"credits":5,"purchase":false}',
      });
      const audit = await (await fetch('/admin/v1/audit?limit=5')).json() as { data: { actor: string; action: string; status: number }[] };
      return { actor: session.actor, forged: forged.status, made: made.status, audit: audit.data };
    }, other);
    expect(change).toMatchObject({ actor: 'oidc:ops@gateway.test', forged: 403, made: 200 });
    expect(change.audit[0]).toMatchObject({ actor: 'oidc:ops@gateway.test', action: 'POST /admin/v1/accounts/:id/credits', status: 200 });
    // The dashboard shows the session's changes in its audit log, the token's among them.
    await ops.goto(`${h.gw.url}/admin/#/audit`);
    const rows = ops.getByRole('table', { name: 'Audit log' }).locator('tbody tr');
    await rows.first().waitFor();
    expect(await rows.first().textContent()).toContain('oidc:ops@gateway.test');
    expect(await ops.getByRole('table', { name: 'Audit log' }).textContent()).toContain('admin-token');
    await shot(ops, 'admin-audit');
    await ops.getByRole('button', { name: 'Sign out' }).click();
    expect((await ops.evaluate(async () => (await fetch('/admin/v1/session')).status))).toBe(401);
    await context.close();
  });
});
