/**
 * The one interface every provider adapter implements, so the chat pipeline never
 * knows a provider's wire format: build the upstream request, parse a response,
 * turn the upstream stream into normalized events, map upstream errors.
 */
import type { ChatRouting } from '../catalog/catalog-file.ts';
import type { ChatMessage, ChatParams, ToolCall } from '../chat/chat-request.ts';
import type { GatewayError } from '../http/errors.ts';

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

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

export interface Completion {
  content: string | null;
  reasoning: string | undefined;
  refusal: string | null;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage: Usage | undefined;
}

export type StreamEvent =
  | { type: 'content'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'refusal'; text: string }
  /** A new tool call: `index` is the tool ordinal in this answer. */
  | { type: 'tool_call'; index: number; id: string; name: string }
  | { type: 'tool_arguments'; index: number; fragment: string }
  | { type: 'finish'; reason: FinishReason }
  | { type: 'usage'; usage: Usage }
  /** An error the provider sent inside a stream that had started. */
  | { type: 'error'; error: GatewayError };

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
}
