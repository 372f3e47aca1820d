/**
 * Chat test harness: provider emulators (in this process), a gateway pointed at them
 * with a fixture catalog of known prices, and money read to the micro-credit.
 */
import { startEmulator } from '../../emulators/index.ts';
import type { Emulator } from '../../emulators/types.ts';
import { chatEntry, imageEntry, writeCatalog, type Entry } from '../fixtures/catalog.ts';
import type { GatewayOverrides } from '../../src/gateway.ts';
import { startGateway, type TestGateway } from './gateway.ts';

/** Prices of every fixture chat model: USD 1.25 / 10 per 1M tokens = 125 / 1,000 micro-credits per token. */
export const INPUT_MICRO_PER_TOKEN = 125;
export const OUTPUT_MICRO_PER_TOKEN = 1000;

export function chatCatalog(extra: Entry[] = []): Entry[] {
  return [
    chatEntry('gpt-test', 'provider_1', {
      provider_model_id: 'gpt-test-2026-01-01',
      chat: { params: ['temperature', 'top_p', 'frequency_penalty', 'presence_penalty', 'logit_bias'], json_schema: 'native', images: { formula: 'flat', max_tokens: 1000, low_detail_tokens: 85 }, pdf: true },
    }),
    chatEntry('gpt-reasoner', 'provider_1', {
      max_output_tokens: 100000,
      chat: { params: ['reasoning_effort', 'verbosity'], max_tokens_field: 'max_completion_tokens', developer_role: true, reasoning: true, json_schema: 'native', images: null, pdf: false },
    }),
    chatEntry('deepseek-test', 'provider_7', {
      provider_model_id: 'deepseek-chat',
      max_output_tokens: 8192,
      chat: { params: ['temperature', 'top_p', 'frequency_penalty', 'presence_penalty'], json_schema: 'instruction', images: null, pdf: false },
    }),
    // provider_2, a newer model: native JSON schema, thinking (reasoning), forced tool_choice as an instruction.
    chatEntry('claude-test', 'provider_2', {
      provider_model_id: 'claude-sonnet-5-5-test',
      max_output_tokens: 64000,
      chat: { params: [], reasoning: true, json_schema: 'native', forced_tool_choice: 'instruction', images: { formula: 'anthropic_pixels', max_tokens: 1600 }, pdf: true },
    }),
    // provider_2, an older model: the schema as an instruction, forced tool_choice native, takes temperature and top_p.
    chatEntry('claude-legacy', 'provider_2', {
      provider_model_id: 'claude-3-7-sonnet-test',
      max_output_tokens: 64000,
      chat: { params: ['temperature', 'top_p'], json_schema: 'instruction', images: { formula: 'anthropic_pixels', max_tokens: 1600 }, pdf: true },
    }),
    // provider_3: native JSON schema, thinking (thought summaries asked for).
    chatEntry('gemini-test', 'provider_3', {
      provider_model_id: 'gemini-3-test',
      max_output_tokens: 65536,
      chat: { params: ['temperature', 'top_p', 'frequency_penalty', 'presence_penalty'], reasoning: true, json_schema: 'native', images: { formula: 'flat', max_tokens: 1120 }, pdf: true },
    }),
    chatEntry('gpt-unpriced', 'provider_1', { pricing: null }),
    chatEntry('gpt-gone', 'provider_1', { lifecycle: { status: 'removed', successor_slug: 'gpt-test' } }),
    chatEntry('gpt-alias', 'provider_1', { provider_model_id: 'gpt-alias-id', lifecycle: { status: 'duplicate', duplicate_of: 'gpt-test' } }),
    { ...chatEntry('llama-hosted', 'provider_8'), chat: undefined },
    imageEntry('pic-1'),
    ...extra,
  ];
}

export interface ChatHarness {
  gw: TestGateway;
  openai: Emulator;
  deepseek: Emulator;
  anthropic: Emulator;
  gemini: Emulator;
  close(): Promise<void>;
}

export async function startChatHarness(env: Record<string, string> = {}, extraModels: Entry[] = [], overrides: GatewayOverrides = {}): Promise<ChatHarness> {
  const openai = await startEmulator('openai');
  const deepseek = await startEmulator('deepseek');
  const anthropic = await startEmulator('anthropic');
  const gemini = await startEmulator('gemini');
  const gw = await startGateway({ ...chatGatewayEnv({ openai, deepseek, anthropic, gemini }, extraModels), ...env }, overrides);
  return {
    gw,
    openai,
    deepseek,
    anthropic,
    gemini,
    async close() {
      await gw.close();
      await openai.close();
      await deepseek.close();
      await anthropic.close();
      await gemini.close();
    },
  };
}

/** A gateway's variables pointing the four chat providers at the emulators, with the fixture catalog (another gateway on a harness's emulators). */
export function chatGatewayEnv(emulators: Pick<ChatHarness, 'openai' | 'deepseek' | 'anthropic' | 'gemini'>, extraModels: Entry[] = []): Record<string, string> {
  const { openai, deepseek, anthropic, gemini } = emulators;
  return {
    CATALOG_FILE: writeCatalog(chatCatalog(extraModels)),
    PROVIDER_1_BASE_URL: openai.baseUrl,
    PROVIDER_1_API_KEY: openai.apiKey,
    PROVIDER_7_BASE_URL: deepseek.baseUrl,
    PROVIDER_7_API_KEY: deepseek.apiKey,
    PROVIDER_2_BASE_URL: anthropic.baseUrl,
    PROVIDER_2_API_KEY: anthropic.apiKey,
    PROVIDER_3_BASE_URL: gemini.baseUrl,
    PROVIDER_3_API_KEY: gemini.apiKey,
  };
}

/** Balance and held credits in micro-credits, straight from the store. */
export async function money(gw: TestGateway, accountId: string): Promise<{ balance: number; held: number }> {
  const account = await gw.gateway.store.accounts.getAccount(accountId);
  if (account === undefined) throw new Error('no account');
  return { balance: account.balance, held: account.held };
}

/** Exact cost of a usage at the fixture prices. */
export function costMicro(prompt: number, completion: number): number {
  return prompt * INPUT_MICRO_PER_TOKEN + completion * OUTPUT_MICRO_PER_TOKEN;
}

/** Parses an SSE body into its data payloads (comments kept as ':' entries). */
export function sseEvents(text: string): string[] {
  return text
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => (block.startsWith(':') ? ':' : block.replace(/^data: /, '')));
}
