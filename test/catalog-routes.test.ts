/** GET /models and GET /models/{slug} on a catalog built for the test. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatEntry, imageEntry, writeCatalog } from './fixtures/catalog.ts';
import { startGateway, type TestGateway } from './helpers/gateway.ts';

const MODELS = [
  chatEntry('alpha-chat', 'provider_1', { is_featured: true }),
  chatEntry('beta-chat', 'provider_2'),
  chatEntry('old-chat', 'provider_1', { lifecycle: { status: 'deprecated', successor_slug: 'alpha-chat' } }),
  chatEntry('gone-chat', 'provider_1', { lifecycle: { status: 'removed', successor_slug: 'alpha-chat' } }),
  chatEntry('alias-chat', 'provider_1', { provider_model_id: 'alpha-chat-2026-01-01', lifecycle: { status: 'duplicate', duplicate_of: 'alpha-chat' } }),
  chatEntry('nokey-chat', 'provider_3'),
  imageEntry('pic-1', { is_featured: true, is_new: true }),
  imageEntry('pic-unpriced', { pricing: null }),
  imageEntry('pic-paused', { unavailable: { reason: 'Paused for maintenance.', use_instead: 'pic-1' } }),
  imageEntry('video-gpu', {
    category: 'video',
    pricing: { unit: 'per_gpu_second', usd_per_second: '0.0014', estimated_seconds: 120, hold_seconds: 300, basis: 'one 5 s clip on an A100' },
  }),
];

let gw: TestGateway;
beforeAll(async () => {
  // provider_3 has no key: nokey-chat is unavailable. The image models' host provider_5 has one.
  gw = await startGateway({ CATALOG_FILE: writeCatalog(MODELS), PROVIDER_1_API_KEY: 'k1', PROVIDER_2_API_KEY: 'k2', PROVIDER_5_API_KEY: 'k5' });
});
afterAll(async () => gw.close());

const ids = (json: { data: { id: string }[] }) => json.data.map((m) => m.id);

describe('GET /models', () => {
  it('lists available models by default (deprecated included) with total and has_more', async () => {
    const r = await gw.api('/models');
    expect(r.status).toBe(200);
    expect(r.json.object).toBe('list');
    expect(ids(r.json)).toEqual(['alpha-chat', 'beta-chat', 'old-chat', 'pic-1', 'video-gpu']);
    expect(r.json.total).toBe(5);
    expect(r.json.has_more).toBe(false);
    const old = r.json.data.find((m: { id: string }) => m.id === 'old-chat');
    expect(old.lifecycle).toEqual({ status: 'deprecated', successor_slug: 'alpha-chat', duplicate_of: null });
    const alpha = r.json.data[0];
    expect(alpha.lifecycle).toBeUndefined();
    expect(alpha.unavailable_reason).toBeUndefined();
    expect(alpha.use_instead).toBeUndefined();
    expect(alpha.long_description).toBeUndefined();
    expect(alpha.chat).toBeUndefined();
  });

  it('the model object has the spec fields and the pricing object', async () => {
    const r = await gw.api('/models?category=text&limit=1');
    expect(r.json.data[0]).toEqual({
      id: 'alpha-chat', object: 'model', created: 1767225600, owned_by: 'provider_1', name: 'alpha-chat',
      description: 'alpha-chat description', category: 'text', provider_model_id: 'alpha-chat-2026-01-01', image: null, available: true,
      pricing: {
        unit: 'per_token', usd: null, credits: null, basis: 'USD per 1M input and output tokens',
        input_usd_per_1m: 1.25, output_usd_per_1m: 10, input_credits_per_1m: 125, output_credits_per_1m: 1000,
        // No cache prices in this fixture: null, and cached tokens bill at the input price.
        cache_read_usd_per_1m: null, cache_read_credits_per_1m: null, cache_write_usd_per_1m: null, cache_write_credits_per_1m: null,
        cache_write_1h_usd_per_1m: null, cache_write_1h_credits_per_1m: null,
        currency: 'credits', credit_usd: 0.01, credit_cost_input_per_1k: 0.125, credit_cost_output_per_1k: 1, credit_cost_fixed: 0,
      },
      capabilities: { context_window: 128000, max_output_tokens: 16384, supported_formats: ['text'] },
      metadata: { tags: [], is_new: false, is_featured: true, avg_latency_ms: null, estimated_duration_seconds: null },
    });
  });

  it('per-call and GPU-time pricing', async () => {
    const pic = (await gw.api('/models/pic-1')).json.pricing;
    expect(pic).toMatchObject({ unit: 'per_image', usd: 0.04, credits: 4, basis: 'one 1024x1024 image', currency: 'credits', credit_usd: 0.01, credit_cost_fixed: 4 });
    const gpu = (await gw.api('/models/video-gpu')).json.pricing;
    // What a run holds: the estimate, capped by the limit (issue 33: was the 300 s limit, 0.42 USD).
    expect(gpu).toMatchObject({ unit: 'per_gpu_second', usd: 0.168, credits: 16.8, estimated_seconds: 120, hold_seconds: 300, hold_usd: 0.168, hold_credits: 16.8 });
  });

  it('filters: category, provider, featured', async () => {
    expect(ids((await gw.api('/models?category=image')).json)).toEqual(['pic-1']);
    expect(ids((await gw.api('/models?category=video')).json)).toEqual(['video-gpu']);
    expect(ids((await gw.api('/models?category=audio')).json)).toEqual([]);
    expect(ids((await gw.api('/models?provider=provider_2')).json)).toEqual(['beta-chat']);
    expect(ids((await gw.api('/models?featured=true')).json)).toEqual(['alpha-chat', 'pic-1']);
    expect(ids((await gw.api('/models?featured=false')).json)).toHaveLength(5);
    expect(ids((await gw.api('/models?provider=provider_1&category=text&featured=true')).json)).toEqual(['alpha-chat']);
  });

  it('include_unavailable adds each kind of unavailable model with reason and use_instead', async () => {
    const r = await gw.api('/models?include_unavailable=true');
    expect(r.json.total).toBe(MODELS.length);
    const byId = Object.fromEntries(r.json.data.map((m: { id: string }) => [m.id, m]));
    expect(byId['gone-chat']).toMatchObject({ available: false, unavailable_reason: expect.stringContaining('Removed'), use_instead: 'alpha-chat', lifecycle: { status: 'removed' } });
    expect(byId['alias-chat']).toMatchObject({ available: false, use_instead: 'alpha-chat', lifecycle: { status: 'duplicate', duplicate_of: 'alpha-chat', successor_slug: null } });
    expect(byId['pic-unpriced']).toMatchObject({ available: false, unavailable_reason: 'Not priced yet.' });
    expect(byId['pic-unpriced'].use_instead).toBeUndefined();
    expect(byId['pic-paused']).toMatchObject({ available: false, unavailable_reason: 'Paused for maintenance.', use_instead: 'pic-1' });
    expect(byId['nokey-chat']).toMatchObject({ available: false, unavailable_reason: expect.stringContaining('provider_3') });
    expect(byId['alpha-chat'].unavailable_reason).toBeUndefined();
  });

  it('pricing is always an object: an unpriced model shows its unit, null amounts and a basis saying so', async () => {
    const all = (await gw.api('/models?include_unavailable=true')).json.data as { id: string; pricing: Record<string, unknown> }[];
    expect(all).toHaveLength(MODELS.length);
    for (const m of all) {
      expect(typeof m.pricing, m.id).toBe('object');
      expect(m.pricing, m.id).not.toBeNull();
      expect(typeof m.pricing.unit, m.id).toBe('string');
      expect(m.pricing, m.id).toMatchObject({ currency: 'credits', credit_usd: 0.01 });
    }
    const unpriced = all.find((m) => m.id === 'pic-unpriced');
    expect(unpriced?.pricing).toEqual({
      unit: 'per_image', usd: null, credits: null, basis: 'Not priced yet: this model cannot run until it has a price.',
      currency: 'credits', credit_usd: 0.01, credit_cost_input_per_1k: null, credit_cost_output_per_1k: null, credit_cost_fixed: null,
    });
    expect((await gw.api('/models/pic-unpriced')).json.pricing).toEqual(unpriced?.pricing);
  });

  it('400 invalid_category and invalid_provider name the filter and list the allowed values', async () => {
    const c = await gw.api('/models?category=robots');
    expect(c.status).toBe(400);
    expect(c.json.error).toMatchObject({ code: 'invalid_category', type: 'invalid_request_error', param: 'category' });
    expect(c.json.error.message).toContain('text, image, video, audio, speech_tts, transcription_stt, embedding, code, multimodal, vla_robotics');
    const p = await gw.api('/models?provider=openai');
    expect(p.status).toBe(400);
    expect(p.json.error).toMatchObject({ code: 'invalid_provider', type: 'invalid_request_error', param: 'provider' });
    expect(p.json.error.message).toContain('provider_1, provider_2');
    expect(p.json.error.message).toContain('custom');
  });

  it('bad limit, offset and booleans are 400 with param', async () => {
    for (const [query, param] of [['limit=501', 'limit'], ['limit=-1', 'limit'], ['limit=abc', 'limit'], ['limit=1.5', 'limit'], ['offset=-3', 'offset'], ['featured=yes', 'featured'], ['include_unavailable=1', 'include_unavailable']]) {
      const r = await gw.api(`/models?${query}`);
      expect(r.status, query).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'invalid_request', param });
    }
  });

  it('limit and offset at the edges', async () => {
    const zero = await gw.api('/models?limit=0');
    expect(zero.json).toMatchObject({ data: [], total: 5, has_more: true });
    const two = await gw.api('/models?limit=2');
    expect(ids(two.json)).toEqual(['alpha-chat', 'beta-chat']);
    expect(two.json).toMatchObject({ total: 5, has_more: true });
    const last = await gw.api('/models?limit=2&offset=4');
    expect(ids(last.json)).toEqual(['video-gpu']);
    expect(last.json.has_more).toBe(false);
    const exact = await gw.api('/models?limit=2&offset=3');
    expect(exact.json.has_more).toBe(false);
    const past = await gw.api('/models?offset=99');
    expect(past.json).toMatchObject({ data: [], total: 5, has_more: false });
    const max = await gw.api('/models?limit=500');
    expect(max.status).toBe(200);
    expect(max.json.data).toHaveLength(5);
  });

  it('limit=500 returns at most 500 of a larger catalog', async () => {
    const many = Array.from({ length: 520 }, (_, i) => imageEntry(`img-${String(i).padStart(3, '0')}`));
    const big = await startGateway({ CATALOG_FILE: writeCatalog(many), PROVIDER_5_API_KEY: 'k5' });
    try {
      const page = await big.api('/models?limit=500');
      expect(page.json.data).toHaveLength(500);
      expect(page.json).toMatchObject({ total: 520, has_more: true });
      const rest = await big.api('/models?limit=500&offset=500');
      expect(rest.json.data).toHaveLength(20);
      expect(rest.json.has_more).toBe(false);
      const all = await big.api('/models');
      expect(all.json.data).toHaveLength(520);
    } finally {
      await big.close();
    }
  });

  it('ETag and Cache-Control; If-None-Match answers 304', async () => {
    const first = await gw.api('/models?category=text');
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^".+"$/);
    expect(first.headers['cache-control']).toContain('max-age');
    const again = await gw.api('/models?category=text', { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    const other = await gw.api('/models?category=image', { headers: { 'if-none-match': etag } });
    expect(other.status).toBe(200);
    const one = await gw.api('/models/alpha-chat');
    const oneAgain = await gw.api('/models/alpha-chat', { headers: { 'if-none-match': `W/${one.headers.etag as string}` } });
    expect(oneAgain.status).toBe(304);
  });
});

describe('GET /models/{slug}', () => {
  it('adds long_description, configuration and examples', async () => {
    const r = await gw.api('/models/alpha-chat');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      id: 'alpha-chat',
      long_description: 'alpha-chat long description',
      configuration: { input_schema: { type: 'object' }, default_params: { max_tokens: 4096 } },
      examples: [{ messages: [{ role: 'user', content: 'hi' }] }],
    });
    expect(r.json.chat).toBeUndefined();
  });

  it('answers unavailable slugs too, with available false', async () => {
    for (const slug of ['gone-chat', 'alias-chat', 'pic-unpriced', 'nokey-chat']) {
      const r = await gw.api(`/models/${slug}`);
      expect(r.status, slug).toBe(200);
      expect(r.json.available).toBe(false);
      expect(typeof r.json.unavailable_reason).toBe('string');
    }
  });

  it('a provider model id resolves; the canonical runnable slug wins over its duplicate', async () => {
    const r = await gw.api('/models/alpha-chat-2026-01-01');
    expect(r.status).toBe(200);
    expect(r.json.id).toBe('alpha-chat');
    expect((await gw.api('/models/beta-chat-2026-01-01')).json.id).toBe('beta-chat');
  });

  it('unknown slug → 404 model_not_found', async () => {
    const r = await gw.api('/models/no-such-model');
    expect(r.status).toBe(404);
    expect(r.json.error).toMatchObject({ code: 'model_not_found', type: 'not_found_error' });
  });
});

describe('key and no key', () => {
  it('without a key: public, not counted, no rate-limit headers', async () => {
    const { key } = await gw.account({ key: { requests_per_minute: 60 } });
    for (let i = 0; i < 65; i++) {
      const r = await gw.api('/models?limit=1');
      expect(r.status).toBe(200);
      expect(r.headers['x-ratelimit-limit']).toBeUndefined();
    }
    // The anonymous calls above did not touch the key's window.
    const withKey = await gw.api('/models?limit=1', { key });
    expect(withKey.status).toBe(200);
  });

  it('with a key: scope read needed, each call counts, still no rate-limit headers', async () => {
    const { key } = await gw.account({ key: { requests_per_minute: 60 } });
    for (let i = 0; i < 60; i++) {
      const r = await gw.api(i % 2 === 0 ? '/models?limit=1' : '/models/alpha-chat', { key });
      expect(r.status).toBe(200);
      expect(r.headers['x-ratelimit-limit']).toBeUndefined();
      expect(r.headers['x-ratelimit-remaining']).toBeUndefined();
    }
    const limited = await gw.api('/models?limit=1', { key });
    expect(limited.status).toBe(429);
    expect(limited.json.error.code).toBe('rate_limit_exceeded');
    expect(limited.headers['x-ratelimit-limit']).toBe('60');
  });

  it('the key-check call: 200 with one model, 401, 403 ip_not_allowed, 403 insufficient_scope', async () => {
    const ok = await gw.account();
    const check = await gw.api('/models?limit=1', { key: ok.key });
    expect(check.status).toBe(200);
    expect(check.json.data).toHaveLength(1);
    expect((await gw.api('/models?limit=1', { key: 'svc_live_' + 'e'.repeat(64) })).status).toBe(401);
    const ip = await gw.account({ key: { ip_allowlist: ['192.0.2.1'] } });
    expect((await gw.api('/models?limit=1', { key: ip.key })).json.error.code).toBe('ip_not_allowed');
    const scope = await gw.account({ key: { scopes: ['chat'] } });
    expect((await gw.api('/models?limit=1', { key: scope.key })).json.error.code).toBe('insufficient_scope');
  });
});
