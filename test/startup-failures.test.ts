/**
 * A gateway that cannot start says why in one line naming the variable to change, exits
 * non-zero, prints no stack trace and leaves nothing behind (the demo's database files and
 * dashboard build are removed): a port in use (serve and demo), PostgreSQL unreachable, a
 * PostgreSQL database that does not exist, and other start-up failures.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL } from './helpers/postgres.ts';
import { closedPort } from './helpers/tcp-proxy.ts';

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
  pid: number;
}

/** Runs `src/main.ts <command>` to its exit (60 s at most: a hang is a failure too). */
function start(command: 'serve' | 'demo', env: Record<string, string>): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', command], {
      env: { ...process.env, HOST: '127.0.0.1', PORT: '0', DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} did not exit within 60 s: ${stdout}${stderr}`));
    }, 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, pid: child.pid as number });
    });
  });
}

/** One line on stderr, matching `line`; no stack trace anywhere. */
function expectOneLine(exit: Exit, line: RegExp): void {
  expect(exit.code, exit.stderr).toBe(2);
  const lines = exit.stderr.split('\n').filter((l) => l.trim() !== '');
  expect(lines, exit.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(line);
  expect(exit.stdout + exit.stderr).not.toMatch(/\n\s+at \S/);
}

/** What a demo process left in the temporary folder: all of it is named after its process id. */
function leftBy(pid: number): string[] {
  return readdirSync(tmpdir()).filter((name) => name.startsWith(`model-gateway-demo-${pid}`));
}

let taken: Server;
let takenPort: number;
beforeAll(async () => {
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
  takenPort = (taken.address() as { port: number }).port;
});
afterAll(async () => new Promise<void>((resolve) => taken.close(() => resolve())));

// Each case is a process compiling the sources through tsx: slow on a busy machine.
describe('start-up failures', { timeout: 120_000 }, () => {
  it('serve and demo on a port in use → exit 2, "PORT: 127.0.0.1:<port> is already in use", no stack; the demo leaves no file behind', async () => {
    const [serve, demo] = await Promise.all([start('serve', { PORT: String(takenPort) }), start('demo', { PORT: String(takenPort) })]);
    const inUse = new RegExp(`^PORT: 127\\.0\\.0\\.1:${takenPort} is already in use by another process: stop it, or set PORT to a free port\\.$`);
    expectOneLine(serve, inUse);
    expectOneLine(demo, inUse);
    expect(demo.stdout).toBe('');
    expect(leftBy(demo.pid)).toEqual([]);
  });

  it('PostgreSQL unreachable and a PostgreSQL database that does not exist → exit 2 naming DATABASE_URL, no stack', async () => {
    const missing = new URL(PG_URL);
    missing.pathname = `/gw_missing_${randomUUID().replace(/-/g, '')}`;
    const [unreachable, absent] = await Promise.all([
      start('serve', { DATABASE_URL: `postgres://postgres@127.0.0.1:${await closedPort()}/test` }),
      start('serve', { DATABASE_URL: missing.toString() }),
    ]);
    expectOneLine(unreachable, /^DATABASE_URL: cannot reach PostgreSQL at 127\.0\.0\.1:\d+ \(ECONNREFUSED\): start it, or point DATABASE_URL at a server that runs\.$/);
    expectOneLine(absent, new RegExp(`^DATABASE_URL: the database '${missing.pathname.slice(1)}' does not exist on [^ ]+: create it \\(createdb ${missing.pathname.slice(1)}\\), or point DATABASE_URL at one that does\\.$`));
  });

  it('other start-up failures: a bad value, a catalog that cannot be read, an address not of this machine → one line naming the variable; the demo leaves nothing', async () => {
    const [badValue, demoBadValue, catalog, host] = await Promise.all([
      start('serve', { PORT: 'eighty' }),
      start('demo', { LEASE_MS: '1' }),
      start('serve', { CATALOG_FILE: '/nonexistent/models.json' }),
      start('serve', { HOST: '203.0.113.7' }),
    ]);
    expectOneLine(badValue, /^Invalid configuration: PORT: /);
    expectOneLine(demoBadValue, /^Invalid configuration: LEASE_MS: /);
    expect(leftBy(demoBadValue.pid)).toEqual([]);
    expectOneLine(catalog, /^CATALOG_FILE: Catalog file \/nonexistent\/models\.json cannot be read/);
    expectOneLine(host, /^HOST: cannot listen on '203\.0\.113\.7' \(EADDRNOTAVAIL\)/);
  });
});
