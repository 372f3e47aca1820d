/** Catalog loading: a broken file stops start-up naming the entry and field. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Catalog, CatalogError } from '../src/catalog/catalog.ts';
import { chatProviderIds, PROVIDERS } from '../src/providers/descriptors.ts';
import { chatEntry, imageEntry, writeCatalog } from './fixtures/catalog.ts';

const run = promisify(execFile);
const options = { chatProviders: chatProviderIds(PROVIDERS), unrunnable: () => undefined, missingApiKey: () => undefined };

describe('catalog file validation', () => {
  it('a bad entry stops start-up with a message naming the entry and field', async () => {
    const file = writeCatalog([imageEntry('fine'), chatEntry('broken-model', 'provider_1', { pricing: { unit: 'per_token', input_usd_per_1m: 'cheap', output_usd_per_1m: '1' } })]);
    expect(() => Catalog.fromFile(file, options)).toThrow(CatalogError);
    expect(() => Catalog.fromFile(file, options)).toThrow(/entry 1 'broken-model', field pricing.input_usd_per_1m/);
    // The real start-up path: the process exits with that message.
    const started = await run(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
      env: { ...process.env, CATALOG_FILE: file, DATABASE_URL: 'sqlite::memory:', PORT: '0' },
    }).then(() => ({ code: 0, stderr: '' }), (error: { code: number; stderr: string }) => error);
    expect(started.code).toBe(2);
    expect(started.stderr).toContain("entry 1 'broken-model'");
    expect(started.stderr).toContain('pricing.input_usd_per_1m');
  });

  it('refuses dangling references, duplicate slugs and chat facts on non-chat providers', () => {
    expect(() => Catalog.fromJson({ prices_checked_at: '2026-11-22', models: [chatEntry('a', 'provider_1', { lifecycle: { status: 'deprecated', successor_slug: 'nope' } })] }, options))
      .toThrow(/entry 0 'a', field lifecycle.successor_slug: no model has slug 'nope'/);
    expect(() => Catalog.fromJson({ prices_checked_at: '2026-11-22', models: [imageEntry('a'), imageEntry('a')] }, options)).toThrow(/duplicate slug/);
    expect(() => Catalog.fromJson({ prices_checked_at: '2026-11-22', models: [chatEntry('a', 'provider_5')] }, options)).toThrow(/entry 0 'a', field chat/);
    expect(() => Catalog.fromJson({ prices_checked_at: '2026-11-22', models: [{ ...imageEntry('a'), secret_field: 1 }] }, options)).toThrow(/entry 0 'a'/);
  });

  it('deployments and fallbacks: chat models only, chat providers, no duplicate place, fallbacks that exist and are chat models', () => {
    const file = (models: unknown[]) => ({ prices_checked_at: '2026-11-22', models });
    const at = (provider: string, id: string, extra: Record<string, unknown> = {}) => ({ provider, provider_model_id: id, ...extra });
    const ok = Catalog.fromJson(file([
      chatEntry('split', 'provider_1', { deployments: [at('provider_1', 'x', { weight: 3 }), at('provider_7', 'y', { priority: 1 })], fallbacks: ['other'] }),
      chatEntry('other', 'provider_2'),
    ]), options);
    expect(ok.bySlug('split')?.entry.deployments).toEqual([
      { provider: 'provider_1', provider_model_id: 'x', weight: 3, priority: 0 },
      { provider: 'provider_7', provider_model_id: 'y', weight: 1, priority: 1 },
    ]);
    expect(() => Catalog.fromJson(file([chatEntry('a', 'provider_1', { deployments: [at('provider_5', 'x')] })]), options)).toThrow(/entry 0 'a', field deployments.0.provider: a deployment runs at one of/);
    expect(() => Catalog.fromJson(file([chatEntry('a', 'provider_1', { deployments: [at('provider_1', 'x'), at('provider_1', 'x')] })]), options)).toThrow(/field deployments.1: the same provider and provider_model_id twice/);
    expect(() => Catalog.fromJson(file([chatEntry('a', 'provider_1', { deployments: [at('provider_1', 'x', { weight: 0 })] })]), options)).toThrow(/entry 0 'a', field deployments.0.weight/);
    expect(() => Catalog.fromJson(file([chatEntry('a', 'provider_1', { deployments: [] })]), options)).toThrow(/field deployments/);
    expect(() => Catalog.fromJson(file([{ ...imageEntry('a'), deployments: [at('provider_1', 'x')] }]), options)).toThrow(/entry 0 'a', field deployments: only chat models have deployments/);
    expect(() => Catalog.fromJson(file([chatEntry('a', 'provider_1', { fallbacks: ['nope'] })]), options)).toThrow(/entry 0 'a', field fallbacks.0: no model has slug 'nope'/);
    expect(() => Catalog.fromJson(file([chatEntry('a', 'provider_1', { fallbacks: ['pic'] }), imageEntry('pic')]), options)).toThrow(/field fallbacks.0: 'pic' is not a chat model/);
    expect(() => Catalog.fromJson(file([chatEntry('a', 'provider_1', { fallbacks: ['a'] })]), options)).toThrow(/field fallbacks.0: a model is not its own fallback/);
    expect(() => Catalog.fromJson(file([chatEntry('a', 'provider_1', { fallbacks: ['b', 'b'] }), chatEntry('b', 'provider_2')]), options)).toThrow(/field fallbacks.1: 'b' is named twice/);
  });

  it('a model with deployments runs where any deployment has a key', () => {
    const models = [chatEntry('split', 'provider_1', { deployments: [{ provider: 'provider_1', provider_model_id: 'x' }, { provider: 'provider_7', provider_model_id: 'y' }] })];
    const keyedOnly = (provider: string) => Catalog.fromJson({ prices_checked_at: '2026-11-22', models }, { ...options, missingApiKey: (p) => (p === provider ? undefined : `${p.toUpperCase()}_API_KEY`) });
    expect(keyedOnly('provider_7').bySlug('split')?.available).toBe(true);
    const none = keyedOnly('provider_3').bySlug('split');
    expect(none?.available).toBe(false);
    expect(none?.unavailableReason).toBe('The gateway has no API key for provider_1 or provider_7: the operator must set PROVIDER_1_API_KEY or PROVIDER_7_API_KEY.');
  });

  it('image cost facts: each formula needs its parameters, and max_tokens covers the formula\'s largest image', () => {
    const withImages = (images: unknown) => ({ prices_checked_at: '2026-11-22', models: [chatEntry('v', 'provider_1', { chat: { params: [], json_schema: 'native', images, pdf: true } })] });
    expect(() => Catalog.fromJson(withImages({ formula: 'openai_tiles', max_tokens: 1445, tile_tokens: 170 }), options))
      .toThrow(/entry 0 'v', field chat.images.base_tokens: required by formula openai_tiles/);
    expect(() => Catalog.fromJson(withImages({ formula: 'openai_tiles', max_tokens: 1000, base_tokens: 85, tile_tokens: 170 }), options))
      .toThrow(/field chat.images.max_tokens: must be at least 1445/);
    expect(() => Catalog.fromJson(withImages({ formula: 'openai_patches', max_tokens: 2488, patch_multiplier: 1.62, max_patches: 1536 }), options))
      .toThrow(/field chat.images.max_tokens: must be at least 2489/);
    expect(() => Catalog.fromJson(withImages({ formula: 'openai_patches', max_tokens: 3000, max_patches: 2500 }), options)).toThrow(/chat.images.patch_multiplier: required/);
    // Files written before these fields existed still load: anthropic_pixels, gemini_tiles and flat need only max_tokens.
    for (const formula of ['anthropic_pixels', 'gemini_tiles', 'flat']) expect(() => Catalog.fromJson(withImages({ formula, max_tokens: 1600 }), options)).not.toThrow();
    expect(() => Catalog.fromJson(withImages({ formula: 'anthropic_pixels', max_tokens: 4784, max_long_edge: 2576, patch_px: 28 }), options)).not.toThrow();
  });

  it('cache prices: a file written with cached_input_usd_per_1m still loads (as the cache read price); both names at once is refused', () => {
    const priced = (pricing: Record<string, unknown>) => ({ prices_checked_at: '2026-11-22', models: [chatEntry('c', 'provider_2', { pricing: { unit: 'per_token', input_usd_per_1m: '3', output_usd_per_1m: '15', ...pricing } })] });
    const legacy = Catalog.fromJson(priced({ cached_input_usd_per_1m: '0.3' }), options).bySlug('c');
    expect(legacy?.entry.pricing).toEqual({ unit: 'per_token', input_usd_per_1m: '3', output_usd_per_1m: '15', cache_read_usd_per_1m: '0.3' });
    expect(legacy?.prices?.cacheReadMicroPerTokenScaled).toBe(30n * 10n ** 12n);
    expect(() => Catalog.fromJson(priced({ cached_input_usd_per_1m: '0.3', cache_read_usd_per_1m: '0.3' }), options)).toThrow(/entry 0 'c', field pricing/);
    expect(() => Catalog.fromJson(priced({ cache_write_usd_per_1m: 'dear' }), options)).toThrow(/field pricing.cache_write_usd_per_1m/);
    // A null or absent cache price bills those tokens at the input price.
    const none = Catalog.fromJson(priced({ cache_read_usd_per_1m: null }), options).bySlug('c')?.prices;
    expect([none?.cacheReadMicroPerTokenScaled, none?.cacheWriteMicroPerTokenScaled, none?.cacheWrite1hMicroPerTokenScaled]).toEqual(Array(3).fill(300n * 10n ** 12n));
  });
});
