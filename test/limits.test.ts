/**
 * Limits that hold (spec "Credit limits per key", "Trial rules", the account monthly
 * spending limit): each refusal with its exact status, code, type and headers, the
 * ledger unchanged and the provider never called; concurrent runs never pass a limit.
 * On SQLite and on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iso, startOfNextUtcDay, startOfNextUtcMonth } from '../src/shared/time.ts';
import { money, startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { DATABASE_URLS } from './helpers/stores.ts';

const hi = [{ role: 'user', content: 'Hello there' }];
const body = { model: 'gpt-test', messages: hi, max_tokens: 1000 };
const DAY = 86_400_000;

for (const database of DATABASE_URLS) {
  describe(`on ${database.name}`, () => {
    describe('key credit limits and the monthly spending limit', () => {
      let h: ChatHarness;
      let db: { url: string; drop: () => Promise<void> };
      let hold: number;

      beforeAll(async () => {
        db = await database.open();
        h = await startChatHarness({ DATABASE_URL: db.url });
        // One run's hold, read from the ledger of a probe account.
        const probe = await h.gw.account({ credits: 100 });
        h.openai.enqueue({ kind: 'text', text: 'x' });
        expect((await h.gw.api('/chat/completions', { key: probe.key, body })).status).toBe(200);
        const ledger = (await h.gw.admin('GET', `/admin/v1/accounts/${probe.accountId}/ledger`)).json as { kind: string; credits: number }[];
        hold = Math.round((ledger.find((e) => e.kind === 'hold')?.credits ?? 0) * 1_000_000);
        expect(hold).toBeGreaterThan(1_000_000);
      });
      afterAll(async () => {
        await h.close();
        await db.drop();
      });

      async function ledgerKinds(accountId: string): Promise<string[]> {
        return ((await h.gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger`)).json as { kind: string }[]).map((e) => e.kind);
      }

      it('a run that would pass the key daily limit → 429 api_key_limit_exceeded with X-Key-Limit-Reset at the next 00:00 UTC; nothing charged, the provider not called', async () => {
        const { key, accountId } = await h.gw.account({ credits: 100, key: { daily_limit_credits: (hold - 1) / 1_000_000, requests_per_minute: 100 } });
        const calls = h.openai.requests.length;
        const before = await money(h.gw, accountId);
        const r = await h.gw.api('/chat/completions', { key, body });
        expect(r.status).toBe(429);
        expect(r.json.error).toMatchObject({ code: 'api_key_limit_exceeded', type: 'rate_limit_error', param: null });
        expect(r.headers['x-key-limit-reset']).toBe(iso(startOfNextUtcDay(Date.now())));
        // X-RateLimit-Reset on the same answer stays the requests-per-minute one.
        expect(r.headers['x-ratelimit-reset']).toBe('60');
        expect(r.headers['x-ratelimit-limit']).toBe('100');
        expect(r.headers['x-service-job-id']).toBeUndefined();
        expect(h.openai.requests.length).toBe(calls);
        expect(await money(h.gw, accountId)).toEqual(before);
        expect(await ledgerKinds(accountId)).toEqual(['topup']);
      });

      it('the monthly key limit → 429 with X-Key-Limit-Reset at the 1st of next month, 00:00 UTC', async () => {
        const { key } = await h.gw.account({ credits: 100, key: { monthly_limit_credits: (hold - 1) / 1_000_000 } });
        const r = await h.gw.api('/chat/completions', { key, body });
        expect(r.status).toBe(429);
        expect(r.json.error.code).toBe('api_key_limit_exceeded');
        expect(r.headers['x-key-limit-reset']).toBe(iso(startOfNextUtcMonth(Date.now())));
      });

      it('30 concurrent requests on a key whose daily limit covers exactly 5 runs: exactly 5 run', async () => {
        const { key, accountId } = await h.gw.account({ credits: 100, key: { daily_limit_credits: (5 * hold) / 1_000_000 } });
        h.openai.setDefault({ kind: 'text', text: 'ok', usage: { input: 10, output: 1 } }, { delayMs: 300 });
        const results = await Promise.all(Array.from({ length: 30 }, () => h.gw.api('/chat/completions', { key, body })));
        h.openai.setDefault(null);
        expect(results.filter((r) => r.status === 200)).toHaveLength(5);
        const refused = results.filter((r) => r.status === 429);
        expect(refused).toHaveLength(25);
        for (const r of refused) expect(r.json.error.code).toBe('api_key_limit_exceeded');
        expect((await ledgerKinds(accountId)).filter((k) => k === 'hold')).toHaveLength(5);
        expect((await money(h.gw, accountId)).held).toBe(0);
      });

      it('a limit edited through the admin API applies to the next request', async () => {
        const { key, keyId } = await h.gw.account({ credits: 100, key: { daily_limit_credits: (hold - 1) / 1_000_000 } });
        expect((await h.gw.api('/chat/completions', { key, body })).status).toBe(429);
        expect((await h.gw.admin('PATCH', `/admin/v1/keys/${keyId}`, { daily_limit_credits: null })).status).toBe(200);
        h.openai.enqueue({ kind: 'text', text: 'ok' });
        expect((await h.gw.api('/chat/completions', { key, body })).status).toBe(200);
        expect((await h.gw.admin('PATCH', `/admin/v1/keys/${keyId}`, { daily_limit_credits: 0.000001 })).status).toBe(200);
        expect((await h.gw.api('/chat/completions', { key, body })).status).toBe(429);
      });

      it('rotation: the usage carried to the new key keeps counting against its limits', async () => {
        const cost = 10 * 125 + 1000;
        // The limit covers one hold plus one run's cost: after one run, a second hold no longer fits.
        const { key, keyId } = await h.gw.account({ credits: 100, key: { daily_limit_credits: (hold + cost - 1) / 1_000_000 } });
        h.openai.enqueue({ kind: 'text', text: 'ok', usage: { input: 10, output: 1 } });
        expect((await h.gw.api('/chat/completions', { key, body })).status).toBe(200);
        const rotated = await h.gw.admin('POST', `/admin/v1/keys/${keyId}/rotate`);
        expect(rotated.status).toBe(201);
        const r = await h.gw.api('/chat/completions', { key: rotated.json.key as string, body });
        expect(r.status).toBe(429);
        expect(r.json.error.code).toBe('api_key_limit_exceeded');
      });

      it('the account monthly spending limit on chat → 402 spending_limit_reached (type insufficient_credits_error); nothing charged', async () => {
        const { key, accountId } = await h.gw.account({ credits: 100 });
        expect((await h.gw.admin('PATCH', `/admin/v1/accounts/${accountId}`, { monthly_spending_limit_credits: (hold - 1) / 1_000_000 })).status).toBe(200);
        const calls = h.openai.requests.length;
        const r = await h.gw.api('/chat/completions', { key, body });
        expect(r.status).toBe(402);
        expect(r.json.error).toMatchObject({ code: 'spending_limit_reached', type: 'insufficient_credits_error', param: null });
        expect(r.headers['x-ratelimit-limit']).toBeDefined();
        expect(h.openai.requests.length).toBe(calls);
        expect(await ledgerKinds(accountId)).toEqual(['topup']);
      });

      it('30 concurrent requests on an account whose spending limit covers exactly 5 runs: exactly 5 run', async () => {
        const { key, accountId } = await h.gw.account({ credits: 100 });
        await h.gw.admin('PATCH', `/admin/v1/accounts/${accountId}`, { monthly_spending_limit_credits: (5 * hold) / 1_000_000 });
        h.openai.setDefault({ kind: 'text', text: 'ok', usage: { input: 10, output: 1 } }, { delayMs: 300 });
        const results = await Promise.all(Array.from({ length: 30 }, () => h.gw.api('/chat/completions', { key, body })));
        h.openai.setDefault(null);
        expect(results.filter((r) => r.status === 200)).toHaveLength(5);
        expect(results.filter((r) => r.status === 402 && r.json.error.code === 'spending_limit_reached')).toHaveLength(25);
      });

      it('in the spec order: insufficient credits answers before the spending limit and the key limit', async () => {
        const { key, accountId } = await h.gw.account({ credits: (hold - 1) / 1_000_000, key: { daily_limit_credits: 0.000001 } });
        await h.gw.admin('PATCH', `/admin/v1/accounts/${accountId}`, { monthly_spending_limit_credits: 0.000001 });
        const r = await h.gw.api('/chat/completions', { key, body });
        expect(r.status).toBe(402);
        expect(r.json.error.code).toBe('insufficient_credits');
        await h.gw.admin('POST', `/admin/v1/accounts/${accountId}/credits`, { credits: 10, purchase: true });
        const spending = await h.gw.api('/chat/completions', { key, body });
        expect(spending.json.error.code).toBe('spending_limit_reached');
        await h.gw.admin('PATCH', `/admin/v1/accounts/${accountId}`, { monthly_spending_limit_credits: null });
        const keyLimit = await h.gw.api('/chat/completions', { key, body });
        expect(keyLimit.json.error.code).toBe('api_key_limit_exceeded');
      });
    });

    describe('trial rules (accounts without a purchase) → 429 trial_limit', () => {
      let h: ChatHarness;
      let db: { url: string; drop: () => Promise<void> };
      let nextAddress = 1;
      beforeAll(async () => {
        // Each test speaks from its own client address (through a trusted proxy), so the per-address rule is its own.
        db = await database.open();
        h = await startChatHarness({ TRUST_PROXY: '127.0.0.1,::1', DATABASE_URL: db.url });
      });
      afterAll(async () => {
        await h.close();
        await db.drop();
      });

      /** An account without a purchase: granted credits, created `ageMs` ago, and the address it speaks from. */
      async function trialAccount(ageMs = 2 * DAY, address = `203.0.113.${nextAddress++}`) {
        const created = await h.gw.admin('POST', '/admin/v1/accounts', { name: 'trial', created_at: new Date(Date.now() - ageMs).toISOString() });
        const accountId = created.json.id as string;
        await h.gw.admin('POST', `/admin/v1/accounts/${accountId}/credits`, { credits: 50, purchase: false });
        const key = (await h.gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { name: 'k' })).json.key as string;
        const chat = (requestBody: unknown = body) => h.gw.api('/chat/completions', { key, body: requestBody, headers: { 'x-forwarded-for': address } });
        return { accountId, key, address, chat };
      }

      async function expectTrialRefusal(chat: (requestBody?: unknown) => ReturnType<TestGatewayApi>, requestBody: unknown = body) {
        const calls = h.openai.requests.length;
        const r = await chat(requestBody);
        expect(r.status).toBe(429);
        expect(r.json.error).toMatchObject({ code: 'trial_limit', type: 'rate_limit_error', param: null });
        expect(h.openai.requests.length).toBe(calls);
      }

      async function ok(chat: (requestBody?: unknown) => ReturnType<TestGatewayApi>) {
        h.openai.enqueue({ kind: 'text', text: 'ok' });
        expect((await chat()).status).toBe(200);
      }

      it('an account younger than 24 hours; nothing is created', async () => {
        const a = await trialAccount(60_000);
        await expectTrialRefusal(a.chat);
        expect(((await h.gw.admin('GET', `/admin/v1/accounts/${a.accountId}/ledger`)).json as unknown[]).length).toBe(1);
      });

      it('a run whose hold is over 2 credits', async () => {
        const a = await trialAccount();
        await expectTrialRefusal(a.chat, { ...body, max_tokens: 3000 });
        await ok(a.chat);
      });

      it('more than 5 runs in 24 hours', async () => {
        const a = await trialAccount();
        for (let i = 0; i < 5; i++) await ok(a.chat);
        await expectTrialRefusal(a.chat);
      });

      it('3 failures in a row', async () => {
        const a = await trialAccount();
        for (let i = 0; i < 3; i++) {
          h.openai.enqueue({ kind: 'error', status: 500 });
          expect((await a.chat()).status).toBe(502);
        }
        await expectTrialRefusal(a.chat);
      });

      it('more than 8 trial runs per client address in 24 hours, across accounts', async () => {
        const a = await trialAccount();
        const b = await trialAccount(2 * DAY, a.address);
        const c = await trialAccount();
        for (let i = 0; i < 5; i++) await ok(a.chat);
        for (let i = 0; i < 3; i++) await ok(b.chat);
        await expectTrialRefusal(b.chat);
        // Another address is not affected.
        await ok(c.chat);
      });

      it('a purchase lifts the rules at once; a grant does not', async () => {
        const a = await trialAccount(60_000);
        await expectTrialRefusal(a.chat);
        await h.gw.admin('POST', `/admin/v1/accounts/${a.accountId}/credits`, { credits: 5, purchase: false });
        await expectTrialRefusal(a.chat);
        await h.gw.admin('POST', `/admin/v1/accounts/${a.accountId}/credits`, { credits: 5, purchase: true });
        await ok(a.chat);
      });
    });
  });
}

type TestGatewayApi = ChatHarness['gw']['api'];
