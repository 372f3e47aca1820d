/**
 * Buying credits end to end, in headless Chromium: the owner of a trial account whose request was
 * refused with trial_limit buys credits in the portal, pays on the Stripe emulator's payment page,
 * comes back to the balance and the receipt, and the same request now runs. With
 * PORTAL_SCREENSHOTS=1, writes docs/screenshots/portal-purchase.png.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStripeEmulator, type StripeEmulator } from '../emulators/stripe.ts';
import { startChatHarness, type ChatHarness } from './helpers/chat.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOTS = process.env.PORTAL_SCREENSHOTS === '1' ? fileURLToPath(new URL('../docs/screenshots/', import.meta.url)) : undefined;
const big = { model: 'gpt-test', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 4000 };

describe.skipIf(!existsSync(CHROMIUM) && process.env.CI === undefined)('buying credits in a browser', () => {
  let h: ChatHarness;
  let emu: StripeEmulator;
  let browser: Browser;
  const built = mkdtempSync(join(tmpdir(), 'gw-payments-e2e-'));

  beforeAll(async () => {
    await build({ configFile: fileURLToPath(new URL('../portal/vite.config.ts', import.meta.url)), logLevel: 'warn', build: { outDir: join(built, 'portal'), emptyOutDir: true } });
    emu = await startStripeEmulator();
    h = await startChatHarness(
      { STRIPE_SECRET_KEY: emu.secretKey, STRIPE_WEBHOOK_SECRET: emu.webhookSecret, STRIPE_API_BASE: emu.baseUrl },
      [],
      { webAppDirs: { portal: join(built, 'portal') } },
    );
    emu.setWebhookUrl(`${h.gw.url}/webhooks/stripe`);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
    if (SCREENSHOTS !== undefined) mkdirSync(SCREENSHOTS, { recursive: true });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await emu?.close();
    rmSync(built, { recursive: true, force: true });
  });

  it('a trial account buys credits through Checkout; the refused request now runs', { timeout: 120_000 }, async () => {
    const created = new Date(Date.now() - 2 * 86_400_000).toISOString();
    const accountId = (await h.gw.admin('POST', '/admin/v1/accounts', { name: 'Trial Co', email: 'founder@trial.test', created_at: created })).json.id as string;
    await h.gw.admin('POST', `/admin/v1/accounts/${accountId}/credits`, { credits: 5, purchase: false });
    const key = (await h.gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { name: 'app' })).json.key as string;
    const refused = await h.gw.api('/chat/completions', { key, body: big });
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('trial_limit');

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(await h.gw.gateway.signInLinks.issue('founder@trial.test', `${h.gw.url}/portal`));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Balance' }).click();
    await expect.poll(() => page.getByTestId('balance').textContent()).toBe('$0.05');
    await page.getByText('trial rules apply until a purchase').waitFor();
    await page.getByRole('button', { name: 'Buy $25' }).click();

    await page.getByRole('heading', { name: 'Pay $25.00' }).waitFor();
    expect(page.url()).toContain(emu.baseUrl);
    await page.getByRole('button', { name: 'Pay $25.00' }).click();

    await page.waitForURL(new RegExp(`/portal/#/a/${accountId}/billing\\?checkout=cs_`));
    await expect.poll(() => page.getByTestId('balance').textContent()).toBe('$25.05');
    await page.getByText('a purchase lifted the trial rules').waitFor();
    const receipts = page.getByRole('table', { name: 'Payments' });
    expect(await receipts.locator('tbody tr').first().textContent()).toContain('$25.00');
    const receipt = await receipts.getByRole('link', { name: 'Receipt' }).getAttribute('href');
    expect(receipt).toMatch(new RegExp(`^${emu.baseUrl}/receipts/ch_`));
    expect(await page.locator('table.ledger tbody tr').first().textContent()).toContain('Purchase+$25.00$25.05');
    if (SCREENSHOTS !== undefined) await page.screenshot({ path: `${SCREENSHOTS}portal-purchase.png`, fullPage: true });

    h.openai.enqueue({ kind: 'text', text: 'Hi!', usage: { input: 10, output: 5 } });
    const runs = await h.gw.api('/chat/completions', { key, body: big });
    expect(runs.status).toBe(200);
  });
});
