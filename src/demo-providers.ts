/**
 * Providers for `npm run demo`: the protocol emulators, started in-process, one for
 * every provider with a descriptor (each names the emulator that speaks its wire format),
 * and the predictions emulator for every media host, so a newcomer's first curl gets an
 * answer without any real provider key.
 */
import { emulatorEnv, startEmulator } from '../emulators/index.ts';
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
  const started: { close(): Promise<void> }[] = [];
  const closeAll = async () => {
    await Promise.all(started.map((e) => e.close()));
  };
  try {
    const chat: string[] = [];
    for (const descriptor of descriptors) {
      // Answers as a model would (tool calls and structured output work as the README says), and takes scripts at /__emulator/.
      const emulator = await startEmulator(descriptor.emulator, { followRequests: true, control: true });
      started.push(emulator);
      const names = envNames(descriptor);
      env[names.baseUrl] = emulator.baseUrl;
      env[names.apiKey] = emulator.apiKey;
      chat.push(`${descriptor.id} → ${descriptor.emulator} emulator at ${emulator.baseUrl}`);
    }
    // Every media and GPU host speaks the predictions protocol: one emulator serves them all.
    const media = await startEmulator('predictions', { control: true });
    started.push(media);
    Object.assign(env, emulatorEnv(media));
    // Credit purchases through the Stripe emulator: its payment page completes a Checkout and signs the webhook.
    const stripe = await startStripeEmulator();
    started.push(stripe);
    Object.assign(env, { STRIPE_SECRET_KEY: stripe.secretKey, STRIPE_WEBHOOK_SECRET: stripe.webhookSecret, STRIPE_API_BASE: stripe.baseUrl });
    return {
      env,
      description: [...chat, `media hosts (provider_4, 5, 6, 9, 10, custom) → predictions emulator at ${media.baseUrl}`, `Stripe → Stripe emulator at ${stripe.baseUrl}`].join('; '),
      gatewayListening: (base) => stripe.setWebhookUrl(`${base}/webhooks/stripe`),
      close: closeAll,
    };
  } catch (error) {
    // Nothing left listening by a start that failed half-way.
    await closeAll();
    throw error;
  }
}
