/**
 * RESPONSES_RETENTION_DAYS: a stored response is kept that long and no longer (a moving clock);
 * then retrieve, input items and previous_response_id answer 404 response_not_found. And the
 * route's gate and money answers: rate-limit headers on every answer after the key check, 402
 * when the hold does not fit, nothing charged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { money, startChatHarness, type ChatHarness } from './helpers/chat.ts';

const DAY = 86_400_000;
let clock = Date.now();
let h: ChatHarness;
beforeAll(async () => {
  h = await startChatHarness({ RESPONSES_RETENTION_DAYS: '2' }, [], { now: () => clock });
});
afterAll(async () => h.close());

describe('retention', () => {
  it('kept for RESPONSES_RETENTION_DAYS, then gone for retrieve, input items and continuing', async () => {
    const { key } = await h.gw.account();
    h.gemini.enqueue({ kind: 'text', text: 'Kept a while.' });
    const created = await h.gw.api('/responses', { key, body: { model: 'gemini-test', input: 'Remember this' } });
    expect(created.status, created.text).toBe(200);
    const id = created.json.id as string;
    clock += 2 * DAY - 1000;
    expect((await h.gw.api(`/responses/${id}`, { key })).status).toBe(200);
    clock += 2000;
    for (const path of [`/responses/${id}`, `/responses/${id}/input_items`]) {
      const r = await h.gw.api(path, { key });
      expect(r.status).toBe(404);
      expect(r.json.error.code).toBe('response_not_found');
    }
    const next = await h.gw.api('/responses', { key, body: { model: 'gemini-test', input: 'And now?', previous_response_id: id } });
    expect(next.status).toBe(404);
    expect(next.json.error).toMatchObject({ code: 'response_not_found', param: 'previous_response_id' });
    // The sweep deletes it from the store.
    expect(await h.gw.gateway.store.responses.deleteExpired(clock)).toBeGreaterThanOrEqual(1);
  });
});

describe('the gate and the money', () => {
  it('rate-limit headers on every answer after the key check: 200, 400, 404', async () => {
    const { key } = await h.gw.account();
    h.gemini.enqueue({ kind: 'text', text: 'ok' });
    const answers = [
      await h.gw.api('/responses', { key, body: { model: 'gemini-test', input: 'Hi', store: false } }),
      await h.gw.api('/responses', { key, body: { model: 'gemini-test' } }),
      await h.gw.api('/responses/resp_unknown', { key }),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 400, 404]);
    for (const r of answers) expect(r.headers['x-ratelimit-limit']).toBe('600');
  });

  it('a hold that does not fit → 402 insufficient_credits, nothing charged, no provider call', async () => {
    const { key, accountId } = await h.gw.account({ credits: 0.01 });
    const before = await money(h.gw, accountId);
    const calls = h.gemini.requests.length;
    const r = await h.gw.api('/responses', { key, body: { model: 'gemini-test', input: 'Hi', max_output_tokens: 60000 } });
    expect(r.status).toBe(402);
    expect(r.json.error.code).toBe('insufficient_credits');
    expect(r.json.error.message).toContain('max_output_tokens');
    expect(await money(h.gw, accountId)).toEqual(before);
    expect(h.gemini.requests.length).toBe(calls);
  });

  it('a key without scope chat → 403 insufficient_scope', async () => {
    const { key } = await h.gw.account({ key: { scopes: ['read'] } });
    const r = await h.gw.api('/responses', { key, body: { model: 'gemini-test', input: 'Hi' } });
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('insufficient_scope');
  });
});
