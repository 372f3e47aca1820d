/**
 * Key-limit notifications written by the hold (spec "Other notifications") and the
 * e-mail outbox (leases, the 10-per-24-hours quota), on SQLite and PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../src/store/types.ts';
import { DIALECTS, account, hold, key, storesFor } from './helpers/stores.ts';

const DAY = 86_400_000;

for (const dialect of DIALECTS) {
  describe(`limit notifications on ${dialect.name}`, () => {
    const ctx = storesFor(dialect);

    const mailer = () => account(ctx.store, { credits: 1e12, email: 'ops@example.test' });

    it('a hold reaching the warning threshold (80 %) records one warning per limit and period; in-product only without e-mail alerts', async () => {
      const accountId = await account(ctx.store, { credits: 1e12 });
      const k = await key(ctx.store, accountId, { dailyLimit: 1_000_000 });
      await hold(ctx.store, accountId, 500_000, { key: k });
      expect(await ctx.store.notifications.listNotifications(accountId, 10)).toEqual([]);
      await hold(ctx.store, accountId, 300_000, { key: k });
      await hold(ctx.store, accountId, 100_000, { key: k });
      const notes = await ctx.store.notifications.listNotifications(accountId, 10);
      expect(notes).toHaveLength(1);
      expect(notes[0]).toMatchObject({ kind: 'warning', limit: 'daily', keyId: k.id, keyFamilyId: k.familyId, threshold: 0.8, mail: 'none' });
    });

    it('a hold refused by a key limit records limit_reached once per period, also after the limit is changed; with e-mail alerts each gets one outbox row', async () => {
      const accountId = await mailer();
      const k = await key(ctx.store, accountId, { dailyLimit: 1_000_000, monthlyLimit: 1_000_000, emailAlerts: true, warningThreshold: 0.5 });
      await hold(ctx.store, accountId, 600_000, { key: k }); // both limits cross 50 %
      expect(await hold(ctx.store, accountId, 600_000, { key: k })).toMatchObject({ reason: 'key_limit', period: 'daily' });
      expect((await hold(ctx.store, accountId, 600_000, { key: k })).ok).toBe(false);
      await ctx.store.keys.updateKey(k.id, { dailyLimit: 2_000_000 });
      expect(await hold(ctx.store, accountId, 600_000, { key: k })).toMatchObject({ reason: 'key_limit', period: 'monthly' });
      await ctx.store.keys.updateKey(k.id, { dailyLimit: 900_000 });
      expect(await hold(ctx.store, accountId, 600_000, { key: k })).toMatchObject({ reason: 'key_limit', period: 'daily' });
      const notes = (await ctx.store.notifications.listNotifications(accountId, 10)).map((n) => `${n.kind}/${n.limit}/${n.mail}`).sort();
      expect(notes).toEqual(['limit_reached/daily/pending', 'limit_reached/monthly/pending', 'warning/daily/pending', 'warning/monthly/pending']);
      // Tomorrow is another period for the daily limit only.
      await hold(ctx.store, accountId, 900_000, { key: k, at: Date.now() + DAY });
      expect((await ctx.store.notifications.listNotifications(accountId, 10)).length).toBe(4);
    });

    it('30 concurrent holds crossing the threshold and the limit (three processes): exactly one warning and one limit_reached', async () => {
      const accountId = await mailer();
      const k = await key(ctx.store, accountId, { dailyLimit: 1_000_000, emailAlerts: true });
      const results = await Promise.all(Array.from({ length: 30 }, async (_, i) => {
        await new Promise((r) => setTimeout(r, i % 3));
        return hold(ctx.stores[i % 3] as Store, accountId, 100_000, { key: k });
      }));
      expect(results.filter((r) => r.ok)).toHaveLength(10);
      const notes = await ctx.store.notifications.listNotifications(accountId, 100);
      expect(notes.map((n) => n.kind).sort()).toEqual(['limit_reached', 'warning']);
      expect(notes.every((n) => n.mail === 'pending')).toBe(true);
    });

    it('no e-mail when the account turned billing e-mails off or has no address', async () => {
      const off = await mailer();
      await ctx.store.accounts.updateAccount(off, { billingEmails: false });
      const noAddress = await account(ctx.store, { credits: 1e12 });
      for (const accountId of [off, noAddress]) {
        const k = await key(ctx.store, accountId, { dailyLimit: 100, emailAlerts: true });
        await hold(ctx.store, accountId, 100, { key: k });
        expect((await ctx.store.notifications.listNotifications(accountId, 10)).map((n) => n.mail)).toEqual(['none']);
      }
    });

    /** Sends everything due so far (earlier tests' mails), so a test sees only its own. */
    const drain = async (at: number) => {
      for (const m of await ctx.store.notifications.claimMail('drain', at, { limit: 1000, leaseMs: 60_000 })) await ctx.store.notifications.markMailSent(m.id, 'drain', at);
    };

    it('outbox: two processes claiming at once never get the same mail; a lease keeps it, an expired lease frees it; sent and failed with retry', async () => {
      await drain(Date.now());
      const accountId = await mailer();
      for (let i = 0; i < 6; i++) await hold(ctx.store, accountId, 100, { key: await key(ctx.store, accountId, { dailyLimit: 100, emailAlerts: true }) });
      const now = Date.now() + 1;
      const [a = [], b = []] = await Promise.all([
        ctx.stores[0]?.notifications.claimMail('a', now, { limit: 4, leaseMs: 60_000 }),
        ctx.stores[1]?.notifications.claimMail('b', now, { limit: 4, leaseMs: 60_000 }),
      ]);
      const ids = [...a, ...b].map((m) => m.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBeGreaterThanOrEqual(4);
      const rest = await ctx.store.notifications.claimMail('c', now, { limit: 100, leaseMs: 60_000 });
      expect(ids.length + rest.length).toBe(6);
      expect(await ctx.store.notifications.claimMail('c', now + 1, { limit: 100, leaseMs: 60_000 })).toEqual([]);

      const owned = [...a, ...b][0] as (typeof a)[number];
      expect(owned).toMatchObject({ accountId, to: 'ops@example.test', attempts: 1, notification: { kind: 'warning', limit: 'daily' } });
      const owner = a.some((m) => m.id === owned.id) ? 'a' : 'b';
      const later = await ctx.store.notifications.claimMail('d', now + 61_000, { limit: 100, leaseMs: 60_000 });
      expect(later.some((m) => m.id === owned.id)).toBe(true);
      expect(await ctx.store.notifications.markMailSent(owned.id, owner, now)).toBe(false); // the lease went to d
      expect(await ctx.store.notifications.markMailFailed(owned.id, 'd', 'smtp 451', now + 120_000)).toBe(true);
      expect((await ctx.store.notifications.claimMail('e', now + 119_000, { limit: 100, leaseMs: 1 })).some((m) => m.id === owned.id)).toBe(false);
      const byE = await ctx.store.notifications.claimMail('e', now + 200_000, { limit: 100, leaseMs: 60_000 });
      const retried = byE.find((m) => m.id === owned.id);
      expect(retried).toMatchObject({ attempts: 3 });
      expect(await ctx.store.notifications.markMailSent(owned.id, 'e', now + 200_000)).toBe(true);
      expect((await ctx.store.notifications.listNotifications(accountId, 10)).filter((n) => n.mail === 'sent')).toHaveLength(1);
      const given = byE.find((m) => m.id !== owned.id) as (typeof a)[number];
      expect(await ctx.store.notifications.markMailFailed(given.id, 'e', 'mailbox unavailable', null)).toBe(true);
      expect((await ctx.store.notifications.listNotifications(accountId, 10)).filter((n) => n.mail === 'failed')).toHaveLength(1);
    });

    it('at most 10 e-mails per account in 24 hours: the rest are suppressed', async () => {
      const accountId = await mailer();
      for (let i = 0; i < 12; i++) await hold(ctx.store, accountId, 100, { key: await key(ctx.store, accountId, { dailyLimit: 100, emailAlerts: true }) });
      const now = Date.now() + 10 * DAY; // every earlier test's mail is due too: count only this account's
      const claimed = (await ctx.store.notifications.claimMail('m', now, { limit: 1000, leaseMs: 60_000 })).filter((m) => m.accountId === accountId);
      expect(claimed).toHaveLength(10);
      for (const m of claimed) expect(await ctx.store.notifications.markMailSent(m.id, 'm', now)).toBe(true);
      const states = (await ctx.store.notifications.listNotifications(accountId, 100)).map((n) => n.mail);
      expect(states.filter((s) => s === 'suppressed')).toHaveLength(2);
      // A day later the account may be mailed again.
      const k = await key(ctx.store, accountId, { dailyLimit: 100, emailAlerts: true });
      await hold(ctx.store, accountId, 100, { key: k });
      expect((await ctx.store.notifications.claimMail('x', now, { limit: 1000, leaseMs: 60_000 })).filter((m) => m.accountId === accountId)).toEqual([]);
      expect((await ctx.store.notifications.listNotifications(accountId, 1))[0]?.mail).toBe('suppressed');
      const k2 = await key(ctx.store, accountId, { dailyLimit: 100, emailAlerts: true });
      await hold(ctx.store, accountId, 100, { key: k2 });
      expect((await ctx.store.notifications.claimMail('x', now + DAY, { limit: 1000, leaseMs: 60_000 })).filter((m) => m.accountId === accountId)).toHaveLength(1);
    });
  });
}
