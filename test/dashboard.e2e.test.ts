/**
 * The admin dashboard end to end, in headless Chromium: sign in, create an account and a key (secret
 * shown once), find a chat request in the log and the charts, set a daily limit and see the usage
 * bar, revoke the key and see a request with it refused. The README's screenshots are taken by
 * dashboard-activity.e2e.test.ts.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatHarness } from './helpers/chat.ts';
import { NO_BROWSER, startDashboardBrowser, type DashboardBrowser } from './helpers/dashboard-browser.ts';
import { ADMIN_TOKEN } from './helpers/gateway.ts';

const hi = [{ role: 'user', content: 'Hello there' }];

// Without a browser the test is skipped on a developer's machine, never in CI (.ci/run installs Chromium and sets CI):
// there a missing browser fails the run.
describe.skipIf(NO_BROWSER)('admin dashboard in a browser', () => {
  let d: DashboardBrowser;
  let h: ChatHarness;
  let page: Page;

  beforeAll(async () => {
    d = await startDashboardBrowser();
    h = d.h;
    // Not signed in: the first test signs in with the token.
    page = await d.browser.newPage({ viewport: { width: 1280, height: 900 } });
  }, 120_000);

  afterAll(async () => d?.close());

  it('serves the built page and its assets with their content types', async () => {
    const response = await page.goto(`${h.gw.url}/admin`);
    expect(response?.headers()['content-type']).toContain('text/html');
    const script = await page.locator('script[type=module]').getAttribute('src');
    const asset = await fetch(`${h.gw.url}${script}`);
    expect(asset.headers.get('content-type')).toContain('text/javascript');
  });

  it('signs in, creates an account and a key, and shows the secret once', { timeout: 120_000 }, async () => {
    await page.goto(`${h.gw.url}/admin`);
    await page.getByLabel('Admin token').fill('wrong-token-wrong-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('The admin token was refused').waitFor();
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByLabel('Admin token').press('Enter');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();

    await page.getByRole('link', { name: 'Accounts' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Acme Robotics');
    await page.getByLabel('E-mail (optional)').fill('ops@acme.test');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Acme Robotics' }).waitFor();

    await page.getByLabel('Credits', { exact: true }).fill('100');
    await page.getByRole('button', { name: 'Add credits' }).click();
    await expect.poll(() => page.getByTestId('balance').textContent()).toBe('100');

    await page.getByLabel('Key name').fill('e2e key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('secret').textContent()) ?? '';
    expect(secret).toMatch(/^svc_/);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.reload();
    await page.getByRole('listitem', { name: 'Key e2e key' }).waitFor();
    expect(await page.getByTestId('secret').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
    keySecret = secret;
  });

  let keySecret = '';

  it('finds a chat request with that key in the request log and the charts', { timeout: 120_000 }, async () => {
    // 600 of the 1,000 input tokens read from the cache (the fixture model has no cache price: billed as input).
    h.openai.enqueue({ kind: 'text', text: 'Hi!', usage: { input: 1000, cacheRead: 600, output: 500 } });
    const chat = await h.gw.api('/chat/completions', { key: keySecret, body: { model: 'gpt-test', messages: hi } });
    expect(chat.status).toBe(200);

    await page.getByRole('link', { name: 'Request log' }).click();
    const row = page.locator('table.log tbody tr').first();
    await row.waitFor();
    expect(await row.textContent()).toContain('gpt-test');
    expect(await row.textContent()).toContain('succeeded');
    expect(await row.textContent()).toContain('e2e key');
    expect(await row.textContent()).toContain('1,000 / 500');
    expect(await row.textContent()).toContain('600 / 0');
    // Filters live in the URL.
    await page.getByLabel('Model').fill('gpt-test');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/model=gpt-test/);
    await page.locator('table.log tbody tr').first().waitFor();

    await page.getByRole('link', { name: 'Overview' }).click();
    await expect.poll(() => page.getByTestId('total-requests').textContent()).toBe('1');
    expect(await page.getByTestId('total-credits').textContent()).toBe('0.625 credits');
    expect(await page.locator('.chart canvas').count()).toBe(3);
    expect(await page.getByTestId('cached-share').textContent()).toBe('60%');
    expect(await page.getByRole('figure', { name: /^Tokens per hour/ }).locator('.total').textContent()).toContain('Cache reads: 600');
    expect(await page.getByRole('table', { name: 'Top models' }).textContent()).toContain('gpt-test');

    // Readable on a phone: nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('sets a daily limit and shows the usage bar; a revoked key is refused', { timeout: 120_000 }, async () => {
    await page.getByRole('link', { name: 'Accounts' }).click();
    await page.getByRole('link', { name: 'Acme Robotics' }).click();
    const key = page.getByRole('listitem', { name: 'Key e2e key' });
    await key.getByRole('button', { name: 'Edit limits' }).click();
    await key.getByLabel('Daily limit (credits)').fill('1');
    await key.getByRole('button', { name: 'Save limits' }).click();
    await key.getByRole('button', { name: 'Yes, save limits' }).click();
    await key.getByText('Today: 0.625 of 1 credits').waitFor();
    expect(await key.getByRole('progressbar', { name: 'Today usage' }).getAttribute('value')).toBe('0.625');

    await key.getByRole('button', { name: 'Revoke' }).click();
    await key.getByRole('button', { name: 'Yes, revoke' }).click();
    await key.getByText('revoked', { exact: true }).waitFor();
    const refused = await h.gw.api('/chat/completions', { key: keySecret, body: { model: 'gpt-test', messages: hi } });
    expect(refused.status).toBe(401);
    expect(refused.json.error.code).toBe('invalid_api_key');
  });
});
