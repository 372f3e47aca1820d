/** Which adapter speaks for which chat provider: derived from the descriptors, never an `if (provider === …)`. */
import type { ProviderId } from '../catalog/catalog-file.ts';
import type { ProviderAdapter } from './adapter.ts';
import type { NativeResponsesAdapter } from './openai-responses/adapter.ts';
import type { ProviderDescriptor } from './descriptor.ts';
import { chatTable, PROVIDERS } from './descriptors.ts';

export type AdapterTable = Partial<Record<ProviderId, ProviderAdapter>>;

/** A new adapter for every chat provider of `list`. */
export function adaptersOf(list: readonly ProviderDescriptor[]): AdapterTable {
  return chatTable(list, (chat) => chat.adapter());
}

export function defaultAdapters(): AdapterTable {
  return adaptersOf(PROVIDERS);
}

/** Which providers serve the Responses format natively, with their adapter (the Responses door's passthrough rows). */
export type NativeResponsesTable = Partial<Record<ProviderId, NativeResponsesAdapter>>;

export function nativeResponsesAdapters(list: readonly ProviderDescriptor[] = PROVIDERS): NativeResponsesTable {
  const table: NativeResponsesTable = {};
  for (const descriptor of list) if (descriptor.responses !== undefined) table[descriptor.id] = descriptor.responses.adapter();
  return table;
}
