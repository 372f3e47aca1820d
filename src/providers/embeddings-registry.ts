/** Which adapter speaks embeddings for which provider: a table, never an `if (provider === …)`. */
import type { ProviderId } from '../catalog/catalog-file.ts';
import type { EmbeddingsAdapter } from './embeddings-adapter.ts';
import { OpenAiEmbeddingsAdapter } from './openai-compatible/embeddings.ts';

export type EmbeddingsAdapterTable = Partial<Record<ProviderId, EmbeddingsAdapter>>;

export function defaultEmbeddingsAdapters(): EmbeddingsAdapterTable {
  return {
    provider_1: new OpenAiEmbeddingsAdapter(),
  };
}
