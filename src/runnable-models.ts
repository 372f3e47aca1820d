/**
 * What the catalog must know to say which models can run now (spec: `available: false`
 * "for models that cannot run now"): which route runs each entry, and which providers have
 * no API key. Each route says what it runs; this module only puts them side by side.
 */
import { chatRouteRuns } from './chat/admission.ts';
import type { CatalogEntry, ProviderId } from './catalog/catalog-file.ts';
import type { CatalogOptions } from './catalog/catalog.ts';
import { apiKeyVariable, type ProviderEndpoint } from './config.ts';
import { embeddingsRouteRuns } from './embeddings/embeddings-request.ts';
import { IMAGE_ROUTE, mediaRouteRuns, VIDEO_ROUTE } from './media/media-request.ts';
import { SPEECH_ROUTE } from './audio/speech.ts';
import { TRANSCRIPTION_ROUTE } from './audio/transcriptions.ts';
import type { EmbeddingsAdapterTable } from './providers/embeddings-registry.ts';
import type { ProviderDescriptor } from './providers/descriptor.ts';
import { chatProviderIds, PROVIDERS } from './providers/descriptors.ts';

interface Door {
  /** How the reason names the providers the route reaches ("chat provider", "image host"). */
  reaches: string;
  categories: readonly string[];
  runs(entry: CatalogEntry): boolean;
}

/** Each provider's endpoint as far as its key goes (a chat provider's first key, a media host's key). */
type Endpoints = Partial<Record<ProviderId, Pick<ProviderEndpoint, 'apiKey'>>>;

/** The catalog's options for a configuration (its API keys), the route table and the providers with a descriptor. */
export function catalogOptions(
  config: { providers: Endpoints; mediaHosts: Endpoints },
  embeddings: EmbeddingsAdapterTable,
  descriptors: readonly ProviderDescriptor[] = PROVIDERS,
): CatalogOptions {
  const media = [IMAGE_ROUTE, VIDEO_ROUTE, SPEECH_ROUTE, TRANSCRIPTION_ROUTE].map((route): Door => ({
    reaches: `${route.format} host`,
    categories: [route.category],
    runs: (entry) => mediaRouteRuns(route, entry),
  }));
  const doors: Door[] = [
    { reaches: 'chat provider', categories: ['text', 'code', 'multimodal'], runs: chatRouteRuns },
    { reaches: 'embeddings provider', categories: ['embedding'], runs: (entry) => embeddingsRouteRuns(entry, embeddings) },
    ...media,
  ];
  const keys = new Map<string, string | undefined>();
  for (const [provider, endpoint] of [...Object.entries(config.providers), ...Object.entries(config.mediaHosts)]) keys.set(provider, endpoint?.apiKey);
  return {
    chatProviders: chatProviderIds(descriptors),
    unrunnable: (entry) => {
      if (doors.some((door) => door.runs(entry))) return undefined;
      const door = doors.find((d) => d.categories.includes(entry.category));
      return door === undefined
        ? `This gateway has no route that runs ${entry.category} models.`
        : `No ${door.reaches} of this gateway serves it (its provider is ${entry.provider}).`;
    },
    // Only providers the gateway calls: a model of any other has no route, said above.
    missingApiKey: (provider) => (keys.has(provider) && keys.get(provider) === undefined ? apiKeyVariable(provider, descriptors) : undefined),
  };
}
