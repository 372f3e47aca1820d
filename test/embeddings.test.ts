/**
 * POST /embeddings: every field rule and refusal with its exact code, type, param,
 * details and headers, and nothing charged on any of them (balance and ledger before
 * and after, through the admin API).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpResponse } from './helpers/gateway.ts';
import { moneyOf, startEmbeddingsHarness, type EmbeddingsHarness } from './helpers/embeddings.ts';

let h: EmbeddingsHarness;
beforeAll(async () => {
  h = await startEmbeddingsHarness();
});
afterAll(async () => h.close());

const INPUT_RULE = 'input must be a string, an array of strings, an array of token ids, or an array of token-id arrays';

function expectRateHeaders(r: HttpResponse, present: boolean) {
  for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    if (present) expect(r.headers[name], name).toMatch(/^\d+$/);
    else expect(r.headers[name], name).toBeUndefined();
  }
}

/** Runs `send` and checks that the account's balance and ledger did not move at all. */
async function nothingCharged(accountId: string, send: () => Promise<HttpResponse>): Promise<HttpResponse> {
  const before = await moneyOf(h.gw, accountId);
  const r = await send();
  expect(await moneyOf(h.gw, accountId)).toEqual(before);
  return r;
}

describe('400 validation_failed: unknown or invalid fields, with param and details, no rate-limit headers', () => {
  const cases: { name: string; body: unknown; param: string | null; details: { formErrors: string[]; fieldErrors: Record<string, string[]> } }[] = [
    { name: 'an unknown field', body: { input: 'a', foo: 1 }, param: 'foo', details: { formErrors: [], fieldErrors: { foo: ['Unknown field.'] } } },
    { name: 'two unknown fields', body: { input: 'a', n: 2, extra: true }, param: 'n', details: { formErrors: [], fieldErrors: { n: ['Unknown field.'], extra: ['Unknown field.'] } } },
    { name: 'a field named like an Object property (was a 500)', body: JSON.parse('{"input":"a","constructor":null}') as Record<string, unknown>, param: 'constructor', details: { formErrors: [], fieldErrors: { constructor: ['Unknown field.'] } } },
    { name: 'input missing', body: { model: 'text-embedding-3-small' }, param: 'input', details: { formErrors: [], fieldErrors: { input: [`Required: ${INPUT_RULE}.`] } } },
    { name: 'input a number', body: { input: 42 }, param: 'input', details: { formErrors: [], fieldErrors: { input: [`${INPUT_RULE}.`] } } },
    { name: 'input an empty array', body: { input: [] }, param: 'input', details: { formErrors: [], fieldErrors: { input: ['input must hold at least one item.'] } } },
    { name: 'input mixing strings and numbers', body: { input: ['a', 'b', 1] }, param: 'input[2]', details: { formErrors: [], fieldErrors: { input: ['Expected a string, as the other items.'] } } },
    { name: 'input with a negative token id', body: { input: [[1, 2], [3, -1]] }, param: 'input[1][1]', details: { formErrors: [], fieldErrors: { input: ['Expected a token id (a non-negative integer).'] } } },
    { name: 'input with a fractional token id', body: { input: [5, 1.5] }, param: 'input[1]', details: { formErrors: [], fieldErrors: { input: ['Expected a token id (a non-negative integer), as the other items.'] } } },
    { name: 'input of objects', body: { input: [{ text: 'a' }] }, param: 'input[0]', details: { formErrors: [], fieldErrors: { input: [`${INPUT_RULE}.`] } } },
    { name: 'model not a string', body: { input: 'a', model: 42 }, param: 'model', details: { formErrors: [], fieldErrors: { model: ['Invalid input: expected string, received number'] } } },
    { name: 'encoding_format not float or base64', body: { input: 'a', encoding_format: 'int8' }, param: 'encoding_format', details: { formErrors: [], fieldErrors: { encoding_format: ['Invalid option: expected one of "float"|"base64"'] } } },
    { name: 'dimensions 0', body: { input: 'a', dimensions: 0 }, param: 'dimensions', details: { formErrors: [], fieldErrors: { dimensions: ['Too small: expected number to be >=1'] } } },
    { name: 'dimensions not an integer', body: { input: 'a', dimensions: 256.5 }, param: 'dimensions', details: { formErrors: [], fieldErrors: { dimensions: ['Invalid input: expected int, received number'] } } },
    { name: 'dimensions as text', body: { input: 'a', dimensions: '256' }, param: 'dimensions', details: { formErrors: [], fieldErrors: { dimensions: ['Invalid input: expected number, received string'] } } },
    { name: 'user over 512 characters', body: { input: 'a', user: 'u'.repeat(513) }, param: 'user', details: { formErrors: [], fieldErrors: { user: ['Too big: expected string to have <=512 characters'] } } },
    { name: 'a body that is not an object', body: ['a'], param: null, details: { formErrors: ['Invalid input: expected object, received array'], fieldErrors: {} } },
  ];
  for (const c of cases) {
    it(`${c.name} → 400 validation_failed, param ${String(c.param)}`, async () => {
      const { key, accountId } = await h.gw.account({ key: { scopes: ['embeddings'] } });
      const r = await nothingCharged(accountId, () => h.gw.api('/embeddings', { key, body: c.body }));
      expect(r.status).toBe(400);
      expect(r.json.error).toMatchObject({ type: 'invalid_request_error', code: 'validation_failed', param: c.param, details: c.details });
      expect(r.json.error.details).toEqual(c.details);
      expectRateHeaders(r, false);
      expect(r.headers['x-job-id']).toBeUndefined();
    });
  }

  it('null counts as not set on every optional field', async () => {
    const { key } = await h.gw.account({ key: { scopes: ['embeddings'] } });
    const r = await h.gw.api('/embeddings', { key, body: { input: 'a', model: null, encoding_format: null, dimensions: null, user: null } });
    expect(r.status).toBe(200);
    expect(r.json.model).toBe('text-embedding-3-small');
    expect(r.json.data[0].embedding).toHaveLength(1536);
  });

  it('a body that is not JSON → 400 invalid_json, no rate-limit headers', async () => {
    const { key } = await h.gw.account({ key: { scopes: ['embeddings'] } });
    const r = await h.gw.api('/embeddings', { key, rawBody: '{"input": ', headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('invalid_json');
    expectRateHeaders(r, false);
  });
});

describe('model lookup', () => {
  it('the default model is text-embedding-3-small', async () => {
    const { key } = await h.gw.account({ key: { scopes: ['embeddings'] } });
    const r = await h.gw.api('/embeddings', { key, body: { input: 'hello' } });
    expect(r.status).toBe(200);
    expect(r.json.model).toBe('text-embedding-3-small');
    expect(h.openai.requests.at(-1)?.body).toMatchObject({ model: 'text-embedding-3-small', input: 'hello', encoding_format: 'float' });
  });

  for (const model of ['no-such-model', 'gpt-test', 'pic-1']) {
    it(`'${model}' (unknown, or not an embedding model) → 404 model_not_found, no rate-limit headers, nothing charged`, async () => {
      const { key, accountId } = await h.gw.account({ key: { scopes: ['embeddings'] } });
      const r = await nothingCharged(accountId, () => h.gw.api('/embeddings', { key, body: { model, input: 'a' } }));
      expect(r.status).toBe(404);
      expect(r.json.error).toEqual({
        message: `The model '${model}' does not exist or is not an embedding model.`,
        type: 'not_found_error',
        code: 'model_not_found',
        param: 'model',
      });
      expectRateHeaders(r, false);
    });
  }

  it('an embedding model the route does not run → 400 validation_failed naming the allowed models', async () => {
    const { key, accountId } = await h.gw.account({ key: { scopes: ['embeddings'] } });
    const r = await nothingCharged(accountId, () => h.gw.api('/embeddings', { key, body: { model: 'qwen3-embedding-8b', input: 'a' } }));
    expect(r.status).toBe(400);
    const allowed = 'Allowed models: text-embedding-3-small, text-embedding-3-large, text-embedding-ada-002.';
    expect(r.json.error).toEqual({
      message: `model: 'qwen3-embedding-8b' does not run on the embeddings route. ${allowed}`,
      type: 'invalid_request_error',
      code: 'validation_failed',
      param: 'model',
      details: { formErrors: [], fieldErrors: { model: [allowed] } },
    });
    expectRateHeaders(r, false);
  });

  it('an unpriced embedding model → 503 model_unavailable with rate-limit headers, nothing charged', async () => {
    const { key, accountId } = await h.gw.account({ key: { scopes: ['embeddings'] } });
    const r = await nothingCharged(accountId, () => h.gw.api('/embeddings', { key, body: { model: 'embed-unpriced', input: 'a' } }));
    expect(r.status).toBe(503);
    expect(r.json.error).toMatchObject({ type: 'api_error', code: 'model_unavailable', param: 'model' });
    expectRateHeaders(r, true);
  });
});

describe('dimensions', () => {
  it('up to the model size is passed on and answered in that size; the model default otherwise', async () => {
    const { key } = await h.gw.account({ key: { scopes: ['embeddings'] } });
    for (const [model, dimensions, size] of [
      ['text-embedding-3-small', 1536, 1536],
      ['text-embedding-3-small', 64, 64],
      ['text-embedding-3-large', 3072, 3072],
      ['text-embedding-3-large', undefined, 3072],
    ] as const) {
      const r = await h.gw.api('/embeddings', { key, body: { model, input: 'hi', dimensions } });
      expect(r.status, `${model} ${String(dimensions)}`).toBe(200);
      expect(r.json.data[0].embedding).toHaveLength(size);
      expect((h.openai.requests.at(-1)?.body as { dimensions?: number }).dimensions).toBe(dimensions);
    }
  });

  for (const [model, max] of [['text-embedding-3-small', 1536], ['text-embedding-3-large', 3072]] as const) {
    it(`${model}: dimensions ${max + 1} → 400 invalid_value, param dimensions, nothing charged`, async () => {
      const { key, accountId } = await h.gw.account({ key: { scopes: ['embeddings'] } });
      const r = await nothingCharged(accountId, () => h.gw.api('/embeddings', { key, body: { model, input: 'a', dimensions: max + 1 } }));
      expect(r.status).toBe(400);
      const message = `dimensions is at most ${max} for '${model}'; ${max + 1} was asked.`;
      expect(r.json.error).toEqual({ message, type: 'invalid_request_error', code: 'invalid_value', param: 'dimensions', details: { formErrors: [], fieldErrors: { dimensions: [message] } } });
      expectRateHeaders(r, false);
    });
  }

  it('dimensions on a model that cannot be shortened → 400 unsupported_parameter, nothing charged', async () => {
    const { key, accountId } = await h.gw.account({ key: { scopes: ['embeddings'] } });
    const r = await nothingCharged(accountId, () => h.gw.api('/embeddings', { key, body: { model: 'text-embedding-ada-002', input: 'a', dimensions: 1536 } }));
    expect(r.status).toBe(400);
    const message = "The model 'text-embedding-ada-002' cannot shorten its vectors: leave out dimensions (its vectors have 1536).";
    expect(r.json.error).toEqual({ message, type: 'invalid_request_error', code: 'unsupported_parameter', param: 'dimensions', details: { formErrors: [], fieldErrors: { dimensions: [message] } } });
    expectRateHeaders(r, false);
    // Without dimensions it runs.
    expect((await h.gw.api('/embeddings', { key, body: { model: 'text-embedding-ada-002', input: 'a' } })).status).toBe(200);
  });
});

describe('413 too_many_embedding_values: more than 2,000,000 values (inputs × dimensions), before anything is charged', () => {
  it('1,303 inputs × 1,536 → 413 with rate-limit headers, nothing charged, the provider never called', async () => {
    const { key, accountId } = await h.gw.account({ key: { scopes: ['embeddings'] } });
    const calls = h.openai.requests.length;
    const r = await nothingCharged(accountId, () => h.gw.api('/embeddings', { key, body: { input: Array.from({ length: 1303 }, () => 'a') } }));
    expect(r.status).toBe(413);
    expect(r.json.error).toEqual({
      message: 'This request asks for 2,001,408 values (1303 inputs × 1536 dimensions); at most 2,000,000 per request. Nothing was charged: send fewer inputs per request or lower dimensions.',
      type: 'invalid_request_error',
      code: 'too_many_embedding_values',
    });
    expectRateHeaders(r, true);
    expect(r.headers['x-job-id']).toBeUndefined();
    expect(h.openai.requests.length).toBe(calls);
  });

  it('exactly 2,000,000 values pass the check (1,000 inputs × 2,000); more do not', async () => {
    // An account without credits: passing the values check shows as 402 insufficient_credits, nothing sent upstream.
    const { key } = await h.gw.account({ credits: 0, key: { scopes: ['embeddings'] } });
    const input = Array.from({ length: 1000 }, () => 'a');
    const at = await h.gw.api('/embeddings', { key, body: { model: 'text-embedding-3-large', input, dimensions: 2000 } });
    expect(at.json.error.code).toBe('insufficient_credits');
    const over = await h.gw.api('/embeddings', { key, body: { model: 'text-embedding-3-large', input, dimensions: 2001 } });
    expect(over.status).toBe(413);
    expect(over.json.error.message).toMatch(/^This request asks for 2,001,000 values \(1000 inputs × 2001 dimensions\)/);
  });

  it('smaller dimensions allow more inputs: 1,303 inputs × 1,000 run', async () => {
    const { key } = await h.gw.account({ key: { scopes: ['embeddings'] } });
    const r = await h.gw.api('/embeddings', { key, body: { input: Array.from({ length: 1303 }, (_, i) => `text ${i}`), dimensions: 1000, encoding_format: 'base64' } });
    expect(r.status).toBe(200);
    expect(r.json.data).toHaveLength(1303);
  });
});

describe('refusals of the hold (the paid-run core): 402 and 429, rate-limit headers, nothing charged', () => {
  it('a balance below the hold → 402 insufficient_credits', async () => {
    const { key, accountId } = await h.gw.account({ credits: 0.000001, key: { scopes: ['embeddings'] } });
    const r = await nothingCharged(accountId, () => h.gw.api('/embeddings', { key, body: { input: 'hello world, a few tokens' } }));
    expect(r.status).toBe(402);
    expect(r.json.error).toMatchObject({ type: 'insufficient_credits_error', code: 'insufficient_credits' });
    expect(r.json.error.message).toMatch(/^Insufficient credits: this request holds 0\.000012 credits \(the input tokens\) and 0\.000001 are available\. Top up, or send fewer or shorter inputs\.$/);
    expectRateHeaders(r, true);
    expect(r.headers['x-job-id']).toBeUndefined();
  });

  it('the monthly spending limit → 402 monthly_limit_exceeded, type spending_limit_error', async () => {
    const { key, accountId } = await h.gw.account({ key: { scopes: ['embeddings'] } });
    h.double.refuse(accountId, { reason: 'spending_limit', limit: 5_000_000, spent: 5_000_000 });
    const r = await nothingCharged(accountId, () => h.gw.api('/embeddings', { key, body: { input: 'hello' } }));
    h.double.allow(accountId);
    expect(r.status).toBe(402);
    expect(r.json.error).toEqual({
      message: "The account's monthly spending limit of 5 credits would be exceeded (5 spent or held this month; this request holds 0.000002).",
      type: 'spending_limit_error',
      code: 'monthly_limit_exceeded',
    });
    expectRateHeaders(r, true);
  });

  it("a key's daily credit limit → 429 api_key_limit_exceeded with X-Key-Limit-Reset", async () => {
    const { key, accountId } = await h.gw.account({ key: { scopes: ['embeddings'] } });
    h.double.refuse(accountId, { reason: 'key_limit', period: 'daily', limit: 1_000_000, used: 1_000_000 });
    const r = await nothingCharged(accountId, () => h.gw.api('/embeddings', { key, body: { input: 'hello' } }));
    h.double.allow(accountId);
    expect(r.status).toBe(429);
    expect(r.json.error).toMatchObject({ type: 'rate_limit_error', code: 'api_key_limit_exceeded' });
    const tomorrow = new Date();
    tomorrow.setUTCHours(24, 0, 0, 0);
    expect(r.headers['x-key-limit-reset']).toBe(tomorrow.toISOString());
    expectRateHeaders(r, true);
  });

  it('a trial rule → 429 trial_limit', async () => {
    const { key, accountId } = await h.gw.account({ key: { scopes: ['embeddings'] } });
    h.double.refuse(accountId, { reason: 'trial', rule: 'runs_per_day' });
    const r = await nothingCharged(accountId, () => h.gw.api('/embeddings', { key, body: { input: 'hello' } }));
    h.double.allow(accountId);
    expect(r.status).toBe(429);
    expect(r.json.error).toEqual({ message: 'Trial accounts may make at most 5 runs in 24 hours. A top-up lifts the trial rules.', type: 'rate_limit_error', code: 'trial_limit' });
    expectRateHeaders(r, true);
  });
});

describe('access', () => {
  it('scope embeddings is needed (403 insufficient_scope, no rate-limit headers on this route)', async () => {
    const { key } = await h.gw.account({ key: { scopes: ['read', 'chat', 'jobs'] } });
    const r = await h.gw.api('/embeddings', { key, body: { input: 'a' } });
    expect(r.status).toBe(403);
    expect(r.json.error).toEqual({ message: "This API key lacks the 'embeddings' scope", type: 'permission_error', code: 'insufficient_scope' });
    expectRateHeaders(r, false);
  });

  it('a validation error is counted (without headers); the next 200 shows remaining 58 on a 60-rpm key', async () => {
    const { key } = await h.gw.account({ key: { scopes: ['embeddings'], requests_per_minute: 60 } });
    expect((await h.gw.api('/embeddings', { key, body: { input: 'a', bad: 1 } })).status).toBe(400);
    const ok = await h.gw.api('/embeddings', { key, body: { input: 'a' } });
    expect(ok.status).toBe(200);
    expect(ok.headers['x-ratelimit-limit']).toBe('60');
    expect(ok.headers['x-ratelimit-remaining']).toBe('58');
    expect(ok.headers['x-ratelimit-reset']).toBe('60');
  });
});
