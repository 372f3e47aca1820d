/** provider_1: the OpenAI Chat Completions, Responses and Embeddings protocols. */
import type { ProviderDescriptor } from '../descriptor.ts';
import { OpenAiCompatibleAdapter } from '../openai-compatible/adapter.ts';
import { OpenAiEmbeddingsAdapter } from '../openai-compatible/embeddings.ts';
import { OpenAiResponsesAdapter } from '../openai-responses/adapter.ts';

export const provider1 = {
  id: 'provider_1',
  displayName: 'OpenAI',
  telemetryName: 'openai',
  envPrefix: 'PROVIDER_1',
  defaultBaseUrl: 'https://api.openai.com/v1',
  emulator: 'openai',
  chat: {
    adapter: () => new OpenAiCompatibleAdapter({ replayReasoning: false, abortedFinishReasons: [], thinkingSwitch: false }),
    params: {
      temperature: 'S',
      top_p: 'S',
      seed: 'F',
      frequency_penalty: 'S',
      presence_penalty: 'S',
      logit_bias: 'S',
      parallel_tool_calls: 'F',
      user: 'F',
      reasoning_effort: 'S',
      verbosity: 'S',
    },
    content: { httpsImages: true, dataImages: true, pdfs: true },
    cacheWrites: 'automatic',
  },
  embeddings: { adapter: () => new OpenAiEmbeddingsAdapter() },
  responses: { adapter: () => new OpenAiResponsesAdapter() },
} satisfies ProviderDescriptor;
