/** The shipped catalog holds what DECISIONS.md asks of it, and loads through the real start-up path. */
import { describe, expect, it } from 'vitest';
import { Catalog } from '../src/catalog/catalog.ts';
import { CATEGORIES } from '../src/catalog/catalog-file.ts';
import { DEFAULT_CATALOG_FILE, loadConfig } from '../src/config.ts';
import { defaultEmbeddingsAdapters } from '../src/providers/embeddings-registry.ts';
import { chatProviderIds, PROVIDERS } from '../src/providers/descriptors.ts';
import { catalogOptions } from '../src/runnable-models.ts';
import { costOf } from '../src/chat/chat-quote.ts';
import { startGateway } from './helpers/gateway.ts';

const CHAT_PROVIDERS = chatProviderIds(PROVIDERS);
/** Every provider and host with a key: what availability leaves out then is what no route runs. */
const everyKey = Object.fromEntries(['1', '2', '3', '4', '5', '6', '7', '9', '10', 'CUSTOM'].map((n) => [`PROVIDER_${n}_API_KEY`, 'k']));
const catalog = Catalog.fromFile(DEFAULT_CATALOG_FILE, catalogOptions(loadConfig(everyKey), defaultEmbeddingsAdapters()));
const entries = catalog.models.map((m) => m.entry);

