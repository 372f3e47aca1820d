/**
 * The operator's request log shows the Responses route: a run through POST /api/v1/responses is a
 * row of kind `responses`, beside a chat completion's `chat`, in headless Chromium.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { ADMIN_TOKEN } from './helpers/gateway.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCRATCH = mkdtempSync(join(tmpdir(), 'gw-responses-e2e-'));

describe.skipIf(!existsSync(CHROMIUM) && process.env.CI === undefined)('the Responses route in the request log', () => {
  let h: ChatHarness;
  let browser: Browser;

  beforeAll(async () => {
    const built = join(SCRATCH, 'dashboard');
    await build({ configFile: fileURLToPath(new URL('../dashboard/vite.config.ts', import.meta.url)), logLevel: 'warn', build: { outDir: built, emptyOutDir: true } });
    h = await startChatHarness({}, [], { webAppDirs: { dashboard: built } });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
    rmSync(SCRATCH, { recursive: true, force: true });
  });

  it('a Responses run is a row of kind responses, a chat completion one of kind chat', { timeout: 120_000 }, async () => {
    const { key } = await h.gw.account();
    h.anthropic.enqueue({ kind: 'text', text: 'Hi!', usage: { input: 10, output: 3 } });
    expect((await h.gw.api('/responses', { key, body: { model: 'claude-test', input: 'Hello' } })).status).toBe(200);
    h.openai.enqueue({ kind: 'text', text: 'Hi!', usage: { input: 10, output: 3 } });
    expect((await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'Hello' }] } })).status).toBe(200);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${h.gw.url}/admin`);
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByLabel('Admin token').press('Enter');
    await page.getByRole('link', { name: 'Request log' }).click();
    const rows = page.locator('table.log tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    const [chat, responses] = await rows.allTextContents();
    expect(responses).toContain('responses');
    expect(responses).toContain('claude-test');
    expect(chat).toContain('chat');
    expect(chat).toContain('gpt-test');
    expect(await page.getByRole('columnheader', { name: 'Kind' }).count()).toBe(1);
    await page.screenshot({ path: join(SCRATCH, 'responses-log.png'), fullPage: true });
  });
});
