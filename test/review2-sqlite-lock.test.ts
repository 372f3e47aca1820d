/**
 * Review of issue 29 (helper review2): the one-process lock must follow the database file, not the
 * spelling of its path. A second store that reaches the same file through a symbolic link (a data
 * directory linked elsewhere, a second gateway configured with the link's path) must be refused, or
 * two processes reserve in memory against one account and overspend it.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/store/open-store.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gw-review2-lock-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('one process per SQLite database, whatever the path', () => {
  it('a store opened through a symbolic link to the data directory is refused while the first is open', async () => {
    const real = join(dir, 'data');
    mkdirSync(real);
    const linked = join(dir, 'linked');
    symlinkSync(real, linked, 'dir');
    const store = await openStore(`sqlite:${join(real, 'gateway.db')}`);
    try {
      await expect(openStore(`sqlite:${join(linked, 'gateway.db')}`)).rejects.toMatchObject({ code: 'DATABASE_IN_USE' });
    } finally {
      await store.close();
    }
    const reopened = await openStore(`sqlite:${join(linked, 'gateway.db')}`);
    await reopened.close();
  });

  it('a store opened through a symbolic link to the database file itself is refused', async () => {
    const real = join(dir, 'file.db');
    const store = await openStore(`sqlite:${real}`);
    const linked = join(dir, 'file-link.db');
    symlinkSync(real, linked, 'file');
    try {
      await expect(openStore(`sqlite:${linked}`)).rejects.toMatchObject({ code: 'DATABASE_IN_USE' });
    } finally {
      await store.close();
    }
  });
});
