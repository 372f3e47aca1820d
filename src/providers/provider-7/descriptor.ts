/** provider_7: a DeepSeek-style dialect of the OpenAI Chat Completions protocol (text only). */
import type { ProviderDescriptor } from '../descriptor.ts';
import { OpenAiCompatibleAdapter } from '../openai-compatible/adapter.ts';

export const provider7 = {
  id: 'provider_7',
  displayName: 'DeepSeek',
  telemetryName: 'deepseek',
  envPrefix: 'PROVIDER_7',
  defaultBaseUrl: 'https://api.deepseek.com',
  emulator: 'deepseek',
  chat: {
    adapter: () => new OpenAiCompatibleAdapter({ replayReasoning: true, abortedFinishReasons: ['insufficient_system_resource'], thinkingSwitch: true }),
    params: {
      temperature: 'F',
      top_p: 'F',
      seed: 'D',
      frequency_penalty: 'F',
      presence_penalty: 'F',
      logit_bias: 'D',
      parallel_tool_calls: 'D',
      user: 'D',
      reasoning_effort: 'D',
      verbosity: 'D',
    },
    content: { httpsImages: false, dataImages: false, pdfs: false },
    cacheWrites: 'automatic',
  },
} satisfies ProviderDescriptor;
