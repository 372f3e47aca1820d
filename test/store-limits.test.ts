/**
 * The admission checks inside the one atomic hold (spec "Credit limits per key", "Trial
 * rules", the spending limit), on SQLite and PostgreSQL. On PostgreSQL the concurrent
 * cases come from three store instances (three processes) racing on one database.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TRIAL_RULES, type HoldResult } from '../src/store/money-contract.ts';
import type { Store } from '../src/store/types.ts';
import { DIALECTS, account, hold, key, type HoldOptions, storesFor } from './helpers/stores.ts';

const DAY = 86_400_000;

for (const dialect of DIALECTS) {
  describe(`limits inside the hold on ${dialect.name}`, () => {
    const ctx = storesFor(dialect);

    /** 30 concurrent holds spread over the processes and over a few event-loop turns (so over several concurrent transactions). */
    const thirty = (accountId: string, amount: number, options: (i: number) => HoldOptions = () => ({})) =>
      Promise.all(Array.from({ length: 30 }, async (_, i) => {
        await new Promise((r) => setTimeout(r, i % 4));
        return hold(ctx.stores[i % ctx.stores.length] as Store, accountId, amount, options(i));
      }));
    const passed = (results: HoldResult[]) => results.filter((r) => r.ok).length;

    it('a key family whose daily limit covers exactly 5 holds: of 30 concurrent holds exactly 5 pass, the rest are refused by the daily limit', async () => {
      const accountId = await account(ctx.store, { credits: 100_000_000 });
      const k = await key(ctx.store, accountId, { dailyLimit: 5 * 700_000, monthlyLimit: 100 * 700_000 });
      const results = await thirty(accountId, 700_000, () => ({ key: k }));
      expect(passed(results)).toBe(5);
      for (const r of results.filter((r) => !r.ok)) expect(r).toEqual({ ok: false, reason: 'key_limit', period: 'daily', limit: 3_500_000, used: 3_500_000 });
      expect(await ctx.store.keys.keyFamilyUsage(k.familyId, Date.now())).toEqual({ day: 3_500_000, month: 3_500_000 });
      expect(await ctx.store.accounts.getAccount(accountId)).toMatchObject({ held: 3_500_000 });
    });

    it('an account spending limit covering exactly 5 holds: of 30 concurrent holds exactly 5 pass', async () => {
      const accountId = await account(ctx.store, { credits: 100_000_000 });
      await ctx.store.accounts.updateAccount(accountId, { monthlySpendingLimit: 5 * 300_000 });
      const results = await thirty(accountId, 300_000);
      expect(passed(results)).toBe(5);
      for (const r of results.filter((r) => !r.ok)) expect(r).toEqual({ ok: false, reason: 'spending_limit', limit: 1_500_000, spent: 1_500_000 });
    });

    it('the spending limit counts this month\'s settled charges plus what is held; refunds free it', async () => {
      const accountId = await account(ctx.store, { credits: 100_000_000 });
      await ctx.store.accounts.updateAccount(accountId, { monthlySpendingLimit: 1_000_000 });
      const a = randomUUID();
      const b = randomUUID();
      expect((await hold(ctx.store, accountId, 600_000, { jobId: a })).ok).toBe(true);
      expect(await ctx.store.money.settle(a, { cost: 400_000, usage: {}, status: 'succeeded', at: Date.now() })).toBe(400_000);
      expect((await hold(ctx.store, accountId, 500_000, { jobId: b })).ok).toBe(true);
      expect(await hold(ctx.store, accountId, 100_001)).toEqual({ ok: false, reason: 'spending_limit', limit: 1_000_000, spent: 900_000 });
      await ctx.store.money.refund(b, { status: 'failed', errorCode: 'upstream_error', at: Date.now() });
      expect((await hold(ctx.store, accountId, 600_000)).ok).toBe(true);
      // Last month's charges do not count.
      const nextMonth = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 1, 2);
      const other = await account(ctx.store, { credits: 100_000_000 });
      await ctx.store.accounts.updateAccount(other, { monthlySpendingLimit: 1_000_000 });
      const c = randomUUID();
      await hold(ctx.store, other, 1_000_000, { jobId: c });
      await ctx.store.money.settle(c, { cost: 1_000_000, usage: {}, status: 'succeeded', at: Date.now() });
      expect((await hold(ctx.store, other, 1)).ok).toBe(false);
      expect((await hold(ctx.store, other, 1_000_000, { at: nextMonth })).ok).toBe(true);
    });

    it('credits come first: a hold over both the balance and a key limit is insufficient_credits', async () => {
      const accountId = await account(ctx.store, { credits: 1_000 });
      await ctx.store.accounts.updateAccount(accountId, { monthlySpendingLimit: 10 });
      const k = await key(ctx.store, accountId, { dailyLimit: 10 });
      expect(await hold(ctx.store, accountId, 2_000, { key: k })).toMatchObject({ reason: 'insufficient_credits', available: 1_000 });
      expect(await hold(ctx.store, accountId, 500, { key: k })).toMatchObject({ reason: 'spending_limit' });
      await ctx.store.accounts.updateAccount(accountId, { monthlySpendingLimit: null });
      expect(await hold(ctx.store, accountId, 500, { key: k })).toMatchObject({ reason: 'key_limit', period: 'daily' });
    });

    it('key usage: open holds at the amount held, settled at cost, refunded at 0; the monthly limit; an admin edit applies to the next hold', async () => {
      const accountId = await account(ctx.store, { credits: 100_000_000 });
      const k = await key(ctx.store, accountId, { monthlyLimit: 1_000_000 });
      const a = randomUUID();
      const b = randomUUID();
      await hold(ctx.store, accountId, 400_000, { key: k, jobId: a });
      await hold(ctx.store, accountId, 400_000, { key: k, jobId: b });
      expect(await hold(ctx.store, accountId, 300_000, { key: k })).toEqual({ ok: false, reason: 'key_limit', period: 'monthly', limit: 1_000_000, used: 800_000 });
      await ctx.store.money.settle(a, { cost: 100_000, usage: {}, status: 'succeeded', at: Date.now() });
      await ctx.store.money.refund(b, { status: 'canceled', errorCode: 'client_closed_request', at: Date.now() });
      expect(await ctx.store.keys.keyFamilyUsage(k.familyId, Date.now())).toEqual({ day: 100_000, month: 100_000 });
      expect((await hold(ctx.store, accountId, 300_000, { key: k })).ok).toBe(true);
      await ctx.store.keys.updateKey(k.id, { monthlyLimit: 500_000 });
      expect(await hold(ctx.store, accountId, 200_000, { key: k })).toMatchObject({ reason: 'key_limit', period: 'monthly', limit: 500_000, used: 400_000 });
      // Tomorrow the daily counter starts again; the month keeps counting.
      const k2 = await key(ctx.store, accountId, { dailyLimit: 500_000 });
      await hold(ctx.store, accountId, 500_000, { key: k2 });
      expect((await hold(ctx.store, accountId, 1, { key: k2 })).ok).toBe(false);
      expect((await hold(ctx.store, accountId, 500_000, { key: k2, at: Date.now() + DAY })).ok).toBe(true);
    });

    it('rotation carries usage (per family); runs that do not count toward key limits are neither checked nor counted', async () => {
      const accountId = await account(ctx.store, { credits: 100_000_000 });
      const old = await key(ctx.store, accountId, { dailyLimit: 1_000_000 });
      await hold(ctx.store, accountId, 800_000, { key: old });
      const rotated = { ...old, id: randomUUID(), hash: randomUUID(), createdAt: Date.now() };
      await ctx.store.keys.rotateKey(old.id, rotated, Date.now());
      expect(await hold(ctx.store, accountId, 300_000, { key: rotated })).toMatchObject({ reason: 'key_limit', used: 800_000 });
      expect((await hold(ctx.store, accountId, 5_000_000, { key: rotated, counts: false })).ok).toBe(true);
      expect(await ctx.store.keys.keyFamilyUsage(old.familyId, Date.now())).toEqual({ day: 800_000, month: 800_000 });
      expect((await hold(ctx.store, accountId, 200_000, { key: rotated })).ok).toBe(true);
    });

    it('usage counters equal what the jobs say, after a mixed concurrent load', async () => {
      const accountId = await account(ctx.store, { credits: 100_000_000 });
      const k = await key(ctx.store, accountId, { dailyLimit: 6_000_000 });
      const ids = Array.from({ length: 30 }, () => randomUUID());
      const results = await thirty(accountId, 400_000, (i) => ({ key: k, jobId: ids[i] }));
      const held = ids.filter((_, i) => results[i]?.ok === true);
      expect(held).toHaveLength(15);
      await Promise.all(held.map((id, i) => (i % 3 === 0
        ? (ctx.stores[i % 3] as Store).money.refund(id, { status: 'failed', errorCode: 'upstream_error', at: Date.now() })
        : i % 3 === 1 ? (ctx.stores[i % 3] as Store).money.settle(id, { cost: 123_456, usage: {}, status: 'succeeded', at: Date.now() }) : Promise.resolve(0))));
      const jobs = await ctx.store.jobs.listJobs(accountId, { limit: 100 });
      const fromJobs = jobs.reduce((sum, j) => sum + (j.status === 'processing' ? j.held : (j.cost ?? 0)), 0);
      expect(await ctx.store.keys.keyFamilyUsage(k.familyId, Date.now())).toEqual({ day: fromJobs, month: fromJobs });
      expect(fromJobs).toBe(5 * 123_456 + 5 * 400_000);
    });
  });

  describe(`trial rules on ${dialect.name}`, () => {
    const ctx = storesFor(dialect);
    const trial = (options: { createdAt?: number } = {}) => account(ctx.store, { credits: 50_000_000, purchase: false, ...options });
    const fail = (jobId: string, errorCode = 'upstream_error') => ctx.store.money.refund(jobId, { status: 'failed', errorCode, at: Date.now() });

    it(`a hold over ${TRIAL_RULES.maxHold} micro-credits is refused; a purchase lifts it`, async () => {
      const accountId = await trial();
      expect(await hold(ctx.store, accountId, TRIAL_RULES.maxHold + 1)).toEqual({ ok: false, reason: 'trial', rule: 'hold_too_large' });
      expect((await hold(ctx.store, accountId, TRIAL_RULES.maxHold)).ok).toBe(true);
      await ctx.store.accounts.addCredits(accountId, 1, 'topup', Date.now());
      expect((await hold(ctx.store, accountId, TRIAL_RULES.maxHold + 1)).ok).toBe(true);
    });

    it(`more than ${TRIAL_RULES.maxRunsPerDay} runs in 24 hours: of 30 concurrent holds exactly 5 pass; 24 hours after the first the next may run`, async () => {
      const accountId = await trial();
      const at = Date.now();
      const results = await Promise.all(Array.from({ length: 30 }, (_, i) => hold(ctx.stores[i % 3] as Store, accountId, 1_000, { at })));
      expect(results.filter((r) => r.ok)).toHaveLength(TRIAL_RULES.maxRunsPerDay);
      for (const r of results.filter((r) => !r.ok)) expect(r).toEqual({ ok: false, reason: 'trial', rule: 'runs_per_day' });
      expect((await hold(ctx.store, accountId, 1_000, { at: at + DAY - 1 })).ok).toBe(false);
      expect((await hold(ctx.store, accountId, 1_000, { at: at + DAY })).ok).toBe(true);
    });

    it(`${TRIAL_RULES.maxFailuresInARow} failures in a row refuse the next run; a client abort does not count, a billed run ends the series`, async () => {
      const accountId = await trial({ createdAt: Date.now() - 5 * DAY });
      // Earlier runs a day and more ago (so that "runs in 24 hours" stays out of the way).
      const earlier = Date.now() - DAY - 60_000;
      const ids = Array.from({ length: 4 }, () => randomUUID());
      for (const id of ids) expect((await hold(ctx.store, accountId, 1_000, { jobId: id, at: earlier })).ok).toBe(true);
      await fail(ids[0] as string);
      await fail(ids[1] as string);
      await ctx.store.money.refund(ids[2] as string, { status: 'canceled', errorCode: 'client_closed_request', at: Date.now() });
      await fail(ids[3] as string, 'internal_error'); // the gateway's fault, not the run's
      const third = randomUUID();
      expect((await hold(ctx.store, accountId, 1_000, { jobId: third })).ok).toBe(true);
      await fail(third);
      expect(await hold(ctx.store, accountId, 1_000)).toEqual({ ok: false, reason: 'trial', rule: 'failures_in_a_row' });

      const other = await trial();
      const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
      for (const id of [a, b, c]) await hold(ctx.store, other, 1_000, { jobId: id });
      await fail(a);
      await fail(b);
      await ctx.store.money.settle(c, { cost: 10, usage: {}, status: 'succeeded', at: Date.now() });
      const d = randomUUID();
      expect((await hold(ctx.store, other, 1_000, { jobId: d })).ok).toBe(true);
      await fail(d);
      expect((await hold(ctx.store, other, 1_000)).ok).toBe(true);
    });

    it(`more than ${TRIAL_RULES.maxRunsPerAddressPerDay} trial runs per client address in 24 hours, across accounts; purchasers do not count`, async () => {
      const address = '203.0.113.7';
      const accounts = await Promise.all(Array.from({ length: 10 }, () => trial()));
      const payer = await account(ctx.store, { credits: 10_000_000 });
      for (let i = 0; i < 5; i++) expect((await hold(ctx.store, payer, 1_000, { address })).ok).toBe(true);
      const results = await Promise.all(accounts.map((a, i) => hold(ctx.stores[i % 3] as Store, a, 1_000, { address })));
      expect(results.filter((r) => r.ok)).toHaveLength(TRIAL_RULES.maxRunsPerAddressPerDay);
      for (const r of results.filter((r) => !r.ok)) expect(r).toEqual({ ok: false, reason: 'trial', rule: 'runs_per_address' });
      // A refused run left nothing behind: no job, no ledger row, nothing held.
      for (const [i, r] of results.entries()) {
        if (r.ok) continue;
        expect(await ctx.store.accounts.getAccount(accounts[i] as string)).toMatchObject({ held: 0 });
        expect(await ctx.store.jobs.listJobs(accounts[i] as string, { limit: 10 })).toEqual([]);
      }
      // Another address, or none known, is not held back; nor is the same address a day later.
      expect((await hold(ctx.store, accounts[9] as string, 1_000, { address: '203.0.113.8' })).ok).toBe(true);
      expect((await hold(ctx.store, accounts[9] as string, 1_000, { address: null })).ok).toBe(true);
      expect((await hold(ctx.store, accounts[9] as string, 1_000, { address, at: Date.now() + DAY })).ok).toBe(true);
    });

    it('an account younger than 24 hours is refused; a grant does not lift the trial rules, a top-up does at once', async () => {
      const accountId = await trial({ createdAt: Date.now() - DAY + 60_000 });
      expect(await hold(ctx.store, accountId, 1_000)).toEqual({ ok: false, reason: 'trial', rule: 'account_too_new' });
      await ctx.store.accounts.addCredits(accountId, 1_000, 'grant', Date.now());
      expect(await hold(ctx.store, accountId, 1_000)).toMatchObject({ rule: 'account_too_new' });
      await ctx.store.accounts.addCredits(accountId, 1_000, 'topup', Date.now());
      expect((await hold(ctx.store, accountId, 1_000)).ok).toBe(true);
      expect(await ctx.store.jobs.listJobs(accountId, { limit: 10 })).toHaveLength(1);
    });
  });
}
