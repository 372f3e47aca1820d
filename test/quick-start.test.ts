/**
 * The README's quick-start as a newcomer runs it: a fresh clone of this repository's committed
 * HEAD in a temporary folder, the README's own command line (`npm ci && npm run demo`), then
 * the addresses the demo prints: the dashboard, the API reference, the MCP endpoint and a chat
 * call with the printed key; Ctrl+C stops it and leaves nothing behind.
 *
 * No network: npm works from its cache (`npm_config_offline`; CI's own `npm ci` filled it), and
 * better-sqlite3's native binary comes from the one this checkout built (prebuild-install's
 * local prebuilds), so `npm ci` installs every package for real without compiling SQLite again.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, it } from 'vitest';
import { startDemo, type DemoProcess } from './helpers/demo.ts';
import { http } from './helpers/gateway.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'gw-quick-start-'));
let demo: DemoProcess | undefined;
// The clone's node_modules is some 27,000 files: removed without blocking this worker, and given time on a busy machine.
afterAll(async () => {
  await demo?.stop();
  await rm(scratch, { recursive: true, force: true });
}, 180_000);

/** The README's quick-start line that starts the demo, as written (its comment left out). */
function quickStartLine(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  const line = block.split('\n').find((l) => l.includes('npm run demo')) ?? '';
  return line.replace(/\s+#.*$/, '').trim();
}

/** better-sqlite3's binary of this checkout, packed where prebuild-install looks for local prebuilds. */
function localPrebuilds(): Record<string, string> {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve('better-sqlite3/package.json');
  const binary = join(dirname(pkg), 'build', 'Release', 'better_sqlite3.node');
  if (!existsSync(binary)) return {};
  const { version } = JSON.parse(readFileSync(pkg, 'utf8')) as { version: string };
  const dir = join(scratch, 'prebuilds');
  mkdirSync(join(dir, 'build', 'Release'), { recursive: true });
  execFileSync('cp', [binary, join(dir, 'build', 'Release')]);
  execFileSync('tar', ['czf', join(dir, `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`), '-C', dir, 'build']);
  return { npm_config_better_sqlite3_local_prebuilds: dir };
}

describe('the README quick-start on a fresh clone', () => {
  it('npm ci && npm run demo: /admin, /docs, /mcp and a chat call answer; Ctrl+C leaves nothing behind', async () => {
    const line = quickStartLine();
    expect(line).toBe('npm ci && npm run demo');
    const clone = join(scratch, 'model-gateway');
    execFileSync('git', ['clone', '--quiet', ROOT, clone]);
    demo = await startDemo({
      cwd: clone,
      command: ['sh', '-c', line],
      env: { ...localPrebuilds(), npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' },
      withinMs: 300_000,
    });
    const { base, key, printed } = demo;
    expect(existsSync(join(clone, 'node_modules', 'better-sqlite3'))).toBe(true);

    const page = await http(`${base}/admin`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<script type="module"');
    const docs = await http(`${base}/docs`);
    expect(docs.status).toBe(200);
    const mcp = new Client({ name: 'quick-start', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    const tools = await mcp.listTools();
    await mcp.close();
    expect(tools.tools.map((t) => t.name)).toContain('list_models');
    const chat = await http(`${base}/api/v1/chat/completions`, { key, body: { model: 'gpt-6-luna', messages: [{ role: 'user', content: 'Hello!' }] } });
    expect(chat.status).toBe(200);
    expect(chat.json.choices[0].message.content).toContain('Hello');

    const database = /SQLite: (\S+\.db)/.exec(printed)?.[1] as string;
    const pid = /model-gateway-demo-(\d+)\.db/.exec(database)?.[1] as string;
    expect(existsSync(database)).toBe(true);
    await demo.stop();
    demo = undefined;
    // npm and the shell may end before the demo under them has finished removing its files: wait for the demo's
    // process to end (it removes them before it exits), then look.
    const running = () => {
      try {
        process.kill(Number(pid), 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 1_200 && running(); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(running()).toBe(false);
    const left = readdirSync(tmpdir()).filter((name) => name.startsWith(`model-gateway-demo-${pid}`));
    expect(left).toEqual([]);
  }, 420_000);
});
