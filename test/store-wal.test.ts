/**
 * SQLite on a file: WAL checkpoints run in the checkpointer thread, never in a request's commit;
 * under steady load the log is restarted (else it grows without end).
 */
import { randomUUID } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../src/store/open-store.ts';

describe('WAL checkpointer', () => {
  it('copies WAL pages back into the database file in the background, and leaves an empty WAL on close', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-wal-'));
    const file = join(dir, 'gateway.db');
    try {
      const store = await openStore(`sqlite:${file}`);
      const account = await store.accounts.createAccount({ name: 'w', email: null, createdAt: Date.now(), hasPurchase: true, billingEmails: true });
      await store.accounts.addCredits(account.id, 1e12, 'topup', Date.now());
      // Fewer pages than SQLite's own auto-checkpoint threshold (1,000): only the checkpointer copies them back.
      const before = statSync(file).size;
      for (let i = 0; i < 40; i++) {
        const jobId = randomUUID();
        await store.money.hold({ jobId, accountId: account.id, keyId: null, keyFamilyId: null, kind: 'chat', model: 'm', amount: 10, at: Date.now(), instanceId: 'x', clientAddress: null, countsTowardKeyLimits: true });
        await store.money.settle(jobId, { cost: 5, usage: { prompt_tokens: 1, completion_tokens: 1 }, status: 'succeeded', at: Date.now() });
      }
      expect(statSync(`${file}-wal`).size).toBeGreaterThan(0);
      const afterWrites = statSync(file).size;
      // The checkpointer (a worker thread, every second) copies them back: wait for it, up to 10 s on a busy machine.
      for (let end = Date.now() + 10_000; statSync(file).size <= Math.max(before, afterWrites) && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
      expect(statSync(file).size).toBeGreaterThan(Math.max(before, afterWrites));
      await store.close();
      expect(statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0).toBe(0);
      const reopened = await openStore(`sqlite:${file}`);
      expect((await reopened.accounts.getAccount(account.id))?.balance).toBe(1e12 - 40 * 5);
      await reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('restarts the log under steady load, so it does not grow without end', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-wal-'));
    const file = join(dir, 'gateway.db');
    // The WAL header's checkpoint sequence number (bytes 12-15) goes up each time the log starts again from its beginning.
    const restarts = () => {
      const fd = openSync(`${file}-wal`, 'r');
      try {
        const header = Buffer.alloc(16);
        return readSync(fd, header, 0, 16, 0) === 16 ? header.readUInt32BE(12) : 0;
      } finally {
        closeSync(fd);
      }
    };
    const walBytes = () => statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    try {
      const store = await openStore(`sqlite:${file}`);
      const account = await store.accounts.createAccount({ name: 'w', email: null, createdAt: Date.now(), hasPurchase: true, billingEmails: true });
      await store.accounts.addCredits(account.id, 1e15, 'topup', Date.now());
      const first = restarts();
      let pairs = 0;
      let largest = 0;
      // 50 runs at a time with no pause, as under load: a passive checkpoint alone never lets the log start again.
      // Until the log has started again twice, or it has grown past 256 MiB (without the restart it grows by
      // about 100 MiB a second here), or 40 s.
      const end = Date.now() + 40_000;
      const done = () => restarts() - first >= 2 || largest > 256 * 2 ** 20 || Date.now() > end;
      await Promise.all(Array.from({ length: 50 }, async () => {
        while (!done()) {
          const jobId = randomUUID();
          await store.money.hold({ jobId, accountId: account.id, keyId: null, keyFamilyId: null, kind: 'chat', model: 'm', amount: 10, at: Date.now(), instanceId: 'x', clientAddress: null, countsTowardKeyLimits: true });
          await store.money.settle(jobId, { cost: 5, usage: { prompt_tokens: 1, completion_tokens: 1 }, status: 'succeeded', at: Date.now() });
          pairs++;
          largest = Math.max(largest, walBytes());
        }
      }));
      expect(restarts() - first).toBeGreaterThanOrEqual(2);
      expect(largest).toBeLessThan(256 * 2 ** 20);
      await store.close();
      const reopened = await openStore(`sqlite:${file}`);
      expect(await reopened.accounts.getAccount(account.id)).toMatchObject({ balance: 1e15 - pairs * 5, held: 0 });
      await reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
