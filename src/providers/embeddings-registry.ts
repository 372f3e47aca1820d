/** Which adapter speaks embeddings for which provider: derived from the descriptors, never an `if (provider === …)`. */
import type { ProviderId } from '../catalog/catalog-file.ts';
import type { ProviderDescriptor } from './descriptor.ts';
import { PROVIDERS } from './descriptors.ts';
import type { EmbeddingsAdapter } from './embeddings-adapter.ts';

export type EmbeddingsAdapterTable = Partial<Record<ProviderId, EmbeddingsAdapter>>;

export function embeddingsAdaptersOf(descriptors: readonly ProviderDescriptor[]): EmbeddingsAdapterTable {
  const table: EmbeddingsAdapterTable = {};
  for (const descriptor of descriptors) if (descriptor.embeddings !== undefined) table[descriptor.id] = descriptor.embeddings.adapter();
  return table;
}

export function defaultEmbeddingsAdapters(): EmbeddingsAdapterTable {
  return embeddingsAdaptersOf(PROVIDERS);
}
