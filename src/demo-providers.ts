/**
 * Providers for `npm run demo`: the protocol emulators, started in-process, one for
 * every provider with a descriptor (each names the emulator that speaks its wire format),
 * and the predictions emulator for every media host, so a newcomer's first curl gets an
 * answer without any real provider key.
 */
import { emulatorEnv, startEmulator } from '../emulators/index.ts';
import type { Emulator } from '../emulators/types.ts';
import { startStripeEmulator } from '../emulators/stripe.ts';
import { envNames, type ProviderDescriptor } from './providers/descriptor.ts';
import { PROVIDERS } from './providers/descriptors.ts';

export interface DemoProviders {
  env: Record<string, string>;
  description: string;
  /** Tells the Stripe emulator where the gateway's webhook is, once it listens. */
  gatewayListening(base: string): void;
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
  const chat = descriptors.map((d, i) => `${d.id} → ${d.emulator} emulator at ${started[i]?.baseUrl ?? ''}`);
  // Every media and GPU host speaks the predictions protocol: one emulator serves them all.
  const media = await startEmulator('predictions');
  started.push(media);
  Object.assign(env, emulatorEnv(media));
  // Credit purchases through the Stripe emulator: its payment page completes a Checkout and signs the webhook.
  const stripe = await startStripeEmulator();
  Object.assign(env, { STRIPE_SECRET_KEY: stripe.secretKey, STRIPE_WEBHOOK_SECRET: stripe.webhookSecret, STRIPE_API_BASE: stripe.baseUrl });
  return {
    env,
    description: [...chat, `media hosts (provider_4, 5, 6, 9, 10, custom) → predictions emulator at ${media.baseUrl}`, `Stripe → Stripe emulator at ${stripe.baseUrl}`].join('; '),
    gatewayListening: (base) => stripe.setWebhookUrl(`${base}/webhooks/stripe`),
    close: async () => {
      await Promise.all(started.map((e) => e.close()));
      await stripe.close();
    },
  };
}
