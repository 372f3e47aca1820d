/** GET /api/v1/key: the calling key's own settings and usage, for any valid key; nothing of other keys. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iso, startOfNextUtcDay, startOfNextUtcMonth } from '../src/shared/time.ts';
import { startChatHarness, type ChatHarness } from './helpers/chat.ts';

describe('GET /api/v1/key', () => {
  let h: ChatHarness;
  beforeAll(async () => {
    h = await startChatHarness();
  });
  afterAll(async () => h.close());

  it('answers the key\'s name, scopes, rpm, limits and usage with their reset instants', async () => {
    const { key, keyId } = await h.gw.account({ credits: 100, key: { name: 'budgeted', scopes: ['chat'], requests_per_minute: 120, daily_limit_credits: 5, monthly_limit_credits: 50 } });
    h.openai.enqueue({ kind: 'text', text: 'ok', usage: { input: 10, output: 1 } });
    expect((await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 100 } })).status).toBe(200);
    const r = await h.gw.api('/key', { key });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      object: 'api_key', id: keyId, name: 'budgeted', scopes: ['chat'], requests_per_minute: 120,
      daily_limit_credits: 5, monthly_limit_credits: 50, warning_threshold: 0.8,
      usage: { day_credits: (10 * 125 + 1000) / 1_000_000, month_credits: (10 * 125 + 1000) / 1_000_000, day_resets_at: iso(startOfNextUtcDay(Date.now())), month_resets_at: iso(startOfNextUtcMonth(Date.now())) },
    });
    expect(r.text).not.toContain(key);
    // It counts toward the window: the chat request and this one.
    expect(r.headers['x-ratelimit-limit']).toBe('120');
    expect(r.headers['x-ratelimit-remaining']).toBe('118');
  });

  it('an invalid key → 401 invalid_api_key', async () => {
    const r = await h.gw.api('/key', { key: `svc_live_${'0'.repeat(64)}` });
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe('invalid_api_key');
  });
});
