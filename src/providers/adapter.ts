/**
 * The one interface every provider adapter implements, so the chat pipeline never
 * knows a provider's wire format: build the upstream request, parse a response,
 * turn the upstream stream into normalized events, map upstream errors.
 */
import type { ChatRouting } from '../catalog/catalog-file.ts';
import type { ChatMessage, ChatParams, Completion, StreamEvent } from '../shared/chat-wire.ts';
import type { GatewayError } from '../shared/errors.ts';

/** What reaches the provider after the F/S/D plan: only forwarded fields are set. */
export interface ProviderCall extends ChatParams {
  providerModelId: string;
  routing: ChatRouting;
  messages: ChatMessage[];
  maxTokens: number;
  stream: boolean;
}

export interface UpstreamRequest {
  /** Path and query, appended to the provider's base URL. */
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface StreamDecoder {
  /** Feeds raw text from the upstream body; returns the events it completed. */
  push(chunk: string): StreamEvent[];
  /** The upstream body ended; true when the protocol's own terminator was seen. */
  end(): { events: StreamEvent[]; complete: boolean };
}

export interface ProviderAdapter {
  buildRequest(call: ProviderCall, apiKey: string): UpstreamRequest;
  parseResponse(body: unknown): Completion;
  streamDecoder(): StreamDecoder;
  /** An upstream non-2xx answer → our error (status per the spec's chat error table). */
  mapError(status: number, body: unknown, text: string): GatewayError;
  /** How long a throttled key should rest, where the provider says so in its error body rather than in retry-after. */
  retryDelayMs?(body: unknown): number | undefined;
}
