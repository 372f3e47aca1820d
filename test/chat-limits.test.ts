/**
 * The limits inside the hold, as a chat client sees them (spec "Credit limits per key",
 * "Trial rules", the Errors table) and as an operator reads the notifications, on SQLite and on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { DATABASE_URLS } from './helpers/stores.ts';

const body = { model: 'gpt-test', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 1000 };

for (const database of DATABASE_URLS) {
  describe(`on ${database.name}`, () => {
    describe('limits on chat', () => {
      let h: ChatHarness;
      let db: { url: string; drop: () => Promise<void> };
      beforeAll(async () => {
        db = await database.open();
        h = await startChatHarness({ DATABASE_URL: db.url });
        h.openai.setDefault({ kind: 'text', text: 'ok', usage: { input: 10, output: 1 } });
      });
      afterAll(async () => {
        await h.close();
        await db.drop();
      });

      it('a run that would pass the key\'s daily limit: 429 api_key_limit_exceeded with X-Key-Limit-Reset (next 00:00 UTC), nothing charged; the refusal is a limit_reached notification', async () => {
        const { key, keyId, accountId } = await h.gw.account({ key: { daily_limit_credits: 1.5, warning_threshold: 0.5 } });
        // The first run costs about one credit (its whole output); the second hold (about one credit) would pass 1.5.
        h.openai.enqueue({ kind: 'text', text: 'ok', usage: { input: 10, output: 1000 } });
        expect((await h.gw.api('/chat/completions', { key, body })).status).toBe(200);
        const before = (await h.gw.admin('GET', `/admin/v1/accounts/${accountId}`)).json;
        const refused = await h.gw.api('/chat/completions', { key, body });
        expect(refused.status).toBe(429);
        expect(refused.json.error).toMatchObject({ code: 'api_key_limit_exceeded', type: 'rate_limit_error' });
        const tomorrow = new Date();
        tomorrow.setUTCHours(24, 0, 0, 0);
        expect(refused.headers['x-key-limit-reset']).toBe(tomorrow.toISOString());
        expect(refused.headers['x-ratelimit-limit']).toBe('600');
        expect((await h.gw.admin('GET', `/admin/v1/accounts/${accountId}`)).json).toMatchObject({ balance_credits: before.balance_credits, held_credits: 0 });
        const notes = (await h.gw.admin('GET', `/admin/v1/accounts/${accountId}/notifications`)).json as Record<string, unknown>[];
        expect(notes.map((n) => n.kind).sort()).toEqual(['limit_reached', 'warning']);
        expect(notes[0]).toMatchObject({ key_id: keyId, limit: 'daily', emailed: false });
        expect(typeof notes[0]?.created_at).toBe('string');
      });

      it('the account\'s monthly spending limit: 402 spending_limit_reached', async () => {
        const { key, accountId } = await h.gw.account();
        await h.gw.admin('PATCH', `/admin/v1/accounts/${accountId}`, { monthly_spending_limit_credits: 0.5 });
        const refused = await h.gw.api('/chat/completions', { key, body });
        expect(refused.status).toBe(402);
        expect(refused.json.error).toMatchObject({ code: 'spending_limit_reached', type: 'insufficient_credits_error' });
      });

      it('a trial account (no purchase, younger than 24 hours): 429 trial_limit; a top-up lifts it at once', async () => {
        const { key, accountId } = await h.gw.account({ purchase: false });
        const refused = await h.gw.api('/chat/completions', { key, body });
        expect(refused.status).toBe(429);
        expect(refused.json.error.code).toBe('trial_limit');
        await h.gw.admin('POST', `/admin/v1/accounts/${accountId}/credits`, { credits: 1, purchase: true });
        expect((await h.gw.api('/chat/completions', { key, body })).status).toBe(200);
      });
    });
  });
}
