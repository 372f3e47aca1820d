/** Which adapter speaks for which chat provider: a table, never an `if (provider === …)`. */
import type { ChatProviderId } from '../catalog/catalog-file.ts';
import type { ProviderAdapter } from './adapter.ts';
import { AnthropicAdapter } from './anthropic/adapter.ts';
import { GeminiAdapter } from './gemini/adapter.ts';
import { OpenAiCompatibleAdapter } from './openai-compatible/adapter.ts';

export type AdapterTable = Partial<Record<ChatProviderId, ProviderAdapter>>;

export function defaultAdapters(): AdapterTable {
  return {
    provider_1: new OpenAiCompatibleAdapter({ replayReasoning: false, abortedFinishReasons: [], thinkingSwitch: false }),
    provider_2: new AnthropicAdapter(),
    provider_3: new GeminiAdapter(),
    provider_7: new OpenAiCompatibleAdapter({ replayReasoning: true, abortedFinishReasons: ['insufficient_system_resource'], thinkingSwitch: true }),
  };
}
