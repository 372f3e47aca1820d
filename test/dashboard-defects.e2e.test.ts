/**
 * Issue 32's defects of the admin dashboard, each seen in headless Chromium as an operator sees it:
 * charts over the selected range (empty hours as zeros, UTC axes), a key's usage to the
 * micro-credit, ranking bars under one credit, the new-key form emptied after a key, "1 account",
 * and the dashboard's icon.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_BROWSER, startDashboardBrowser, type DashboardBrowser } from './helpers/dashboard-browser.ts';

const HOUR = 3_600_000;
const hi = [{ role: 'user', content: 'Hello there' }];

describe.skipIf(NO_BROWSER)('admin dashboard defects (issue 32)', () => {
  let d: DashboardBrowser;
  let page: Page;
  let accountId: string;

  beforeAll(async () => {
    d = await startDashboardBrowser();
    // One run of 5 input and 2 output tokens: 5 × 125 + 2 × 1,000 = 2,625 micro-credits, under a daily limit of 5 credits.
    const a = await d.h.gw.account({ credits: 10, key: { name: 'tiny key', daily_limit_credits: 5 } });
    accountId = a.accountId;
    d.h.openai.enqueue({ kind: 'text', text: 'Hi!', usage: { input: 5, output: 2 } });
    expect((await d.h.gw.api('/chat/completions', { key: a.key, body: { model: 'gpt-test', messages: hi } })).status).toBe(200);
    // Hawaii is UTC−10: every time the dashboard shows must still be UTC.
    page = await d.signedIn({ timezoneId: 'Pacific/Honolulu' });
  }, 180_000);

  afterAll(async () => d?.close());

  it('the overview charts the selected 24 hours, hour by hour with empty hours as zeros, on a UTC axis', { timeout: 120_000 }, async () => {
    await page.goto(`${d.h.gw.url}/admin#/overview`);
    const spend = page.getByRole('figure', { name: /^Spend per hour/ });
    const table = spend.getByRole('table');
    await table.waitFor({ state: 'attached' });
    // The x axis is the range asked for: 24 hours ending at the next whole hour, not the data's own extent.
    const axis = spend.locator('[data-x-min]');
    const [min, max] = [Number(await axis.getAttribute('data-x-min')), Number(await axis.getAttribute('data-x-max'))];
    expect((max - min) * 1000).toBe(24 * HOUR);
    expect(max * 1000).toBeGreaterThan(Date.now() - HOUR);
    expect(max * 1000).toBeLessThanOrEqual(Date.now() + HOUR);
    // Every hour is a row (24), in UTC, zeros where nothing ran; the run's hour carries its credits.
    const rows = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => cell.textContent ?? '')));
    expect(rows).toHaveLength(24);
    const thisHour = `${String(new Date().getUTCHours()).padStart(2, '0')}:00 UTC`;
    const ran = rows.filter(([, credits]) => credits === '0.002625');
    expect(ran).toHaveLength(1);
    expect(ran[0]?.[0]).toContain(thisHour);
    expect(rows.filter(([, credits]) => credits === '0')).toHaveLength(23);
  });

  it('ranks models and keys with visible bars when the top spend is under one credit', { timeout: 60_000 }, async () => {
    const top = page.getByRole('table', { name: 'Top models' }).locator('tbody tr').first();
    await top.waitFor();
    expect(await top.getAttribute('style')).toContain('--share: 100%');
    const key = page.getByRole('table', { name: 'Top keys' }).locator('tbody tr').first();
    expect(await key.getAttribute('style')).toContain('--share: 100%');
  });

  it("shows a key's usage to the micro-credit, as the rest of the page", { timeout: 60_000 }, async () => {
    await page.goto(`${d.h.gw.url}/admin#/accounts/${accountId}`);
    const key = page.getByRole('listitem', { name: 'Key tiny key' });
    await key.getByText('Today: 0.002625 of 5 credits').waitFor();
  });

  it('empties the new-key form after a key is created', { timeout: 60_000 }, async () => {
    const form = page.getByRole('form', { name: 'New key' });
    await form.getByLabel('Key name').fill('limited');
    await form.getByLabel('Daily limit (credits)').fill('3');
    await form.getByLabel('Monthly limit (credits)').fill('40');
    await form.getByLabel('Requests per minute').fill('120');
    await form.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('listitem', { name: 'Key limited' }).waitFor();
    expect(await form.getByLabel('Key name').inputValue()).toBe('');
    expect(await form.getByLabel('Daily limit (credits)').inputValue()).toBe('');
    expect(await form.getByLabel('Monthly limit (credits)').inputValue()).toBe('');
    expect(await form.getByLabel('Requests per minute').inputValue()).toBe('600');
  });

  it('counts "1 account" in words, and serves the dashboard an icon', { timeout: 60_000 }, async () => {
    await page.goto(`${d.h.gw.url}/admin#/accounts?q=${accountId}`);
    await page.getByRole('table').getByText('1 account', { exact: true }).waitFor();
    const icon = await fetch(`${d.h.gw.url}/admin/favicon.ico`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/x-icon');
    expect((await icon.arrayBuffer()).byteLength).toBeGreaterThan(0);
  });
});
