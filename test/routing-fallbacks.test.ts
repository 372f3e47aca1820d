/**
 * Fallback models (DECISIONS.md "Routing"): the request's `models` list (else the catalog's
 * `fallbacks`) runs in order when a model's attempts fail or it cannot run; one hold, the
 * largest candidate's; billed at the prices of the model that answered, which
 * `system_fingerprint` and the job record name, while `model` echoes the request.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chatEntry } from './fixtures/catalog.ts';
import { chatGatewayEnv, costMicro, money, startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { ADMIN_TOKEN, http, startGateway, type TestGateway } from './helpers/gateway.ts';

const hi = [{ role: 'user', content: 'Hello there' }];
/** claude-pricey: USD 2.5 / 20 per 1M tokens = 250 / 2,000 micro-credits per token (twice the fixture price). */
const pricey = (prompt: number, completion: number) => prompt * 250 + completion * 2000;

const EXTRA = [
  chatEntry('claude-pricey', 'provider_2', {
    provider_model_id: 'claude-pricey-test',
    max_output_tokens: 64000,
    pricing: { unit: 'per_token', input_usd_per_1m: '2.5', output_usd_per_1m: '20' },
    chat: { params: [], json_schema: 'native', images: null, pdf: false },
  }),
  // A model with a catalog fallback on another provider.
  chatEntry('gpt-with-backup', 'provider_1', { provider_model_id: 'gpt-with-backup-id', fallbacks: ['deepseek-test'] }),
];

let h: ChatHarness;
let gw: TestGateway;
beforeAll(async () => {
  h = await startChatHarness({}, EXTRA);
  gw = await startGateway({ ...chatGatewayEnv(h, EXTRA), UPSTREAM_RETRIES: '1', UPSTREAM_BACKOFF_MS: '1', METRICS_TOKEN: ADMIN_TOKEN });
});
afterAll(async () => {
  await gw.close();
  await h.close();
});
beforeEach(() => {
  for (const e of [h.openai, h.deepseek, h.anthropic, h.gemini]) e.reset();
});

async function chat(key: string, body: Record<string, unknown>) {
  return gw.api('/chat/completions', { key, body });
}

