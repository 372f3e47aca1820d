/**
 * Every provider the gateway speaks to, one descriptor each (providers/provider-N/descriptor.ts),
 * and the tables derived from them. Adding a provider is its folder, one line in PROVIDERS and
 * its models in the catalog (docs/providers.md).
 */
import type { ProviderId } from '../catalog/catalog-file.ts';
import type { ChatCapability, ProviderDescriptor } from './descriptor.ts';
import { provider1 } from './provider-1/descriptor.ts';
import { provider2 } from './provider-2/descriptor.ts';
import { provider3 } from './provider-3/descriptor.ts';
import { provider7 } from './provider-7/descriptor.ts';

export const PROVIDERS = [provider1, provider2, provider3, provider7] as const satisfies readonly ProviderDescriptor[];

type Described = (typeof PROVIDERS)[number];
/** Providers the gateway calls itself: each has an endpoint in the configuration. */
export type DescribedProviderId = Described['id'];
/** The ids in a descriptor list whose descriptor has a chat capability. */
export type ChatIdOf<D> = D extends { id: infer Id extends ProviderId; chat: ChatCapability } ? Id : never;
/** Providers whose chat protocol the gateway speaks. */
export type ChatProviderId = ChatIdOf<Described>;

/** A value per chat provider of `list`, picked from its chat capability. */
export function chatTable<D extends ProviderDescriptor, T>(list: readonly D[], pick: (chat: ChatCapability, descriptor: D) => T): Record<ChatIdOf<D>, T> {
  const table: Partial<Record<ProviderId, T>> = {};
  for (const descriptor of list) if (descriptor.chat !== undefined) table[descriptor.id] = pick(descriptor.chat, descriptor);
  return table as Record<ChatIdOf<D>, T>;
}

/** Providers whose models may carry chat routing facts in the catalog. */
export function chatProviderIds<D extends ProviderDescriptor>(list: readonly D[]): ChatIdOf<D>[] {
  return list.filter((descriptor) => descriptor.chat !== undefined).map((descriptor) => descriptor.id as ChatIdOf<D>);
}

/** Each provider's name in the OpenTelemetry GenAI conventions (`gen_ai.provider.name`). */
export function telemetryNames<D extends ProviderDescriptor>(list: readonly D[]): Partial<Record<ProviderId, string>> {
  return Object.fromEntries(list.map((descriptor) => [descriptor.id, descriptor.telemetryName]));
}
