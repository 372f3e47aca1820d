/**
 * The admin dashboard in headless Chromium for the browser tests: built into a scratch folder, a
 * chat harness serving it, a browser signed in with the admin token. Screenshots go to
 * docs/screenshots only with UPDATE_SCREENSHOTS=1 (`npm test` changes no tracked file).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';
import { build } from 'vite';
import { startChatHarness, type ChatHarness } from './chat.ts';
import { ADMIN_TOKEN } from './gateway.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Without a browser the tests are skipped on a developer's machine, never in CI (CI set): there it fails the run. */
export const NO_BROWSER = !existsSync(CHROMIUM) && process.env.CI === undefined;

export interface DashboardBrowser {
  h: ChatHarness;
  browser: Browser;
  /** Where screenshots go: docs/screenshots/ with UPDATE_SCREENSHOTS=1, else a scratch folder. */
  screenshots: string;
  /** A new page (its own context: `options` such as a time zone), signed in. */
  signedIn(options?: BrowserContextOptions): Promise<Page>;
  close(): Promise<void>;
}

export async function startDashboardBrowser(): Promise<DashboardBrowser> {
  const scratch = mkdtempSync(join(tmpdir(), 'gw-dashboard-e2e-'));
  const screenshots = process.env.UPDATE_SCREENSHOTS === '1' ? fileURLToPath(new URL('../../docs/screenshots/', import.meta.url)) : join(scratch, 'screenshots/');
  mkdirSync(screenshots, { recursive: true });
  const built = join(scratch, 'dashboard');
  await build({ configFile: fileURLToPath(new URL('../../dashboard/vite.config.ts', import.meta.url)), logLevel: 'warn', build: { outDir: built, emptyOutDir: true } });
  // One retry after a failed attempt, so a request can show two attempts.
  const h = await startChatHarness({ UPSTREAM_RETRIES: '1' }, [], { webAppDirs: { dashboard: built } });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  return {
    h,
    browser,
    screenshots,
    async signedIn(options = {}) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true, ...options });
      // The token lives in the tab's sessionStorage (dashboard/src/api.ts).
      await context.addInitScript(`sessionStorage.setItem('model-gateway-admin-token', ${JSON.stringify(ADMIN_TOKEN)})`);
      return context.newPage();
    },
    async close() {
      await browser.close();
      await h.close();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

/** Whether the page scrolls sideways at its current width. */
export async function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate<boolean>('document.documentElement.scrollWidth > document.documentElement.clientWidth');
}
