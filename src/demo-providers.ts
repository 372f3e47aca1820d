/**
 * Providers for `npm run demo`: the protocol emulators, started in-process, one for
 * every chat provider the gateway has an adapter for, and the predictions emulator for
 * every media host, so a newcomer's first curl gets an answer without any real provider key.
 */
import { emulatorEnv, startEmulator } from '../emulators/index.ts';
import type { Emulator, EmulatorKind } from '../emulators/types.ts';
import type { ChatProviderId } from './catalog/catalog-file.ts';
import { defaultAdapters } from './providers/registry.ts';

export interface DemoProviders {
  env: Record<string, string>;
  description: string;
  close(): Promise<void>;
}

const EMULATOR_OF: Record<ChatProviderId, EmulatorKind> = {
  provider_1: 'openai',
  provider_2: 'anthropic',
  provider_3: 'gemini',
  provider_7: 'deepseek',
};

export async function startDemoProviders(): Promise<DemoProviders> {
  const providers = Object.keys(defaultAdapters()) as ChatProviderId[];
  const env: Record<string, string> = {};
  const started: Emulator[] = [];
  for (const provider of providers) {
    const emulator = await startEmulator(EMULATOR_OF[provider]);
    started.push(emulator);
    const n = provider.slice('provider_'.length);
    env[`PROVIDER_${n}_BASE_URL`] = emulator.baseUrl;
    env[`PROVIDER_${n}_API_KEY`] = emulator.apiKey;
  }
  const media = await startEmulator('predictions');
  started.push(media);
  Object.assign(env, emulatorEnv(media));
  const chat = providers.map((p, i) => `${p} → ${EMULATOR_OF[p]} emulator at ${started[i]?.baseUrl ?? ''}`);
  return {
    env,
    description: [...chat, `media hosts (provider_4, 5, 6, 9, 10, custom) → predictions emulator at ${media.baseUrl}`].join('; '),
    close: async () => {
      await Promise.all(started.map((e) => e.close()));
    },
  };
}
