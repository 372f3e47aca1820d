/**
 * Group commit: the movements of one event-loop turn share a commit, and a movement that
 * fails undoes only itself, never the others of its group.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DIALECTS, account, hold, ledgerMoney, storesFor } from './helpers/stores.ts';

for (const dialect of DIALECTS) {
  describe(`group commit on ${dialect.name}`, () => {
    const ctx = storesFor(dialect);

    it('a hold that fails (its job id taken, another amount) in the same turn as others: they are held, it is not', async () => {
      const accountId = await account(ctx.store, { credits: 10_000 });
      const taken = randomUUID();
      const other = randomUUID();
      const results = await Promise.allSettled([
        hold(ctx.store, accountId, 1_000, { jobId: taken }),
        hold(ctx.store, accountId, 2_000, { jobId: taken }),
        hold(ctx.store, accountId, 3_000, { jobId: other }),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(results[0]).toMatchObject({ value: { ok: true } });
      expect(results[2]).toMatchObject({ value: { ok: true } });
      expect(await ctx.store.accounts.getAccount(accountId)).toMatchObject({ balance: 10_000, held: 4_000 });
      expect(await ledgerMoney(ctx.store, accountId)).toEqual({ balance: 10_000, held: 4_000 });
      expect(await ctx.store.jobs.getJob(taken)).toMatchObject({ held: 1_000, status: 'processing' });
      // The turn after: settling both closes them once each.
      const [a, b] = await Promise.all([
        ctx.store.money.settle(taken, { cost: 400, usage: { prompt_tokens: 1, completion_tokens: 1 }, status: 'succeeded', at: Date.now() }),
        ctx.store.money.settle(other, { cost: 500, usage: { prompt_tokens: 1, completion_tokens: 1 }, status: 'succeeded', at: Date.now() }),
      ]);
      expect([a, b]).toEqual([400, 500]);
      expect(await ctx.store.accounts.getAccount(accountId)).toMatchObject({ balance: 9_100, held: 0 });
      expect(await ledgerMoney(ctx.store, accountId)).toEqual({ balance: 9_100, held: 0 });
    });
  });
}
