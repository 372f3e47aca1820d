/** provider_2: the Anthropic Messages protocol. */
import { AnthropicAdapter } from '../anthropic/adapter.ts';
import type { ProviderDescriptor } from '../descriptor.ts';

export const provider2 = {
  id: 'provider_2',
  displayName: 'Anthropic',
  telemetryName: 'anthropic',
  envPrefix: 'PROVIDER_2',
  defaultBaseUrl: 'https://api.anthropic.com',
  emulator: 'anthropic',
  chat: {
    adapter: () => new AnthropicAdapter(),
    params: {
      temperature: 'S',
      top_p: 'S',
      seed: 'D',
      frequency_penalty: 'D',
      presence_penalty: 'D',
      logit_bias: 'D',
      parallel_tool_calls: 'F',
      user: 'D',
      reasoning_effort: 'D',
      verbosity: 'D',
    },
    content: { httpsImages: true, dataImages: true, pdfs: true },
    cacheWrites: 'marked',
  },
} satisfies ProviderDescriptor;
