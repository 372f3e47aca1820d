/**
 * The Responses format's answer as a provider that speaks it natively gives it (provider_1's
 * `POST /responses`): its output items as they came, how it ended, the usage to bill. Bottom
 * layer, beside chat-wire.ts: the door renders it, the native adapter parses into it.
 */
import type { Usage } from './chat-wire.ts';
import type { GatewayError } from './errors.ts';

export type ResponsesJson = Record<string, unknown>;

export interface ResponsesAnswer {
  /** Output items (messages, function and custom tool calls, reasoning), as the provider gave them. */
  output: ResponsesJson[];
  status: 'completed' | 'incomplete';
  /** Why an incomplete answer stopped (`max_output_tokens`, `content_filter`). */
  incompleteReason?: string;
  usage: Usage | undefined;
  /** Characters of text, reasoning and tool input generated (the estimate where no usage came). */
  outputChars: number;
}

/** What a native Responses stream gives the door. */
export type ResponsesStreamEvent =
  /** An event the client receives as it came (its sequence number renumbered). */
  | { type: 'relay'; event: ResponsesJson }
  /** The provider's final response: the answer to bill and render. */
  | { type: 'done'; answer: ResponsesAnswer }
  | { type: 'error'; error: GatewayError };

export interface ResponsesStreamDecoder {
  push(chunk: string): ResponsesStreamEvent[];
  /** The upstream body ended; true when the provider's final response was seen. */
  end(): { events: ResponsesStreamEvent[]; complete: boolean };
}
