/**
 * Providers for `npm run demo`: the protocol emulators, started in-process, one for
 * every provider with a descriptor (each names the emulator that speaks its wire format),
 * so a newcomer's first curl gets an answer without any real provider key.
 */
import { startEmulator } from '../emulators/index.ts';
import type { Emulator } from '../emulators/types.ts';
import { envNames, type ProviderDescriptor } from './providers/descriptor.ts';
import { PROVIDERS } from './providers/descriptors.ts';

export interface DemoProviders {
  env: Record<string, string>;
  description: string;
  close(): Promise<void>;
}

export async function startDemoProviders(descriptors: readonly ProviderDescriptor[] = PROVIDERS): Promise<DemoProviders> {
  const env: Record<string, string> = {};
  const started: Emulator[] = [];
  for (const descriptor of descriptors) {
    const emulator = await startEmulator(descriptor.emulator);
    started.push(emulator);
    const names = envNames(descriptor);
    env[names.baseUrl] = emulator.baseUrl;
    env[names.apiKey] = emulator.apiKey;
  }
  return {
    env,
    description: descriptors.map((d, i) => `${d.id} → ${d.emulator} emulator at ${started[i]?.baseUrl ?? ''}`).join('; '),
    close: async () => {
      await Promise.all(started.map((e) => e.close()));
    },
  };
}
