/**
 * The prompt-cache test fixtures: one model per chat provider with known cache prices, and the
 * charge of a run worked out independently of the gateway (exact sum, rounded up once).
 */
import { chatEntry, type Entry } from '../fixtures/catalog.ts';

/**
 * Every cache model's prices, in hundredths of a micro-credit per token (USD per 1M × 10,000):
 * input 1.25, cache read 0.125, 5-minute write 1.5625, 1-hour write 2.5, output 10.
 */
export const CENTI_MICRO = { uncached: 12_500, read: 1_250, write5m: 15_625, write1h: 25_000, output: 100_000 };

/** A run's tokens by price; `output` counts reasoning too, as every provider bills it. */
export interface Parts {
  uncached: number;
  read: number;
  write5m: number;
  write1h: number;
  output: number;
  reasoning: number;
}

export const parts = (p: Partial<Parts>): Parts => ({ uncached: 0, read: 0, write5m: 0, write1h: 0, output: 0, reasoning: 0, ...p });
export const promptOf = (p: Parts) => p.uncached + p.read + p.write5m + p.write1h;

/** The charge to the micro-credit: the exact sum, rounded up once. A part the model has no price for is billed as uncached input. */
export function charge(p: Parts, priced: { write5m: boolean; write1h: boolean }): number {
  const write5m = priced.write5m ? CENTI_MICRO.write5m : CENTI_MICRO.uncached;
  const write1h = priced.write1h ? CENTI_MICRO.write1h : CENTI_MICRO.uncached;
  return Math.ceil((p.uncached * CENTI_MICRO.uncached + p.read * CENTI_MICRO.read + p.write5m * write5m + p.write1h * write1h + p.output * CENTI_MICRO.output) / 100);
}

const CACHE_PRICES = { unit: 'per_token', input_usd_per_1m: '1.25', output_usd_per_1m: '10', cache_read_usd_per_1m: '0.125' };

export const CACHE_MODELS: Entry[] = [
  chatEntry('gpt-cached', 'provider_1', {
    provider_model_id: 'gpt-6-cached-test',
    pricing: { ...CACHE_PRICES, cache_write_usd_per_1m: '1.5625', cache_write_1h_usd_per_1m: null },
    chat: { params: [], max_tokens_field: 'max_completion_tokens', developer_role: true, reasoning: true, json_schema: 'native', images: null, pdf: false },
  }),
  chatEntry('claude-cached', 'provider_2', {
    provider_model_id: 'claude-sonnet-5-5-cached-test',
    max_output_tokens: 64000,
    pricing: { ...CACHE_PRICES, cache_write_usd_per_1m: '1.5625', cache_write_1h_usd_per_1m: '2.5' },
    chat: { params: [], json_schema: 'native', images: null, pdf: false },
  }),
  chatEntry('gemini-cached', 'provider_3', {
    provider_model_id: 'gemini-3-cached-test',
    pricing: { ...CACHE_PRICES, cache_write_usd_per_1m: null },
    chat: { params: [], reasoning: true, json_schema: 'native', images: null, pdf: false },
  }),
  chatEntry('deepseek-cached', 'provider_7', {
    provider_model_id: 'deepseek-chat',
    max_output_tokens: 8192,
    pricing: CACHE_PRICES,
    chat: { params: [], json_schema: 'instruction', images: null, pdf: false },
  }),
];