describe('shipped catalog', () => {
  it('records when prices were checked', () => {
    expect(catalog.pricesCheckedAt).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('has at least one model of every category', () => {
    for (const category of CATEGORIES) expect(entries.some((e) => e.category === category), category).toBe(true);
  });

  it('each chat provider has an available text model', () => {
    for (const provider of CHAT_PROVIDERS) {
      expect(catalog.models.some((m) => m.entry.provider === provider && m.entry.category === 'text' && m.entry.chat !== undefined && m.available), provider).toBe(true);
    }
  });

  it('has every pricing unit the spec names', () => {
    const units = new Set(entries.map((e) => e.pricing?.unit));
    for (const unit of ['per_token', 'per_image', 'per_video', 'per_output', 'per_second_of_output', 'per_1000_characters', 'per_gpu_second']) expect(units.has(unit as never), unit).toBe(true);
  });

  it('has the special entries: deprecated, removed, duplicate, unpriced, unavailable with use_instead, a text model no chat provider serves', () => {
    expect(entries.some((e) => e.lifecycle?.status === 'deprecated' && e.lifecycle.successor_slug !== undefined)).toBe(true);
    expect(entries.some((e) => e.lifecycle?.status === 'removed')).toBe(true);
    expect(entries.some((e) => e.lifecycle?.status === 'duplicate')).toBe(true);
    expect(entries.some((e) => e.pricing === null)).toBe(true);
    expect(catalog.models.some((m) => m.entry.unavailable !== undefined && m.useInstead !== undefined)).toBe(true);
    expect(entries.some((e) => e.category === 'text' && e.chat === undefined)).toBe(true);
    expect(entries.some((e) => e.chat !== undefined && e.provider_model_id !== e.slug && e.lifecycle === undefined)).toBe(true);
  });

  it('ships both provider_1 embedding models at their sizes', () => {
    expect(catalog.bySlug('text-embedding-3-small')?.entry.embedding).toEqual({ dimensions: 1536, shortenable: true });
    expect(catalog.bySlug('text-embedding-3-large')?.entry.embedding).toEqual({ dimensions: 3072, shortenable: true });
  });

  it('a transcription model takes a language (SeamlessM4T type)', () => {
    expect(entries.some((e) => e.category === 'transcription_stt' && JSON.stringify(e.configuration.input_schema).includes('language'))).toBe(true);
  });

  it('every model, listed or not, answers a pricing object (null amounts for an unpriced one)', async () => {
    const gw = await startGateway({ PROVIDER_1_API_KEY: 'k1', PROVIDER_2_API_KEY: 'k2', PROVIDER_3_API_KEY: 'k3', PROVIDER_7_API_KEY: 'k7' });
    try {
      const listed = (await gw.api('/models?limit=500')).json.data as { id: string; pricing: unknown }[];
      const all = (await gw.api('/models?include_unavailable=true&limit=500')).json.data as { id: string; pricing: { unit?: unknown; usd?: unknown } }[];
      expect(all).toHaveLength(entries.length);
      expect(all.length).toBeGreaterThan(listed.length);
      for (const m of all) {
        expect(m.pricing !== null && typeof m.pricing === 'object', m.id).toBe(true);
        expect(typeof m.pricing.unit, m.id).toBe('string');
      }
      for (const e of entries.filter((x) => x.pricing === null)) {
        const shown = all.find((m) => m.id === e.slug);
        expect(shown?.pricing, e.slug).toMatchObject({ usd: null, credits: null, credit_cost_input_per_1k: null, credit_cost_output_per_1k: null, credit_cost_fixed: null });
        expect((await gw.api(`/models/${e.slug}`)).json.pricing.unit, e.slug).toEqual(shown?.pricing.unit);
      }
    } finally {
      await gw.close();
    }
  });

  it('GET /models/{slug} shows the cache prices of every priced chat model, equal to its catalog entry (null where the provider has none)', async () => {
    const gw = await startGateway({ PROVIDER_1_API_KEY: 'k1', PROVIDER_2_API_KEY: 'k2', PROVIDER_3_API_KEY: 'k3', PROVIDER_7_API_KEY: 'k7' });
    try {
      const chat = entries.filter((e) => e.chat !== undefined && e.pricing !== null);
      expect(chat.length).toBeGreaterThan(20);
      const fields = ['cache_read', 'cache_write', 'cache_write_1h'] as const;
      for (const e of chat) {
        const pricing = e.pricing as Record<string, string | null | undefined>;
        const shown = (await gw.api(`/models/${e.slug}`)).json.pricing as Record<string, unknown>;
        // Every chat provider caches prompts and has a read price.
        expect(pricing.cache_read_usd_per_1m, e.slug).toMatch(/^\d/);
        for (const field of fields) {
          const usd = pricing[`${field}_usd_per_1m`];
          expect(shown[`${field}_usd_per_1m`], `${e.slug} ${field}`).toBe(usd === null || usd === undefined ? null : Number(usd));
          expect(shown[`${field}_credits_per_1m`], `${e.slug} ${field}`).toBe(usd === null || usd === undefined ? null : Math.round(Number(usd) * 100 * 1e9) / 1e9);
        }
        // Cheaper reads, dearer writes: a cache price on the wrong side of the input price is a typo.
        const input = Number(pricing.input_usd_per_1m);
        expect(Number(pricing.cache_read_usd_per_1m), e.slug).toBeLessThan(input);
        for (const write of [pricing.cache_write_usd_per_1m, pricing.cache_write_1h_usd_per_1m]) if (typeof write === 'string') expect(Number(write), e.slug).toBeGreaterThan(input);
        // Provider_2 publishes both write lifetimes; the others have no 1-hour write.
        if (e.provider === 'provider_2') expect([typeof pricing.cache_write_usd_per_1m, typeof pricing.cache_write_1h_usd_per_1m], e.slug).toEqual(['string', 'string']);
        else expect(shown.cache_write_1h_usd_per_1m, e.slug).toBeNull();
      }
    } finally {
      await gw.close();
    }
  });

  it('the worked examples of docs/catalog.md and docs/api/billing.md hold at the shipped prices', () => {
    const prices = (slug: string) => {
      const p = catalog.bySlug(slug)?.prices;
      if (p === undefined) throw new Error(`${slug} has no prices`);
      return p;
    };
    const sonnet = prices('claude-sonnet-4-5');
    expect(costOf(sonnet, { promptTokens: 20_120, completionTokens: 850, cacheWrite5mTokens: 16_000, cacheWrite1hTokens: 4_000 })).toBe(9_711_000);
    expect(costOf(sonnet, { promptTokens: 20_150, completionTokens: 600, cacheReadTokens: 20_000 })).toBe(1_545_000);
    expect(costOf(sonnet, { promptTokens: 20_150, completionTokens: 600 })).toBe(6_945_000);
    expect(costOf(prices('deepseek-flash'), { promptTokens: 10_000, completionTokens: 431, cacheReadTokens: 9_873 })).toBe(61_454);
  });
});
