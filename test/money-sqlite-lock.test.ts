/**
 * One gateway process per SQLite database (issue 29, docs/money-path.md "In memory, on SQLite"):
 * the money engine reserves in memory, so a second process on the same file refuses to start
 * with one line naming DATABASE_URL and exit code 2; a second store in the same process is
 * refused too; the lock goes with its process, SIGKILL included.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/store/open-store.ts';
import { writeCatalog } from './fixtures/catalog.ts';
import { chatCatalog } from './helpers/chat.ts';
import { ADMIN_TOKEN, http } from './helpers/gateway.ts';
import { startGatewayProcess } from './helpers/process.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gw-sqlite-lock-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('one process per SQLite database', () => {
  it('a second gateway on the same file refuses to start (exit 2, one line naming DATABASE_URL); after a SIGKILL of the first a new one starts', async () => {
    const file = join(dir, 'gateway.db');
    const env = { DATABASE_URL: `sqlite:${file}`, ADMIN_TOKEN, CATALOG_FILE: writeCatalog(chatCatalog()) };
    const first = await startGatewayProcess(env);
    try {
      const refused = await startGatewayProcess(env).then(
        () => expect.unreachable('the second gateway started'),
        (error: { exitCode: number; output: string }) => error,
      );
      expect(refused.exitCode).toBe(2);
      const lines = refused.output.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toBe(
        `DATABASE_URL: the SQLite database ${file} is in use by another gateway process (${file}.lock is locked); SQLite runs one gateway process per database: stop the other one, use the admin API, or use PostgreSQL for several processes.`,
      );
      // The first one still serves.
      const made = await http(`${first.url}/admin/v1/accounts`, { method: 'POST', body: { name: 'still serving' }, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(made.status).toBe(201);
    } finally {
      await first.kill();
    }
    const again = await startGatewayProcess(env);
    await again.stop();
    }, 120_000);

  it('a second store in the same process is refused until the first closes', async () => {
    const url = `sqlite:${join(dir, 'two-stores.db')}`;
    const store = await openStore(url);
    await expect(openStore(url)).rejects.toMatchObject({ code: 'DATABASE_IN_USE' });
    await store.close();
    const reopened = await openStore(url);
    await reopened.close();
  });
});
