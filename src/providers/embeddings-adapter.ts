/**
 * The one interface every embeddings protocol implements (beside the chat adapter), so
 * the embeddings route never knows a provider's wire format: build the upstream request,
 * read the vectors and usage from its answer, map its errors.
 */
import type { EmbeddingsInput, EncodingFormat, Vector } from '../shared/embeddings-wire.ts';
import type { GatewayError } from '../shared/errors.ts';
import type { UpstreamRequest } from './adapter.ts';

export interface EmbeddingsCall {
  providerModelId: string;
  input: EmbeddingsInput;
  encoding: EncodingFormat;
  /** Only when the client asked to shorten the vectors. */
  dimensions: number | undefined;
  user: string | undefined;
}

export interface ProviderEmbeddings {
  /** One vector per input, in input order, as the provider sent it. */
  vectors: Vector[];
  /** Input tokens the provider reported; undefined when it reported none. */
  promptTokens: number | undefined;
}

export interface EmbeddingsAdapter {
  buildRequest(call: EmbeddingsCall, apiKey: string): UpstreamRequest;
  /** A 2xx body → its vectors and usage; a body not in the protocol's shape → 502 upstream_error. */
  parseResponse(body: unknown): ProviderEmbeddings;
  /** An upstream non-2xx answer → our error (a refused input: 400 provider_rejected_input). */
  mapError(status: number, body: unknown, text: string): GatewayError;
}
