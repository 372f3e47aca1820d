/**
 * POST /api/v1/images/generations over real HTTP against the predictions emulator: the
 * answer (200 within MEDIA_SYNC_WAIT_MS, else 202), n all or none, strict validation,
 * model errors, host errors, and the balance before and after to the micro-credit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { money } from './helpers/chat.ts';
import { http } from './helpers/gateway.ts';
import { jobOf, ledgerKinds, RATE_HEADERS, settled, startMediaHarness, type MediaHarness } from './helpers/media-host.ts';

const PIC = 4_000_000;

describe('images: success', () => {
  let h: MediaHarness;
  beforeAll(async () => {
    h = await startMediaHarness();
  });
  afterAll(async () => h.close());

  it('one image within the wait → 200 {created, data:[{url}]} with X-Job-Id and rate-limit headers; billed one image exactly', async () => {
    const { key, accountId } = await h.gw.account({ credits: 100, key: { scopes: ['images'] } });
    const before = await money(h.gw, accountId);
    const r = await h.gw.api('/images/generations', { key, body: { model: 'pic', prompt: 'a red fox', seed: 7 } });
    expect(r.status).toBe(200);
    expect(Object.keys(r.json).sort()).toEqual(['created', 'data']);
    expect(r.json.created).toBeCloseTo(Date.now() / 1000, -1);
    expect(r.json.data).toHaveLength(1);
    const url = r.json.data[0].url as string;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\/[a-z0-9]+\/out-0\.png$/);
    expect((await http(url)).status).toBe(200);
    const jobId = r.headers['x-job-id'] as string;
    expect(jobId).toMatch(/^[0-9a-f-]{36}$/);
    for (const name of RATE_HEADERS) expect(r.headers[name]).toBeDefined();
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - PIC, held: 0 });
    expect(await ledgerKinds(h.gw, accountId, jobId)).toEqual(['hold', 'settle']);
    const { job, media } = await jobOf(h.gw, jobId);
    expect(job).toMatchObject({ kind: 'image', model: 'pic', status: 'succeeded', held: PIC, cost: PIC });
    expect(media).toMatchObject({ outputs: [url], usage: { images: 1 }, errorCode: null });
    // The host got the model's defaults and the client's inputs, never `model` or `n`, and was asked to wait.
    const create = h.host.requests.find((q) => q.method === 'POST' && q.path === '/v1/models/acme/pic/predictions');
    expect(create?.body).toEqual({ input: { size: '1024x1024', prompt: 'a red fox', seed: 7 } });
    expect(create?.headers.prefer).toBe('wait=2');
    expect(create?.headers.authorization).toBe('Bearer emu-key');
  });
});

describe('images: n, all or none', () => {
  let h: MediaHarness;
  beforeAll(async () => {
    h = await startMediaHarness();
  });
  afterAll(async () => h.close());

  it('n: 3 on a model without a count input → three predictions, three URLs, three images billed (the hold is 3 × the price)', async () => {
    const { key, accountId } = await h.gw.account({ credits: 100, key: { scopes: ['images'] } });
    h.host.reset();
    h.host.setDefault({ kind: 'prediction', durationMs: 150 });
    const pending = h.gw.api('/images/generations', { key, body: { model: 'pic', prompt: 'three foxes', n: 3 } });
    const held = await waitForHeld(h, accountId);
    expect(held).toBe(3 * PIC);
    const r = await pending;
    h.host.setDefault(null);
    expect(r.status).toBe(200);
    expect(r.json.data).toHaveLength(3);
    expect(new Set(r.json.data.map((d: { url: string }) => d.url)).size).toBe(3);
    expect(h.host.requests.filter((q) => q.method === 'POST')).toHaveLength(3);
    expect(await money(h.gw, accountId)).toEqual({ balance: 100_000_000 - 3 * PIC, held: 0 });
  });

  it('n: 2 on a model that takes n → one prediction asked for 2 outputs; 2 images billed', async () => {
    const { key, accountId } = await h.gw.account({ credits: 100, key: { scopes: ['images'] } });
    h.host.reset();
    const r = await h.gw.api('/images/generations', { key, body: { model: 'pic-batch', prompt: 'two cats', n: 2 } });
    expect(r.status).toBe(200);
    expect(r.json.data).toHaveLength(2);
    const creates = h.host.requests.filter((q) => q.method === 'POST');
    expect(creates).toHaveLength(1);
    expect(creates[0]?.body).toEqual({ input: { size: '1024x1024', prompt: 'two cats', n: 2 } });
    expect(await money(h.gw, accountId)).toEqual({ balance: 100_000_000 - 2 * 3_000_000, held: 0 });
  });

  it('one of three images fails → 502 upstream_error, no output, all refunded', async () => {
    const { key, accountId } = await h.gw.account({ credits: 100, key: { scopes: ['images'] } });
    h.host.reset();
    h.host.enqueue({ kind: 'prediction', durationMs: 100 });
    h.host.enqueue({ kind: 'prediction', durationMs: 20, fail: 'NSFW content detected' });
    h.host.enqueue({ kind: 'prediction', durationMs: 100 });
    const r = await h.gw.api('/images/generations', { key, body: { model: 'pic', prompt: 'x', n: 3 } });
    expect(r.status).toBe(502);
    expect(r.json.error).toMatchObject({ code: 'upstream_error', type: 'api_error' });
    expect(r.json.error.message).toContain('NSFW content detected');
    expect(r.json.data).toBeUndefined();
    for (const name of RATE_HEADERS) expect(r.headers[name]).toBeDefined();
    const jobId = r.headers['x-job-id'] as string;
    expect(await money(h.gw, accountId)).toEqual({ balance: 100_000_000, held: 0 });
    expect(await ledgerKinds(h.gw, accountId, jobId)).toEqual(['hold', 'refund']);
    const { job, media } = await jobOf(h.gw, jobId);
    expect(job).toMatchObject({ status: 'failed', errorCode: 'upstream_error', cost: 0 });
    expect(media).toMatchObject({ outputs: null, errorCode: 'upstream_error' });
  });

  it('a model asked for n: 2 that delivers one image → refunded in full, no output', async () => {
    const { key, accountId } = await h.gw.account({ credits: 100, key: { scopes: ['images'] } });
    h.host.enqueue({ kind: 'prediction', durationMs: 10, outputs: ['only.png'], outputShape: 'array' });
    const r = await h.gw.api('/images/generations', { key, body: { model: 'pic-batch', prompt: 'x', n: 2 } });
    expect(r.status).toBe(502);
    expect(r.json.error.message).toContain('delivered 1 of 2');
    expect(await money(h.gw, accountId)).toEqual({ balance: 100_000_000, held: 0 });
  });

  it('one create refused (429) → 429 upstream_rate_limited, refunded', async () => {
    const { key, accountId } = await h.gw.account({ credits: 100, key: { scopes: ['images'] } });
    h.host.enqueue({ kind: 'prediction', durationMs: 50 });
    h.host.enqueue({ kind: 'error', status: 429 });
    const r = await h.gw.api('/images/generations', { key, body: { model: 'pic', prompt: 'x', n: 2 } });
    expect(r.status).toBe(429);
    expect(r.json.error.code).toBe('upstream_rate_limited');
    expect(await money(h.gw, accountId)).toEqual({ balance: 100_000_000, held: 0 });
  });
});

describe('images: slower than the wait', () => {
  let h: MediaHarness;
  beforeAll(async () => {
    h = await startMediaHarness({ MEDIA_SYNC_WAIT_MS: '300' });
  });
  afterAll(async () => h.close());

  it('→ 202 {job_id, status: processing} with Location and X-Job-Id, no rate-limit headers; the job finishes in the background and is billed once', async () => {
    const { key, accountId } = await h.gw.account({ credits: 100, key: { scopes: ['images'] } });
    h.host.enqueue({ kind: 'prediction', durationMs: 1200 });
    const r = await h.gw.api('/images/generations', { key, body: { model: 'pic', prompt: 'slow fox' } });
    expect(r.status).toBe(202);
    expect(r.json).toEqual({ job_id: r.json.job_id, status: 'processing' });
    expect(r.headers.location).toBe(`/api/v1/jobs/${r.json.job_id}`);
    expect(r.headers['x-job-id']).toBe(r.json.job_id);
    for (const name of RATE_HEADERS) expect(r.headers[name]).toBeUndefined();
    expect((await jobOf(h.gw, r.json.job_id)).job?.status).toBe('processing');
    expect((await money(h.gw, accountId)).held).toBe(PIC);
    const { job, media } = await settled(h.gw, r.json.job_id);
    expect(job).toMatchObject({ status: 'succeeded', cost: PIC });
    expect(media?.outputs).toHaveLength(1);
    expect(await money(h.gw, accountId)).toEqual({ balance: 100_000_000 - PIC, held: 0 });
    expect(await ledgerKinds(h.gw, accountId, r.json.job_id)).toEqual(['hold', 'settle']);
  });

  it('n: 3 in the background, one image fails → the others are canceled at the host, all refunded, no output', async () => {
    const { key, accountId } = await h.gw.account({ credits: 100, key: { scopes: ['images'] } });
    h.host.reset();
    h.host.enqueue({ kind: 'prediction', durationMs: 5000 });
    h.host.enqueue({ kind: 'prediction', durationMs: 20, fail: 'NSFW content detected' });
    h.host.enqueue({ kind: 'prediction', durationMs: 5000 });
    const r = await h.gw.api('/images/generations', { key, body: { model: 'pic', prompt: 'x', n: 3 } });
    expect(r.status).toBe(202);
    const { job, media } = await settled(h.gw, r.json.job_id);
    expect(job).toMatchObject({ status: 'failed', errorCode: 'upstream_error' });
    expect(media).toMatchObject({ outputs: null });
    expect(h.host.requests.filter((q) => q.path.endsWith('/cancel'))).toHaveLength(2);
    expect(await money(h.gw, accountId)).toEqual({ balance: 100_000_000, held: 0 });
    expect(await ledgerKinds(h.gw, accountId, r.json.job_id)).toEqual(['hold', 'refund']);
  });

  it('n: 2 in the background, one create refused (429) after the other was made → the made one canceled, refunded', async () => {
    const { key, accountId } = await h.gw.account({ credits: 100, key: { scopes: ['images'] } });
    h.host.reset();
    h.host.enqueue({ kind: 'prediction', durationMs: 5000 });
    h.host.enqueue({ kind: 'error', status: 429 });
    const r = await h.gw.api('/images/generations', { key, body: { model: 'pic', prompt: 'x', n: 2 } });
    expect(r.status).toBe(202);
    const { job } = await settled(h.gw, r.json.job_id);
    expect(job).toMatchObject({ status: 'failed', errorCode: 'upstream_rate_limited' });
    expect(h.host.requests.filter((q) => q.path.endsWith('/cancel'))).toHaveLength(1);
    expect(await money(h.gw, accountId)).toEqual({ balance: 100_000_000, held: 0 });
  });

  it('a 202 job whose prediction then fails is refunded and records the host error', async () => {
    const { key, accountId } = await h.gw.account({ credits: 100, key: { scopes: ['images'] } });
    h.host.enqueue({ kind: 'prediction', durationMs: 700, fail: 'CUDA out of memory' });
    const r = await h.gw.api('/images/generations', { key, body: { model: 'pic', prompt: 'x' } });
    expect(r.status).toBe(202);
    const { job, media } = await settled(h.gw, r.json.job_id);
    expect(job).toMatchObject({ status: 'failed', errorCode: 'upstream_error' });
    expect(media?.errorMessage).toContain('CUDA out of memory');
    expect(await money(h.gw, accountId)).toEqual({ balance: 100_000_000, held: 0 });
  });
});

describe('images: refused before anything is held', () => {
  let h: MediaHarness;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    h = await startMediaHarness();
    ({ key, accountId } = await h.gw.account({ credits: 100, key: { scopes: ['images'] } }));
  });
  afterAll(async () => h.close());

  const refusals: [string, Record<string, unknown>, string | null, RegExp][] = [
    ['an unknown field', { model: 'pic', prompt: 'x', style: 'noir' }, 'style', /unknown field/],
    ['n above 10', { model: 'pic', prompt: 'x', n: 11 }, 'n', /10/],
    ['n of 0', { model: 'pic', prompt: 'x', n: 0 }, 'n', /1/],
    ['n not an integer', { model: 'pic', prompt: 'x', n: 1.5 }, 'n', /int/],
    ["n above the model's own maximum", { model: 'pic-batch', prompt: 'x', n: 5 }, 'n', /4/],
    ['no prompt', { model: 'pic' }, 'prompt', /string/],
    ['a value outside the enum', { model: 'pic', prompt: 'x', size: '4096x4096' }, 'size', /one of "1024x1024", "512x512"/],
    ['a wrong type', { model: 'pic', prompt: 'x', seed: 'seven' }, 'seed', /number/],
    ['an image to a model without an image input', { model: 'pic', prompt: 'x', image: 'https://example.com/a.png' }, 'image', /has no image input/],
    ['an image that is neither https nor a data URL', { model: 'pic-edit', prompt: 'x', image: 'ftp://example.com/a.png' }, 'image', /https URL or a base64 data URL/],
    ['no model', { prompt: 'x' }, 'model', /model slug/],
  ];

  it.each(refusals)('%s → 400 validation_failed naming the field, with details, no rate-limit headers, nothing held', async (_name, body, param, message) => {
    const r = await h.gw.api('/images/generations', { key, body });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'validation_failed', type: 'invalid_request_error', param });
    expect(r.json.error.details.formErrors).toEqual([]);
    expect(r.json.error.details.fieldErrors[param as string].join(' ')).toMatch(message);
    for (const name of RATE_HEADERS) expect(r.headers[name]).toBeUndefined();
  });

  it('a body that is not an object → 400 validation_failed with a form error', async () => {
    const r = await h.gw.api('/images/generations', { key, rawBody: '[1,2]' });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('validation_failed');
    expect(r.json.error.details.formErrors).toHaveLength(1);
  });

  it('unknown slug, a chat slug → 404 model_not_found; unpriced, removed, duplicate, a provider the route does not speak → 503 model_unavailable; no rate-limit headers', async () => {
    for (const model of ['no-such-model', 'chatty', 'clip']) {
      const r = await h.gw.api('/images/generations', { key, body: { model, prompt: 'x' } });
      expect(r.status, model).toBe(404);
      expect(r.json.error).toMatchObject({ code: 'model_not_found', param: 'model' });
      for (const name of RATE_HEADERS) expect(r.headers[name]).toBeUndefined();
    }
    for (const model of ['pic-unpriced', 'pic-gone', 'pic-alias', 'pic-chat-host']) {
      const r = await h.gw.api('/images/generations', { key, body: { model, prompt: 'x' } });
      expect(r.status, model).toBe(503);
      expect(r.json.error.code).toBe('model_unavailable');
      for (const name of RATE_HEADERS) expect(r.headers[name]).toBeUndefined();
    }
    const gone = await h.gw.api('/images/generations', { key, body: { model: 'pic-gone', prompt: 'x' } });
    expect(gone.json.error.message).toContain("Use 'pic' instead.");
  });

  it('a multimodal image model runs on the image route (its image input is sent to the host)', async () => {
    h.host.reset();
    const image = 'data:image/png;base64,iVBORw0KGgo=';
    const r = await h.gw.api('/images/generations', { key, body: { model: 'pic-edit', prompt: 'make it green', image } });
    expect(r.status).toBe(200);
    expect(h.host.requests[0]?.body).toEqual({ input: { prompt: 'make it green', image } });
  });

  it('a balance below n images → 402 insufficient_credits with rate-limit headers, nothing held', async () => {
    const poor = await h.gw.account({ credits: 10, key: { scopes: ['images'] } });
    const r = await h.gw.api('/images/generations', { key: poor.key, body: { model: 'pic', prompt: 'x', n: 3 } });
    expect(r.status).toBe(402);
    expect(r.json.error.code).toBe('insufficient_credits');
    expect(r.json.error.message).toContain('12 credits');
    for (const name of RATE_HEADERS) expect(r.headers[name]).toBeDefined();
    expect(r.headers['x-job-id']).toBeUndefined();
    expect(await money(h.gw, poor.accountId)).toEqual({ balance: 10_000_000, held: 0 });
  });

  it('a key without the images scope → 403 insufficient_scope, no rate-limit headers', async () => {
    const chatOnly = await h.gw.account({ credits: 10 });
    const r = await h.gw.api('/images/generations', { key: chatOnly.key, body: { model: 'pic', prompt: 'x' } });
    expect(r.status).toBe(403);
    expect(r.json.error.message).toBe("This API key lacks the 'images' scope");
    for (const name of RATE_HEADERS) expect(r.headers[name]).toBeUndefined();
  });

  it('nothing was held or charged for any refusal', async () => {
    expect(await money(h.gw, accountId)).toEqual({ balance: 100_000_000 - PIC, held: 0 });
  });
});

describe('images: host errors, each refunded in full', () => {
  let h: MediaHarness;
  beforeAll(async () => {
    h = await startMediaHarness({ PROVIDER_10_BASE_URL: 'http://127.0.0.1:9/v1', PROVIDER_10_API_KEY: 'k' }, [
      { ...(await import('./fixtures/catalog.ts')).imageEntry('pic-dead-host', { provider: 'provider_10', provider_model_id: 'acme/dead' }) },
    ]);
  });
  afterAll(async () => h.close());

  const cases: { name: string; host: number; status: number; code: string; message?: RegExp }[] = [
    { name: '422 (input refused) → 400 provider_rejected_request with its message', host: 422, status: 400, code: 'provider_rejected_request', message: /prompt is required/ },
    { name: '429 → 429 upstream_rate_limited', host: 429, status: 429, code: 'upstream_rate_limited' },
    { name: '500 → 502 upstream_error', host: 500, status: 502, code: 'upstream_error' },
    { name: '503 → 502 upstream_error', host: 503, status: 502, code: 'upstream_error' },
    { name: '401 (our key refused) → 503 model_unavailable', host: 401, status: 503, code: 'model_unavailable' },
    { name: '403 → 503 model_unavailable', host: 403, status: 503, code: 'model_unavailable' },
    { name: '404 (model unknown at the host) → 503 model_unavailable', host: 404, status: 503, code: 'model_unavailable' },
  ];

  it.each(cases)('$name, with rate-limit headers', async ({ host, status, code, message }) => {
    const { key, accountId } = await h.gw.account({ credits: 100, key: { scopes: ['images'] } });
    h.host.enqueue({ kind: 'error', status: host });
    const r = await h.gw.api('/images/generations', { key, body: { model: 'pic', prompt: 'x' } });
    expect(r.status).toBe(status);
    expect(r.json.error.code).toBe(code);
    if (message !== undefined) expect(r.json.error.message).toMatch(message);
    for (const name of RATE_HEADERS) expect(r.headers[name]).toBeDefined();
    expect(await money(h.gw, accountId)).toEqual({ balance: 100_000_000, held: 0 });
    expect(await ledgerKinds(h.gw, accountId, r.headers['x-job-id'] as string)).toEqual(['hold', 'refund']);
  });

  it('a host that cannot be reached → 502 upstream_error, refunded', async () => {
    const { key, accountId } = await h.gw.account({ credits: 100, key: { scopes: ['images'] } });
    const r = await h.gw.api('/images/generations', { key, body: { model: 'pic-dead-host', prompt: 'x' } });
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe('upstream_error');
    expect(await money(h.gw, accountId)).toEqual({ balance: 100_000_000, held: 0 });
  });

  it('a failed prediction → 502 upstream_error with the host reason, refunded', async () => {
    const { key, accountId } = await h.gw.account({ credits: 100, key: { scopes: ['images'] } });
    h.host.enqueue({ kind: 'prediction', durationMs: 30, fail: 'Prediction interrupted; please retry (code: PA)' });
    const r = await h.gw.api('/images/generations', { key, body: { model: 'pic', prompt: 'x' } });
    expect(r.status).toBe(502);
    expect(r.json.error.message).toContain('Prediction interrupted');
    expect(await money(h.gw, accountId)).toEqual({ balance: 100_000_000, held: 0 });
  });

  it('a prediction that succeeds without any output → 502 upstream_error, refunded', async () => {
    const { key, accountId } = await h.gw.account({ credits: 100, key: { scopes: ['images'] } });
    h.host.enqueue({ kind: 'prediction', durationMs: 10, outputs: [], outputShape: 'array' });
    const r = await h.gw.api('/images/generations', { key, body: { model: 'pic', prompt: 'x' } });
    expect(r.status).toBe(502);
    expect(await money(h.gw, accountId)).toEqual({ balance: 100_000_000, held: 0 });
  });
});

describe('images: the host gives no answer within the provider wait', () => {
  let h: MediaHarness;
  beforeAll(async () => {
    h = await startMediaHarness({ PROVIDER_TIMEOUT_MS: '400', MEDIA_SYNC_WAIT_MS: '2000' });
  });
  afterAll(async () => h.close());

  it('→ 504 provider_timeout, refunded in full', async () => {
    const { key, accountId } = await h.gw.account({ credits: 100, key: { scopes: ['images'] } });
    h.host.enqueue({ kind: 'hang' });
    const started = Date.now();
    const r = await h.gw.api('/images/generations', { key, body: { model: 'pic', prompt: 'x' } });
    expect(r.status).toBe(504);
    expect(r.json.error.code).toBe('provider_timeout');
    expect(Date.now() - started).toBeLessThan(1500);
    for (const name of RATE_HEADERS) expect(r.headers[name]).toBeDefined();
    expect(await money(h.gw, accountId)).toEqual({ balance: 100_000_000, held: 0 });
    expect((await jobOf(h.gw, r.headers['x-job-id'] as string)).job).toMatchObject({ status: 'failed', errorCode: 'provider_timeout' });
  });
});

describe('images: the key is revoked before the host has taken the run', () => {
  let h: MediaHarness;
  beforeAll(async () => {
    h = await startMediaHarness();
  });
  afterAll(async () => h.close());

  it('→ 401 invalid_api_key, refunded in full', async () => {
    const { key, keyId, accountId } = await h.gw.account({ credits: 100, key: { scopes: ['images'] } });
    h.host.enqueue({ kind: 'hang' });
    const pending = h.gw.api('/images/generations', { key, body: { model: 'pic', prompt: 'x' } });
    expect(await waitForHeld(h, accountId)).toBe(PIC);
    await h.gw.admin('POST', `/admin/v1/keys/${keyId}/revoke`);
    const r = await pending;
    expect(r.status).toBe(401);
    expect(r.json.error).toMatchObject({ code: 'invalid_api_key', message: 'Invalid API key' });
    expect(await money(h.gw, accountId)).toEqual({ balance: 100_000_000, held: 0 });
  });
});

async function waitForHeld(h: MediaHarness, accountId: string): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const { held } = await money(h.gw, accountId);
    if (held > 0) return held;
    await new Promise((r) => setTimeout(r, 10));
  }
  return 0;
}
