/**
 * Group commit across accounts (docs/money-path.md "Group commit"): on PostgreSQL one
 * queue per process, each transaction a batch of movements of several accounts ordered by
 * account, three processes at once. Limits stay exact, no batch deadlocks another, and a
 * movement that fails inside a batch does not take the others with it. Both databases.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Store } from '../src/store/types.ts';
import { DIALECTS, account, hold, ledgerMoney, storesFor } from './helpers/stores.ts';

const HOLD = 1_000_000;

for (const dialect of DIALECTS) {
  describe(`money batches on ${dialect.name}`, () => {
    const ctx = storesFor(dialect);

    it('six accounts each covering exactly 5 holds, 120 holds at once from three processes: exactly 5 per account; then closes and holds mixed: ledger = balance', async () => {
      const accounts = await Promise.all(Array.from({ length: 6 }, () => account(ctx.store, { credits: 5 * HOLD })));
      // Interleaved so that every batch mixes accounts, in a different order on each process.
      const first = await Promise.all(Array.from({ length: 120 }, async (_, i) => {
        const accountId = accounts[(i * 7) % 6] as string;
        const jobId = randomUUID();
        return { accountId, jobId, result: await hold(ctx.stores[i % 3] as Store, accountId, HOLD, { jobId }) };
      }));
      for (const accountId of accounts) {
        const mine = first.filter((h) => h.accountId === accountId);
        expect(mine.filter((h) => h.result.ok)).toHaveLength(5);
        for (const refused of mine.filter((h) => !h.result.ok)) expect(refused.result).toEqual({ ok: false, reason: 'insufficient_credits', available: 0 });
        expect(await ctx.store.accounts.getAccount(accountId)).toMatchObject({ balance: 5 * HOLD, held: 5 * HOLD });
      }

      // Settlements (a fifth of the hold each) racing with new holds on the same accounts, over the three processes.
      const passed = first.filter((h) => h.result.ok);
      const second = await Promise.all([
        ...passed.map((h, i) => (ctx.stores[i % 3] as Store).money.settle(h.jobId, { cost: HOLD / 5, usage: { prompt_tokens: 1 }, status: 'succeeded', at: Date.now() }).then(() => undefined)),
        ...Array.from({ length: 60 }, async (_, i) => {
          const accountId = accounts[i % 6] as string;
          const jobId = randomUUID();
          return { accountId, jobId, result: await hold(ctx.stores[(i + 1) % 3] as Store, accountId, HOLD, { jobId }) };
        }),
      ]);
      const later = second.filter((h) => h !== undefined);
      for (const h of later.filter((x) => x.result.ok)) await ctx.store.money.refund(h.jobId, { status: 'canceled', errorCode: 'client_closed', at: Date.now() });
      for (const accountId of accounts) {
        // 5 runs settled at a fifth of a hold: 4 holds' worth left; at most 4 of the later holds could pass.
        expect(later.filter((h) => h.accountId === accountId && h.result.ok).length).toBeLessThanOrEqual(4);
        expect(await ctx.store.accounts.getAccount(accountId)).toMatchObject({ balance: 4 * HOLD, held: 0 });
        expect(await ledgerMoney(ctx.store, accountId)).toEqual({ balance: 4 * HOLD, held: 0 });
      }
    });

    it('a movement that fails inside a batch (a job id used twice) does not refuse the others of its batch', async () => {
      const accounts = await Promise.all(Array.from({ length: 10 }, () => account(ctx.store, { credits: 2 * HOLD })));
      const taken = randomUUID();
      expect(await hold(ctx.store, accounts[0] as string, HOLD, { jobId: taken })).toEqual({ ok: true });
      // Same turn, same store: one batch on PostgreSQL, one group commit on SQLite.
      const results = await Promise.allSettled([
        ...accounts.map((accountId) => hold(ctx.store, accountId, HOLD / 2)),
        hold(ctx.store, accounts[1] as string, HOLD / 4, { jobId: taken }),
      ]);
      expect(results.slice(0, 10).every((r) => r.status === 'fulfilled' && r.value.ok)).toBe(true);
      expect(results[10]?.status).toBe('rejected');
      expect(await ctx.store.accounts.getAccount(accounts[0] as string)).toMatchObject({ balance: 2 * HOLD, held: HOLD + HOLD / 2 });
      expect(await ctx.store.accounts.getAccount(accounts[1] as string)).toMatchObject({ balance: 2 * HOLD, held: HOLD / 2 });
      for (const accountId of accounts) {
        const held = accountId === accounts[0] ? HOLD + HOLD / 2 : HOLD / 2;
        expect(await ledgerMoney(ctx.store, accountId)).toEqual({ balance: 2 * HOLD, held });
      }
    });
  });
}