async function ledgerOf(accountId: string, jobId: string): Promise<{ kind: string; credits: number }[]> {
  const ledger = (await gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger`)).json as { kind: string; credits: number; job_id: string }[];
  return ledger.filter((e) => e.job_id === jobId);
}

describe("the request's models list", () => {
  it("the model's attempts fail → the next model (another provider) answers, billed at its price, system_fingerprint naming it, model echoed", async () => {
    const { key, accountId } = await gw.account();
    const before = await money(gw, accountId);
    h.openai.failFirst(2, 500);
    h.anthropic.enqueue({ kind: 'text', text: 'From the fallback', usage: { input: 20, output: 5 } });
    const r = await chat(key, { model: 'gpt-test', models: ['claude-pricey'], messages: hi });
    expect(r.status).toBe(200);
    expect(r.json.model).toBe('gpt-test');
    expect(r.json.system_fingerprint).toBe('svc-claude-pricey');
    expect(r.json.choices[0].message.content).toBe('From the fallback');
    expect(r.json.usage).toEqual({ prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 });
    expect(h.openai.requests).toHaveLength(2);
    expect(h.anthropic.requests).toHaveLength(1);
    expect((h.anthropic.requests[0]?.body as { model: string }).model).toBe('claude-pricey-test');
    // Billed once, at claude-pricey's prices (not gpt-test's).
    expect(await money(gw, accountId)).toEqual({ balance: before.balance - pricey(20, 5), held: 0 });
    expect(pricey(20, 5)).not.toBe(costMicro(20, 5));
    const jobId = r.headers['x-service-job-id'] as string;
    const job = await gw.gateway.store.jobs.getJob(jobId);
    expect(job?.model).toBe('claude-pricey');
    expect(job?.attempts?.map((a) => [a.model, a.provider, a.status, a.retry])).toEqual([
      ['gpt-test', 'provider_1', 500, 'failed'],
      ['gpt-test', 'provider_1', 500, 'fallback'],
      ['claude-pricey', 'provider_2', 200, undefined],
    ]);
    expect((await ledgerOf(accountId, jobId)).map((e) => e.kind).sort()).toEqual(['hold', 'settle']);
    const metrics = (await http(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text;
    expect(metrics).toMatch(/gateway_fallbacks_total\{model="claude-pricey"\} [1-9]/);
  });

  it("one hold across attempts: the largest candidate's (the same as claude-pricey's alone)", async () => {
    const { key, accountId } = await gw.account();
    const alone = await chat(key, { model: 'claude-pricey', messages: hi, max_tokens: 1000 });
    const both = await chat(key, { model: 'gpt-test', models: ['claude-pricey'], messages: hi, max_tokens: 1000 });
    expect([alone.status, both.status]).toEqual([200, 200]);
    const holdOf = async (r: typeof alone) => (await ledgerOf(accountId, r.headers['x-service-job-id'] as string)).filter((e) => e.kind === 'hold').map((e) => e.credits);
    const [aloneHold] = await holdOf(alone);
    expect(await holdOf(both)).toEqual([aloneHold]);
    // gpt-test answered the second run: billed at its own (lower) price, from that one hold.
    expect(both.json.system_fingerprint).toBe('svc-gpt-test');
    expect((await money(gw, accountId)).held).toBe(0);
  });

  it('a stream falls back before its first byte: the answer streams from the fallback, billed at its price', async () => {
    const { key, accountId } = await gw.account();
    const before = await money(gw, accountId);
    h.deepseek.failFirst(2, 503);
    h.anthropic.enqueue({ kind: 'text', text: 'one two three', chunks: 3, usage: { input: 8, output: 3 } });
    const r = await chat(key, { model: 'deepseek-test', models: ['claude-pricey'], messages: hi, stream: true, stream_options: { include_usage: true } });
    expect(r.status).toBe(200);
    expect(r.text).toContain('"system_fingerprint":"svc-claude-pricey"');
    expect(r.text).toContain('"model":"deepseek-test"');
    expect(r.text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(await money(gw, accountId)).toEqual({ balance: before.balance - pricey(8, 3), held: 0 });
  });

  it('a model that cannot run now (no price) → the next one runs', async () => {
    const { key, accountId } = await gw.account();
    const before = await money(gw, accountId);
    h.deepseek.enqueue({ kind: 'text', text: 'ok', usage: { input: 4, output: 1 } });
    const r = await chat(key, { model: 'gpt-unpriced', models: ['deepseek-test'], messages: hi });
    expect(r.status).toBe(200);
    expect(r.json.model).toBe('gpt-unpriced');
    expect(r.json.system_fingerprint).toBe('svc-deepseek-test');
    expect(h.openai.requests).toHaveLength(0);
    expect(await money(gw, accountId)).toEqual({ balance: before.balance - costMicro(4, 1), held: 0 });
  });

  it('a refusal of the request (400) is answered: no fallback runs', async () => {
    const { key, accountId } = await gw.account();
    const before = await money(gw, accountId);
    h.openai.failFirst(1, 400);
    const r = await chat(key, { model: 'gpt-test', models: ['claude-pricey'], messages: hi });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('provider_rejected_request');
    expect(h.anthropic.requests).toHaveLength(0);
    expect(await money(gw, accountId)).toEqual(before);
  });

  it('every candidate fails → the last error, refunded in full', async () => {
    const { key, accountId } = await gw.account();
    const before = await money(gw, accountId);
    h.openai.failFirst(2, 500);
    h.anthropic.failFirst(2, 529);
    const r = await chat(key, { model: 'gpt-test', models: ['claude-pricey'], messages: hi });
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe('upstream_error');
    expect(h.openai.requests).toHaveLength(2);
    expect(h.anthropic.requests).toHaveLength(2);
    expect(await money(gw, accountId)).toEqual(before);
  });

  it('an unknown model in models → 404 model_not_found naming it, nothing held; more than 8 → 400', async () => {
    const { key, accountId } = await gw.account();
    const before = await money(gw, accountId);
    const r = await chat(key, { model: 'gpt-test', models: ['claude-pricey', 'no-such-model'], messages: hi });
    expect(r.status).toBe(404);
    expect(r.json.error).toMatchObject({ code: 'model_not_found', param: 'models[1]' });
    const many = await chat(key, { model: 'gpt-test', models: Array.from({ length: 9 }, () => 'claude-pricey'), messages: hi });
    expect(many.status).toBe(400);
    expect(many.json.error).toMatchObject({ code: 'invalid_request', param: 'models' });
    expect(await money(gw, accountId)).toEqual(before);
    expect(h.openai.requests).toHaveLength(0);
  });
});

describe("the catalog's fallbacks", () => {
  it("a model's catalog fallback runs when its attempts fail", async () => {
    const { key, accountId } = await gw.account();
    const before = await money(gw, accountId);
    h.openai.failFirst(2, 502);
    h.deepseek.enqueue({ kind: 'text', text: 'backup', usage: { input: 6, output: 2 } });
    const r = await chat(key, { model: 'gpt-with-backup', messages: hi });
    expect(r.status).toBe(200);
    expect(r.json.model).toBe('gpt-with-backup');
    expect(r.json.system_fingerprint).toBe('svc-deepseek-test');
    expect(await money(gw, accountId)).toEqual({ balance: before.balance - costMicro(6, 2), held: 0 });
  });

  it("the request's models list replaces the catalog's fallbacks", async () => {
    const { key } = await gw.account();
    h.openai.failFirst(2, 500);
    const r = await chat(key, { model: 'gpt-with-backup', models: ['gemini-test'], messages: hi });
    expect(r.status).toBe(200);
    expect(r.json.system_fingerprint).toBe('svc-gemini-test');
    expect(h.deepseek.requests).toHaveLength(0);
  });
});
