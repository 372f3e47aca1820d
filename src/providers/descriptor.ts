/**
 * Everything the gateway knows about one provider, in one object: its id, names, public
 * base URL, the emulator that stands in for it, and what it can do. Configuration, the
 * adapter registry, the chat plan's F/S/D table, content support, the demo and the
 * catalog's chat and credential sets are all derived from these (providers/descriptors.ts).
 */
import type { ProviderId } from '../catalog/catalog-file.ts';
import type { EmbeddingsAdapter } from './embeddings-adapter.ts';
import type { ProviderAdapter } from './adapter.ts';
import type { NativeResponsesAdapter } from './openai-responses/adapter.ts';

/**
 * The rows of the spec's "Per-provider handling of parameters" table whose cell differs
 * by provider, in the table's order (the order of X-Service-Ignored-Params). The rows that
 * are F for every provider (model, messages, max_tokens, stop, stream, tools, tool_choice,
 * response_format) are forwarded by the plan itself.
 */
export const PLANNED_PARAMS = [
  'temperature', 'top_p', 'seed', 'frequency_penalty', 'presence_penalty',
  'logit_bias', 'parallel_tool_calls', 'user', 'reasoning_effort', 'verbosity',
] as const;
export type PlannedParam = (typeof PLANNED_PARAMS)[number];

/** F: forwarded; S: forwarded when the model takes it (its catalog `chat.params`); D: dropped and named. */
export type ParamCell = 'F' | 'S' | 'D';

/** One provider's column of the spec's table, written as one literal row per parameter. */
export type ParamColumn = Readonly<Record<PlannedParam, ParamCell>>;

/** The spec's "Content-part support per provider" row. */
export interface ContentSupport {
  httpsImages: boolean;
  dataImages: boolean;
  pdfs: boolean;
}

export interface ChatCapability {
  /** A new adapter for this provider's chat protocol (one per gateway). */
  adapter: () => ProviderAdapter;
  params: ParamColumn;
  content: ContentSupport;
  /**
   * How the provider writes its prompt cache (DECISIONS "Prompt caching, billed exactly").
   * 'marked': only at the request's `cache_control` breakpoints, which the chat route forwards;
   * 'automatic': by itself, so a billed write may happen on any run, and `cache_control` is
   * dropped quietly.
   */
  cacheWrites: 'marked' | 'automatic';
}

/** Embeddings: the adapter that speaks the provider's embeddings protocol. */
export interface EmbeddingsCapability {
  adapter: () => EmbeddingsAdapter;
}

/**
 * The Responses format served by the provider itself: the Responses door's passthrough row for
 * this provider (its models go there instead of through the chat protocol).
 */
export interface ResponsesCapability {
  adapter: () => NativeResponsesAdapter;
}

/** Placeholder: the Replicate-style predictions hosts provider_4/5/6/9/10 and custom (a later issue). */
export interface MediaCapability {
  protocol: 'predictions';
}

/** The emulator (emulators/) that speaks this provider's wire format, for tests and the demo. */
export type EmulatorName = 'openai' | 'anthropic' | 'gemini' | 'deepseek';

export interface ProviderDescriptor {
  id: ProviderId;
  /** For operators (docs, logs, the demo); the API shows only `id`. */
  displayName: string;
  /** Its `gen_ai.provider.name` in traces (the GenAI conventions' well-known value, else its id). */
  telemetryName: string;
  /** `PROVIDER_1` gives PROVIDER_1_BASE_URL and PROVIDER_1_API_KEY. */
  envPrefix: string;
  /** What the base-URL option of the provider's official SDK means (DECISIONS.md). */
  defaultBaseUrl: string;
  emulator: EmulatorName;
  chat?: ChatCapability;
  embeddings?: EmbeddingsCapability;
  responses?: ResponsesCapability;
  media?: MediaCapability;
}

/** The environment variables of a provider's endpoint. */
export function envNames(descriptor: Pick<ProviderDescriptor, 'envPrefix'>): { baseUrl: string; apiKey: string } {
  return { baseUrl: `${descriptor.envPrefix}_BASE_URL`, apiKey: `${descriptor.envPrefix}_API_KEY` };
}
