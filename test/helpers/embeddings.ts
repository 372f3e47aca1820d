/**
 * Embeddings test harness: the provider_1 emulator, a gateway on a fixture catalog
 * (the spec's two models at their shipped prices, one model that cannot shorten, an
 * unpriced one, one of a provider the route does not run, a chat and an image model),
 * the store double for limit refusals, and money read to the micro-credit.
 */
import { startEmulator } from '../../emulators/index.ts';
import type { Emulator } from '../../emulators/types.ts';
import { chatEntry, embeddingEntry, imageEntry, writeCatalog } from '../fixtures/catalog.ts';
import { startGateway, type TestGateway } from './gateway.ts';
import { storeDouble, type StoreDouble } from './store-double.ts';

/** USD 0.02 / 0.13 per 1M tokens = 2 / 13 micro-credits per token. */
export const SMALL_MICRO_PER_TOKEN = 2;
export const LARGE_MICRO_PER_TOKEN = 13;

export interface EmbeddingsHarness {
  gw: TestGateway;
  openai: Emulator;
  double: StoreDouble;
  close(): Promise<void>;
}

export async function startEmbeddingsHarness(env: Record<string, string> = {}): Promise<EmbeddingsHarness> {
  const openai = await startEmulator('openai');
  const double = await storeDouble();
  const catalog = writeCatalog([
    embeddingEntry('text-embedding-3-small'),
    embeddingEntry('text-embedding-3-large'),
    embeddingEntry('text-embedding-ada-002', { embedding: { dimensions: 1536, shortenable: false } }),
    embeddingEntry('embed-unpriced', { pricing: null }),
    embeddingEntry('qwen3-embedding-8b', { provider: 'provider_8', embedding: { dimensions: 4096, shortenable: true } }),
    chatEntry('gpt-test', 'provider_1'),
    imageEntry('pic-1'),
  ]);
  const gw = await startGateway(
    { CATALOG_FILE: catalog, PROVIDER_1_BASE_URL: openai.baseUrl, PROVIDER_1_API_KEY: openai.apiKey, ...env },
    { store: double.store },
  );
  return {
    gw,
    openai,
    double,
    async close() {
      await gw.close();
      await openai.close();
      await double.close();
    },
  };
}

export interface LedgerRow {
  kind: string;
  /** Micro-credits. */
  amount: number;
  job_id: string | null;
}

/** Balance, held and ledger of an account, in micro-credits, through the admin API. */
export async function moneyOf(gw: TestGateway, accountId: string): Promise<{ balance: number; held: number; ledger: LedgerRow[] }> {
  const account = (await gw.admin('GET', `/admin/v1/accounts/${accountId}`)).json as { balance_credits: number; held_credits: number };
  const rows = (await gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger?limit=all`)).json as { kind: string; credits: number; job_id: string | null }[];
  const micro = (credits: number) => Math.round(credits * 1_000_000);
  return {
    balance: micro(account.balance_credits),
    held: micro(account.held_credits),
    ledger: rows.map((r) => ({ kind: r.kind, amount: micro(r.credits), job_id: r.job_id })),
  };
}
