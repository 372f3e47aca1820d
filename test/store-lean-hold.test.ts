/**
 * The lean hold (docs/money-path.md "hold"): on PostgreSQL a hold for an account with a
 * purchase and a key without limits runs without the trial and alert steps; when the
 * locked read finds limits or a trial account it writes nothing and the full hold runs.
 * Whatever a process remembers about which hold a key needs, every check applies at
 * once after a change. Both databases (SQLite always runs the full hold).
 */
import { describe, expect, it } from 'vitest';
import { TRIAL_RULES } from '../src/store/money-contract.ts';
import type { Store } from '../src/store/types.ts';
import { DIALECTS, account, hold, key, ledgerMoney, storesFor } from './helpers/stores.ts';

const HOLD = 1_000_000;

for (const dialect of DIALECTS) {
  describe(`lean and full holds on ${dialect.name}`, () => {
    const ctx = storesFor(dialect);

    it('a daily limit set on a key without limits applies to the next hold of every process, with its limit_reached alert; removed, holds pass again', async () => {
      const accountId = await account(ctx.store, { credits: 20 * HOLD });
      const k = await key(ctx.store, accountId);
      for (const store of ctx.stores) expect(await hold(store, accountId, HOLD, { key: k })).toEqual({ ok: true });

      await ctx.store.keys.updateKey(k.id, { dailyLimit: 3 * HOLD + HOLD / 2 });
      for (const store of ctx.stores) {
        expect(await hold(store, accountId, HOLD, { key: k })).toEqual({ ok: false, reason: 'key_limit', period: 'daily', limit: 3 * HOLD + HOLD / 2, used: 3 * HOLD });
      }
      const alerts = await ctx.store.notifications.listNotifications(accountId, 10);
      expect(alerts.filter((n) => n.kind === 'limit_reached').map((n) => n.limit)).toEqual(['daily']);
      // Within the limit, a hold that reaches the warning threshold raises the warning (a step of the full hold only).
      expect(await hold(ctx.stores[1] as Store, accountId, HOLD / 2, { key: k })).toEqual({ ok: true });
      expect((await ctx.store.notifications.listNotifications(accountId, 10)).map((n) => n.kind).sort()).toEqual(['limit_reached', 'warning']);

      await ctx.store.keys.updateKey(k.id, { dailyLimit: null });
      for (const store of ctx.stores) expect(await hold(store, accountId, HOLD, { key: k })).toEqual({ ok: true });
      expect(await ctx.store.accounts.getAccount(accountId)).toMatchObject({ balance: 20 * HOLD, held: 6 * HOLD + HOLD / 2 });
      expect(await ledgerMoney(ctx.store, accountId)).toEqual({ balance: 20 * HOLD, held: 6 * HOLD + HOLD / 2 });
    });

    it('a trial account meets the trial rules, and a refusal for credits or the spending limit is the same on either hold', async () => {
      const trial = await account(ctx.store, { credits: 10 * HOLD, purchase: false });
      expect(await hold(ctx.store, trial, TRIAL_RULES.maxHold + 1)).toEqual({ ok: false, reason: 'trial', rule: 'hold_too_large' });
      expect(await hold(ctx.store, trial, HOLD, { address: '203.0.113.7' })).toEqual({ ok: true });

      const paying = await account(ctx.store, { credits: 2 * HOLD });
      const k = await key(ctx.store, paying);
      expect(await hold(ctx.store, paying, HOLD, { key: k })).toEqual({ ok: true });
      expect(await hold(ctx.store, paying, 2 * HOLD, { key: k })).toEqual({ ok: false, reason: 'insufficient_credits', available: HOLD });
      await ctx.store.accounts.updateAccount(paying, { monthlySpendingLimit: HOLD + HOLD / 4 });
      expect(await hold(ctx.store, paying, HOLD / 2, { key: k })).toEqual({ ok: false, reason: 'spending_limit', limit: HOLD + HOLD / 4, spent: HOLD });
      expect(await ledgerMoney(ctx.store, paying)).toEqual({ balance: 2 * HOLD, held: HOLD });
    });
  });
}
