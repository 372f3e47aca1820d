/**
 * Embeddings money: the hold is a real token count of the inputs, the settlement the
 * provider's reported usage (to the micro-credit, float and base64 alike), and every
 * provider failure — a refused input, an answer without readable vectors, no answer in
 * time — is refunded in full, with the error's code, type and headers.
 */
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scenario, ScenarioOptions } from '../emulators/types.ts';
import { LARGE_MICRO_PER_TOKEN, moneyOf, SMALL_MICRO_PER_TOKEN, startEmbeddingsHarness, type EmbeddingsHarness } from './helpers/embeddings.ts';

const TIMEOUT_MS = 700;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let h: EmbeddingsHarness;
beforeAll(async () => {
  h = await startEmbeddingsHarness({ PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS) });
});
afterAll(async () => h.close());

/** One job's ledger rows, in order (the admin ledger is newest first). */
async function jobLedger(accountId: string, jobId: string) {
  const { ledger } = await moneyOf(h.gw, accountId);
  return ledger.filter((e) => e.job_id === jobId).reverse().map((e) => [e.kind, e.amount]);
}

describe('billing to the micro-credit', () => {
  it('float: holds the real token count, settles the reported usage (text-embedding-3-large, 13 micro-credits per token)', async () => {
    const { key, accountId } = await h.gw.account({ credits: 10, key: { scopes: ['embeddings'] } });
    const input = ['hello world', 'other'];
    const tokens = countTokens('hello world') + countTokens('other');
    expect(tokens).toBe(3);
    const r = await h.gw.api('/embeddings', { key, body: { model: 'text-embedding-3-large', input, encoding_format: 'float' } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ object: 'list', model: 'text-embedding-3-large', usage: { prompt_tokens: 3, total_tokens: 3 } });
    expect(r.json.data.map((d: { object: string; index: number }) => [d.object, d.index])).toEqual([['embedding', 0], ['embedding', 1]]);
    expect(r.json.data[0].embedding).toHaveLength(3072);
    expect(r.headers['x-job-id']).toMatch(UUID);
    expect(r.headers['x-ratelimit-limit']).toBe('600');
    expect(h.openai.requests.at(-1)?.body).toEqual({ model: 'text-embedding-3-large', input, encoding_format: 'float' });
    expect(await jobLedger(accountId, r.headers['x-job-id'] as string)).toEqual([['hold', 39], ['settle', 39]]);
    const after = await moneyOf(h.gw, accountId);
    expect(after.balance).toBe(10_000_000 - 3 * LARGE_MICRO_PER_TOKEN);
    expect(after.held).toBe(0);
  });

  it('base64: passed through unchanged; the provider reports fewer tokens than held and that is what is billed', async () => {
    const { key, accountId } = await h.gw.account({ credits: 10, key: { scopes: ['embeddings'] } });
    const text = 'The quick brown fox';
    expect(countTokens(text)).toBe(4);
    const floats = await h.gw.api('/embeddings', { key, body: { input: text } });
    h.openai.enqueue({ kind: 'embedding', usage: 3 });
    const r = await h.gw.api('/embeddings', { key, body: { input: text, encoding_format: 'base64', user: 'end-user-7' } });
    expect(r.status).toBe(200);
    expect(h.openai.requests.at(-1)?.body).toEqual({ model: 'text-embedding-3-small', input: text, encoding_format: 'base64', user: 'end-user-7' });
    const b64 = r.json.data[0].embedding as string;
    expect(typeof b64).toBe('string');
    const bytes = Buffer.from(b64, 'base64');
    expect(bytes.length).toBe(1536 * 4);
    const decoded = Array.from({ length: 1536 }, (_, i) => bytes.readFloatLE(i * 4));
    expect(decoded).toEqual(floats.json.data[0].embedding);
    expect(r.json.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    expect(await jobLedger(accountId, r.headers['x-job-id'] as string)).toEqual([['hold', 4 * SMALL_MICRO_PER_TOKEN], ['settle', 3 * SMALL_MICRO_PER_TOKEN]]);
    expect((await moneyOf(h.gw, accountId)).balance).toBe(10_000_000 - 4 * SMALL_MICRO_PER_TOKEN - 3 * SMALL_MICRO_PER_TOKEN);
  });

  it('no usage reported: about 4 characters per token, never above what was held', async () => {
    const { key, accountId } = await h.gw.account({ credits: 10, key: { scopes: ['embeddings'] } });
    h.openai.enqueue({ kind: 'embedding', usage: 'none' });
    // 19 characters ≈ 5 tokens, but 4 were counted and held: 4 are billed.
    const capped = await h.gw.api('/embeddings', { key, body: { input: 'The quick brown fox' } });
    expect(capped.json.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
    expect(await jobLedger(accountId, capped.headers['x-job-id'] as string)).toEqual([['hold', 8], ['settle', 8]]);
    h.openai.enqueue({ kind: 'embedding', usage: 'none' });
    // 'zyzzyvaphlegm' is 7 tokens (held) and 13 characters ≈ 4 tokens: 4 are billed.
    expect(countTokens('zyzzyvaphlegm')).toBe(7);
    const estimated = await h.gw.api('/embeddings', { key, body: { input: 'zyzzyvaphlegm' } });
    expect(estimated.json.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
    expect(await jobLedger(accountId, estimated.headers['x-job-id'] as string)).toEqual([['hold', 14], ['settle', 8]]);
  });

  it('token-id inputs are held one token each', async () => {
    const { key, accountId } = await h.gw.account({ credits: 10, key: { scopes: ['embeddings'] } });
    const r = await h.gw.api('/embeddings', { key, body: { model: 'text-embedding-3-large', input: [[9906, 1917], [1023, 2, 3]] } });
    expect(r.status).toBe(200);
    expect(r.json.data).toHaveLength(2);
    expect(r.json.usage).toEqual({ prompt_tokens: 5, total_tokens: 5 });
    expect(await jobLedger(accountId, r.headers['x-job-id'] as string)).toEqual([['hold', 65], ['settle', 65]]);
    const single = await h.gw.api('/embeddings', { key, body: { input: [9906, 1917, 0] } });
    expect(single.json.data).toHaveLength(1);
    expect(single.json.usage.prompt_tokens).toBe(3);
  });

  it('a long text is counted in pieces: the hold never undercounts, the settlement is the reported usage', async () => {
    const { key, accountId } = await h.gw.account({ credits: 10, key: { scopes: ['embeddings'] } });
    const text = 'lorem ipsum dolor sit amet '.repeat(1000);
    const r = await h.gw.api('/embeddings', { key, body: { input: text } });
    expect(r.status).toBe(200);
    const real = countTokens(text);
    expect(r.json.usage.prompt_tokens).toBe(real);
    const [[, held], [, settled]] = (await jobLedger(accountId, r.headers['x-job-id'] as string)) as [[string, number], [string, number]];
    expect(held).toBeGreaterThanOrEqual(real * SMALL_MICRO_PER_TOKEN);
    expect(held).toBeLessThanOrEqual((real + 2) * SMALL_MICRO_PER_TOKEN);
    expect(settled).toBe(real * SMALL_MICRO_PER_TOKEN);
  });
});

describe('provider failures: refunded in full, with rate-limit headers and X-Job-Id', () => {
  const failures: { name: string; scenario?: Scenario; options?: ScenarioOptions; body?: Record<string, unknown>; status: number; code: string; type: string; message?: string | RegExp }[] = [
    {
      name: 'the provider refuses an empty input → 400 provider_rejected_input, its message passed through',
      body: { input: ['fine', ''] },
      status: 400, code: 'provider_rejected_input', type: 'invalid_request_error',
      message: "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.",
    },
    {
      name: 'the provider refuses an input over its token limit → 400 provider_rejected_input',
      body: { input: 'word '.repeat(9000) },
      status: 400, code: 'provider_rejected_input', type: 'invalid_request_error', message: /^This model's maximum context length is 8192 tokens/,
    },
    {
      name: 'a 422 with a long message → provider_rejected_input, message cut to 500 characters',
      scenario: { kind: 'error', status: 422, body: { error: { message: 'x'.repeat(700), type: 'invalid_request_error' } } },
      status: 400, code: 'provider_rejected_input', type: 'invalid_request_error', message: 'x'.repeat(500),
    },
    { name: 'a provider 500 → 502 upstream_error', scenario: { kind: 'error', status: 500 }, status: 502, code: 'upstream_error', type: 'api_error' },
    // retry-after: 0, so the key does not rest into the next row; a refused key (which rests 5 minutes) is in test/routing-keys.test.ts.
    { name: 'a provider 429 → 429 upstream_rate_limited', scenario: { kind: 'error', status: 429, headers: { 'retry-after': '0' } }, status: 429, code: 'upstream_rate_limited', type: 'rate_limit_error' },
    { name: 'half an answer, then the connection closes → 502 upstream_error', scenario: { kind: 'cut', afterChunks: 0 }, status: 502, code: 'upstream_error', type: 'api_error' },
    {
      name: 'fewer vectors than inputs → 502 upstream_error',
      scenario: { kind: 'embedding', vectors: 1 }, body: { input: ['a', 'b'] },
      status: 502, code: 'upstream_error', type: 'api_error', message: 'The model provider sent an answer without readable vectors (1 vectors for 2 inputs). Nothing was charged; retry.',
    },
    {
      name: 'vectors of another size than asked → 502 upstream_error',
      scenario: { kind: 'embedding', dimensions: 8 }, body: { input: 'a', dimensions: 256 },
      status: 502, code: 'upstream_error', type: 'api_error', message: 'The model provider sent an answer without readable vectors (vector 0 is not 256 numbers). Nothing was charged; retry.',
    },
    {
      name: 'base64 that is not 1,536 float32 values → 502 upstream_error',
      scenario: { kind: 'error', status: 200, body: { object: 'list', data: [{ object: 'embedding', index: 0, embedding: 'AAAA' }], usage: { prompt_tokens: 1, total_tokens: 1 } } },
      body: { input: 'a', encoding_format: 'base64' },
      status: 502, code: 'upstream_error', type: 'api_error', message: /vector 0 is not 1536 base64 float32 values/,
    },
    {
      name: 'a 200 without a data list → 502 upstream_error',
      scenario: { kind: 'error', status: 200, body: { object: 'list', usage: { prompt_tokens: 1, total_tokens: 1 } } },
      status: 502, code: 'upstream_error', type: 'api_error', message: /no data list/,
    },
    {
      name: 'items with duplicate indexes → 502 upstream_error',
      scenario: { kind: 'error', status: 200, body: { data: [{ index: 0, embedding: [0.5] }, { index: 0, embedding: [0.5] }] } },
      body: { input: ['a', 'b'], dimensions: 1 },
      status: 502, code: 'upstream_error', type: 'api_error', message: /item indexes are not 0 … n−1/,
    },
    {
      name: 'no answer within PROVIDER_TIMEOUT_MS → 504 provider_timeout',
      scenario: { kind: 'hang' },
      status: 504, code: 'provider_timeout', type: 'api_error', message: 'The model provider gave no answer in time. Nothing was charged; retry.',
    },
    {
      name: 'an answer slower than PROVIDER_TIMEOUT_MS → 504 provider_timeout',
      scenario: { kind: 'embedding' }, options: { delayMs: TIMEOUT_MS * 3 },
      status: 504, code: 'provider_timeout', type: 'api_error',
    },
  ];

  for (const f of failures) {
    it(f.name, async () => {
      const { key, accountId } = await h.gw.account({ credits: 10, key: { scopes: ['embeddings'] } });
      const before = await moneyOf(h.gw, accountId);
      if (f.scenario !== undefined) h.openai.enqueue(f.scenario, f.options);
      const r = await h.gw.api('/embeddings', { key, body: f.body ?? { input: 'hello' } });
      expect(r.status).toBe(f.status);
      expect(r.json.error).toMatchObject({ code: f.code, type: f.type });
      expect(Object.keys(r.json.error).sort()).toEqual(['code', 'message', 'type']);
      if (typeof f.message === 'string') expect(r.json.error.message).toBe(f.message);
      else if (f.message !== undefined) expect(r.json.error.message).toMatch(f.message);
      expect(r.headers['x-ratelimit-remaining']).toBe('599');
      const jobId = r.headers['x-job-id'] as string;
      expect(jobId).toMatch(UUID);
      const rows = await jobLedger(accountId, jobId);
      expect(rows.map(([kind]) => kind)).toEqual(['hold', 'refund']);
      expect(rows[0]?.[1]).toBe(rows[1]?.[1]);
      const after = await moneyOf(h.gw, accountId);
      expect(after.balance).toBe(before.balance);
      expect(after.held).toBe(0);
    });
  }

  it('a slow answer within PROVIDER_TIMEOUT_MS is answered and billed', async () => {
    const { key } = await h.gw.account({ credits: 10, key: { scopes: ['embeddings'] } });
    h.openai.enqueue({ kind: 'embedding' }, { delayMs: TIMEOUT_MS / 3 });
    const r = await h.gw.api('/embeddings', { key, body: { input: 'hello' } });
    expect(r.status).toBe(200);
    expect(r.json.data[0].embedding).toHaveLength(1536);
  });

  it('a key revoked while its run waits → 401 invalid_api_key, refunded', async () => {
    const { key, keyId, accountId } = await h.gw.account({ credits: 10, key: { scopes: ['embeddings'] } });
    h.openai.enqueue({ kind: 'embedding' }, { delayMs: TIMEOUT_MS / 2 });
    const pending = h.gw.api('/embeddings', { key, body: { input: 'hello' } });
    await new Promise((r) => setTimeout(r, TIMEOUT_MS / 6));
    expect((await h.gw.admin('POST', `/admin/v1/keys/${keyId}/revoke`)).status).toBe(200);
    const r = await pending;
    expect(r.status).toBe(401);
    expect(r.json.error).toEqual({ message: 'Invalid API key', type: 'authentication_error', code: 'invalid_api_key' });
    const after = await moneyOf(h.gw, accountId);
    expect(after.balance).toBe(10_000_000);
    expect(after.ledger.map((e) => e.kind).sort()).toEqual(['hold', 'refund', 'topup']);
  });
});
