/**
 * The admin dashboard as an activity view (issue 32), in headless Chromium: the request log with
 * account and key pickers by name, a time range, auto-refresh and CSV of the range; a request in
 * detail (provider, provider's model id, the upstream message, hold against charge, attempts,
 * ledger rows); keys with created and last-used times and links; the statement as money; accounts
 * with this month's spend and last activity; charts stacked by model; the expiry as a choice and a
 * date; and every page at 390 px. Screenshots as dashboard.e2e.test.ts takes them.
 */
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_BROWSER, scrollsSideways, startDashboardBrowser, type DashboardBrowser } from './helpers/dashboard-browser.ts';

const DAY = 86_400_000;
const hi = [{ role: 'user', content: 'Hello there' }];

describe.skipIf(NO_BROWSER)('admin dashboard as an activity view (issue 32)', () => {
  let d: DashboardBrowser;
  let page: Page;
  let account: { accountId: string; keyId: string; key: string };
  const chat = async (model = 'gpt-test') => (await d.h.gw.api('/chat/completions', { key: account.key, body: { model, messages: hi } })).status;

  beforeAll(async () => {
    d = await startDashboardBrowser();
    await d.h.gw.account({ credits: 5 });
    await d.h.gw.admin('POST', '/admin/v1/accounts', { name: 'Initech' });
    const globex = await d.h.gw.admin('POST', '/admin/v1/accounts', { name: 'Globex' });
    const keyed = await d.h.gw.admin('POST', `/admin/v1/accounts/${globex.json.id}/keys`, { name: 'ops key' });
    await d.h.gw.admin('POST', `/admin/v1/accounts/${globex.json.id}/credits`, { credits: 50, purchase: true });
    account = { accountId: globex.json.id as string, keyId: keyed.json.id as string, key: keyed.json.key as string };
    // A run billed 0.625 credits (600 of its 1,000 input tokens from the cache), one the provider refused, and one answered on its second attempt.
    d.h.openai.enqueue({ kind: 'text', text: 'Hi!', usage: { input: 1000, cacheRead: 600, output: 500 } });
    expect(await chat()).toBe(200);
    d.h.openai.enqueue({ kind: 'error', status: 400, body: { error: { message: 'temperature is too hot for this model', type: 'invalid_request_error' } } });
    expect(await chat()).toBe(400);
    d.h.openai.enqueue({ kind: 'error', status: 500 });
    d.h.openai.enqueue({ kind: 'text', text: 'Second try', usage: { input: 10, output: 2 } });
    expect(await chat()).toBe(200);
    page = await d.signedIn();
  }, 180_000);

  afterAll(async () => d?.close());

  it('the request log: account and key picked by name, a time range, auto-refresh, CSV of the range', { timeout: 120_000 }, async () => {
    await page.goto(`${d.h.gw.url}/admin#/log`);
    // Labelled selects (a <label> around each <select>), found by their field names.
    const picker = page.locator('select[name=account_id]');
    await picker.locator('option', { hasText: 'Globex' }).waitFor({ state: 'attached' });
    await picker.selectOption({ label: 'Globex' });
    const key = page.locator('select[name=key_id]');
    await key.locator('option', { hasText: 'ops key' }).waitFor({ state: 'attached' });
    await key.selectOption({ index: 1 });
    await page.locator('select[name=range]').selectOption({ label: 'Last hour' });
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/range=1h/);
    const rows = page.locator('table.log tbody tr');
    await expect.poll(() => rows.count()).toBe(3);
    expect(await rows.first().textContent()).toContain('Globex');
    expect(await rows.first().textContent()).toContain('ops key');

    // Auto-refresh: a new request shows up without a reload.
    await page.getByLabel('Auto-refresh every 10 s').check();
    await page.waitForURL(/live=1/);
    d.h.openai.enqueue({ kind: 'text', text: 'Later', usage: { input: 3, output: 1 } });
    expect(await chat()).toBe(200);
    await expect.poll(() => rows.count(), { timeout: 30_000 }).toBe(4);
    await page.screenshot({ path: `${d.screenshots}request-log.png`, fullPage: true });

    // CSV of the range: the four rows of this key.
    const [csv] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV of this range' }).click()]);
    const lines = readFileSync(await csv.path(), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(5);
    expect(lines.slice(1).every((l) => l.includes(account.keyId))).toBe(true);
    // Chosen dates long past: nothing, in the table and in the CSV.
    await page.getByLabel('Auto-refresh every 10 s').uncheck();
    await page.locator('select[name=range]').selectOption({ label: 'Chosen dates' });
    await page.getByLabel('From (UTC)').fill('2020-01-01');
    await page.getByLabel('To (UTC, included)').fill('2020-01-02');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('No requests match.').waitFor();
    const [empty] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV of this range' }).click()]);
    expect(readFileSync(await empty.path(), 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it("a request in detail: the provider, its model id and message, hold against charge, the attempts and the job's ledger rows", { timeout: 120_000 }, async () => {
    await page.goto(`${d.h.gw.url}/admin#/log?account_id=${account.accountId}&status=failed`);
    await page.locator('table.log tbody tr a').first().click();
    await page.getByRole('heading', { name: /^Request / }).waitFor();
    expect(await page.getByTestId('status').textContent()).toBe('failed');
    expect(await page.getByTestId('error-message').textContent()).toContain('temperature is too hot for this model');
    expect(await page.getByTestId('provider').textContent()).toBe('provider_1');
    expect(await page.getByTestId('provider-model-id').textContent()).toBe('gpt-test-2026-01-01');
    expect(await page.getByTestId('charged').textContent()).toBe('0');
    const attempts = page.getByRole('table', { name: 'Attempts' }).locator('tbody tr');
    expect(await attempts.count()).toBe(1);
    expect(await attempts.first().textContent()).toContain('400');
    const ledger = await page.getByRole('table', { name: 'Ledger rows' }).locator('tbody tr').allTextContents();
    expect(ledger.map((r) => r.replace(/^.*UTC/, ''))).toEqual([expect.stringMatching(/^Hold/), expect.stringMatching(/^Hold released \(refund\)/)]);

    // The run answered on its second attempt: both attempts, and a charge below its hold.
    await page.goto(`${d.h.gw.url}/admin#/log?account_id=${account.accountId}&status=succeeded`);
    const rows = page.locator('table.log tbody tr');
    await expect.poll(() => rows.count()).toBe(3);
    await rows.nth(1).locator('a').first().click();
    await page.getByRole('heading', { name: /^Request / }).waitFor();
    const tried = await page.getByRole('table', { name: 'Attempts' }).locator('tbody tr').allTextContents();
    expect(tried).toHaveLength(2);
    expect(tried[0]).toContain('500');
    expect(tried[0]).toContain('retried');
    expect(tried[1]).toContain('answered');
    expect(await page.getByTestId('charged').textContent()).toBe('0.00325');
    expect(Number(await page.getByTestId('held').textContent())).toBeGreaterThan(0.00325);
    expect(await page.getByRole('table', { name: 'Ledger rows' }).textContent()).toContain('Charge');
    await page.screenshot({ path: `${d.screenshots}request-detail.png`, fullPage: true });
  });

  it("keys with created and last-used times, spend to six decimals, links to the key's requests and usage; the statement as money", { timeout: 120_000 }, async () => {
    await page.goto(`${d.h.gw.url}/admin#/accounts/${account.accountId}`);
    const key = page.getByRole('listitem', { name: 'Key ops key' });
    // 0.625 + 0.00325 + 0.001375 credits today, to the micro-credit.
    await key.getByText('Today: 0.629625 credits (no limit)').waitFor();
    expect(await key.getByTestId('last-used').textContent()).toMatch(/^Last used \d+ \w+ \d{4}, \d\d:\d\d:\d\d UTC$/);
    expect(await key.getByText(/^Created /).textContent()).toMatch(/UTC$/);

    // The statement: signed amounts, the balance each left, one line per billed run (no holds, no refunds).
    const statement = page.getByRole('table', { name: 'Statement' }).locator('tbody tr');
    await expect.poll(() => statement.count()).toBe(4);
    const lines = await statement.evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent ?? '')));
    expect(lines.map(([, movement, amount, after]) => [movement, amount, after])).toEqual([
      ['Charge', '−0.001375', '49.370375'],
      ['Charge', '−0.00325', '49.37175'],
      ['Charge', '−0.625', '49.375'],
      ['Top-up', '+50', '50'],
    ]);
    await page.screenshot({ path: `${d.screenshots}account.png`, fullPage: true });

    await key.getByRole('link', { name: 'Requests' }).click();
    await page.waitForURL(new RegExp(`#/log\\?account_id=${account.accountId}&key_id=${account.keyId}$`));
    await expect.poll(() => page.locator('table.log tbody tr').count()).toBe(4);
    await page.goBack();
    await key.getByRole('link', { name: 'Usage' }).click();
    await page.waitForURL(new RegExp(`key_id=${account.keyId}`));
    await expect.poll(() => page.getByTestId('total-requests').textContent()).toBe('4');
  });

  it("accounts with this month's spend and last activity; the spend chart stacked by model", { timeout: 120_000 }, async () => {
    await page.goto(`${d.h.gw.url}/admin#/accounts`);
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'Globex' }) });
    await row.waitFor();
    const cells = await row.locator('td').allTextContents();
    expect(cells[3]).toBe('0.629625');
    expect(cells[4]).toMatch(/UTC$/);
    const initech = await page.getByRole('row').filter({ has: page.getByRole('link', { name: 'Initech' }) }).locator('td').allTextContents();
    expect(initech.slice(3)).toEqual(['0', 'none yet']);
    await page.screenshot({ path: `${d.screenshots}accounts.png`, fullPage: true });

    // Stacked by model: the gpt-test and claude-test runs apart.
    d.h.anthropic.enqueue({ kind: 'text', text: 'Hi', usage: { input: 100, output: 10 } });
    expect(await chat('claude-test')).toBe(200);
    await page.goto(`${d.h.gw.url}/admin#/overview`);
    await page.locator('select[name=stack]').selectOption('model');
    const spend = page.getByRole('figure', { name: /^Spend per hour \(credits\), by model/ });
    const head = async () => (await spend.getByRole('table').locator('thead th').allTextContents()).slice(1).sort();
    await expect.poll(head).toEqual(['claude-test', 'gpt-test']);
    await page.screenshot({ path: `${d.screenshots}overview.png`, fullPage: true });
  });

  it('the expiry is a choice plus a date picker', { timeout: 60_000 }, async () => {
    await page.goto(`${d.h.gw.url}/admin#/accounts/${account.accountId}`);
    const form = page.getByRole('form', { name: 'New key' });
    await form.getByLabel('Key name').fill('expiring');
    await form.locator('select[name=expires]').selectOption({ label: 'On a date…' });
    const date = new Date(Date.now() + 10 * DAY).toISOString().slice(0, 10);
    await form.getByLabel('Expiry date (UTC)').fill(date);
    await form.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('button', { name: 'I have stored it' }).click();
    const created = page.getByRole('listitem', { name: 'Key expiring' });
    await created.waitFor();
    const [y, m, dd] = date.split('-').map(Number) as [number, number, number];
    const shown = new Date(Date.UTC(y, m - 1, dd)).toLocaleDateString('en-GB', { timeZone: 'UTC', dateStyle: 'medium' });
    expect(await created.textContent()).toContain(`expires ${shown}, 00:00:00 UTC`);
  });

  it('at 390 px no page scrolls sideways, and the account page shows the balance first', { timeout: 120_000 }, async () => {
    const phone = await d.signedIn({ viewport: { width: 390, height: 844 } });
    const job = (await d.h.gw.admin('GET', `/admin/v1/jobs?account_id=${account.accountId}&limit=1`)).json.data[0].id as string;
    for (const [path, ready] of [
      ['#/overview', 'Overview'], ['#/accounts', 'Accounts'], [`#/accounts/${account.accountId}`, 'Globex'], ['#/log', 'Request log'],
      [`#/log/${job}`, /^Request /], ['#/catalog', 'Catalog'], ['#/audit', 'Audit log'],
    ] as const) {
      await phone.goto(`${d.h.gw.url}/admin${path}`);
      await phone.getByRole('heading', { name: ready, level: 1 }).waitFor();
      await phone.waitForLoadState('networkidle');
      const wide = await phone.evaluate<string[]>(`[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > 391 && !e.closest('.scroll')).slice(0, 5).map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))`);
      expect(await scrollsSideways(phone), `${path}: ${wide.join(', ')}`).toBe(false);
      if (path === '#/log') await phone.screenshot({ path: `${d.screenshots}phone-log.png`, fullPage: true });
    }
    await phone.goto(`${d.h.gw.url}/admin#/accounts/${account.accountId}`);
    const balance = phone.getByTestId('balance');
    await balance.waitFor();
    // The balance is the first figure under the account's name, on the first screen.
    const title = await phone.getByRole('heading', { name: 'Globex', level: 1 }).boundingBox();
    const box = await balance.boundingBox();
    expect(box !== null && title !== null && box.y > title.y && box.y + box.height < 844).toBe(true);
    const firstFigure = await phone.locator('main dd').first().getAttribute('data-testid');
    expect(firstFigure).toBe('balance');
    await phone.screenshot({ path: `${d.screenshots}phone-account.png` });
    await phone.context().close();
  });
});
