/** provider_3: the Gemini generateContent protocol. */
import type { ProviderDescriptor } from '../descriptor.ts';
import { GeminiAdapter } from '../gemini/adapter.ts';

export const provider3 = {
  id: 'provider_3',
  displayName: 'Google Gemini',
  telemetryName: 'gcp.gemini',
  envPrefix: 'PROVIDER_3',
  defaultBaseUrl: 'https://generativelanguage.googleapis.com',
  emulator: 'gemini',
  chat: {
    adapter: () => new GeminiAdapter(),
    params: {
      temperature: 'F',
      top_p: 'F',
      seed: 'F',
      frequency_penalty: 'F',
      presence_penalty: 'F',
      logit_bias: 'D',
      parallel_tool_calls: 'D',
      user: 'D',
      reasoning_effort: 'D',
      verbosity: 'D',
    },
    // Base64 data URLs only: the protocol fetches no image URLs itself.
    content: { httpsImages: false, dataImages: true, pdfs: true },
    cacheWrites: 'automatic',
  },
} satisfies ProviderDescriptor;
