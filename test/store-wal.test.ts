/** SQLite on a file: WAL checkpoints run in the checkpointer thread, never in a request's commit. */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
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
      const account = await store.createAccount({ name: 'w', email: null, createdAt: Date.now(), hasPurchase: true, billingEmails: true });
      await store.addCredits(account.id, 1e12, 'topup', Date.now());
      // Fewer pages than SQLite's own auto-checkpoint threshold (1,000): only the checkpointer copies them back.
      const before = statSync(file).size;
      for (let i = 0; i < 40; i++) {
        const jobId = randomUUID();
        await store.hold({ jobId, accountId: account.id, keyId: null, keyFamilyId: null, kind: 'chat', model: 'm', amount: 10, at: Date.now(), instanceId: 'x', clientAddress: null, countsTowardKeyLimits: true });
        await store.settle(jobId, { cost: 5, usage: { prompt_tokens: 1, completion_tokens: 1 }, status: 'succeeded', at: Date.now() });
      }
      expect(statSync(`${file}-wal`).size).toBeGreaterThan(0);
      const afterWrites = statSync(file).size;
      // The checkpointer (a worker thread, every second) copies them back: wait for it, up to 10 s on a busy machine.
      for (let end = Date.now() + 10_000; statSync(file).size <= Math.max(before, afterWrites) && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
      expect(statSync(file).size).toBeGreaterThan(Math.max(before, afterWrites));
      await store.close();
      expect(statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0).toBe(0);
      const reopened = await openStore(`sqlite:${file}`);
      expect((await reopened.getAccount(account.id))?.balance).toBe(1e12 - 40 * 5);
      await reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
