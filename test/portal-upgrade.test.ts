/**
 * A database made by today's main (every migration before 120) upgrades in place to the portal's
 * and payments' migrations, on SQLite and PostgreSQL: accounts keep their money, each account's
 * e-mail address becomes its first owner, and the new tables work.
 */
import { Kysely, sql } from 'kysely';
import { migrateOnly, upgradeInPlace } from './helpers/upgrade.ts';
import { describe, expect, it } from 'vitest';
import { openStore } from '../src/store/open-store.ts';
import type { Store } from '../src/store/types.ts';

const now = Date.now();

async function asTodaysMain(db: Kysely<unknown>, dialect: 'sqlite' | 'postgres', schema?: string): Promise<void> {
  await migrateOnly(db, dialect, (name) => name < '120', schema);
  const account = (id: string, email: string | null, balance: number, purchase: 0 | 1) => sql`INSERT INTO accounts
    (id, name, email, created_at, has_purchase, billing_emails, monthly_spending_limit, balance, held, month_start, month_settled, trial_runs, trial_failures)
    VALUES (${id}, ${`Account ${id}`}, ${email}, ${now - 86_400_000}, ${purchase}, 1, NULL, ${balance}, 0, 0, 0, '', 0)`.execute(db);
  await account('acc-owner', ' Boss@Acme.test ', 7_000_000, 1);
  await account('acc-none', null, 1_000_000, 0);
}

async function checkUpgraded(store: Store): Promise<void> {
  const { portal } = store;
  expect(await store.accounts.getAccount('acc-owner')).toMatchObject({ balance: 7_000_000 });
  expect(await portal.membershipsOf('boss@acme.test')).toEqual([{ accountId: 'acc-owner', accountName: 'Account acc-owner', role: 'owner' }]);
  expect(await portal.listMembers('acc-none')).toEqual([]);
  await portal.createLink('hash-1', 'boss@acme.test', now, now + 60_000);
  expect(await portal.redeemLink('hash-1', now + 1)).toBe('boss@acme.test');
  expect(await portal.redeemLink('hash-1', now + 2)).toBeUndefined();
  await portal.createSession('s-1', { realm: 'portal', email: 'boss@acme.test', csrfToken: 'c', createdAt: now, expiresAt: now + 60_000 });
  expect((await portal.session('s-1', now))?.email).toBe('boss@acme.test');
  await portal.audit({ at: now, actor: 'admin-token', action: 'POST /admin/v1/accounts', accountId: null, target: null, status: 201, detail: null });
  expect(await portal.listAudit({ limit: 5 })).toHaveLength(1);
  expect(await portal.moneyLedger('acc-owner', { limit: 10 })).toEqual([]);
  // Migration 121: a paid session credits once, as a purchase.
  const { payments } = store;
  expect(await store.accounts.getAccount('acc-none')).toMatchObject({ hasPurchase: false });
  const paid = { sessionId: 'cs_1', accountId: 'acc-none', paymentIntent: 'pi_1', amountCents: 1000, currency: 'usd', receiptUrl: null, at: now };
  expect(await payments.creditPaidSession(paid)).toBe('credited');
  expect(await payments.creditPaidSession(paid)).toBe('already_credited');
  expect(await store.accounts.getAccount('acc-none')).toMatchObject({ balance: 1_000_000 + 1_000_000_000, hasPurchase: true });
  expect((await portal.moneyLedger('acc-none', { limit: 10 }))[0]).toMatchObject({ kind: 'topup', amount: 1_000_000_000, balanceAfter: 1_001_000_000 });
}

describe("upgrading a database of today's main to the portal's migrations", () => {
  const check = async (url: string) => {
    const store = await openStore(url);
    try {
      await checkUpgraded(store);
    } finally {
      await store.close();
    }
  };

  it('SQLite', async () => {
    await upgradeInPlace('sqlite', asTodaysMain, check);
  });

  it('PostgreSQL', async () => {
    await upgradeInPlace('postgres', asTodaysMain, check);
  });
});
