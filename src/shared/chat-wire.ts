/**
 * The chat-completions wire types we speak on both sides: the request's messages and
 * parameters, and what a provider answers (completion, stream events, usage). Bottom
 * layer: imports nothing of ours but the error catalogue.
 */
import type { GatewayError } from './errors.ts';

export type ContentPart = { type: string; [field: string]: unknown };

/**
 * A prompt-cache breakpoint the client set with `cache_control` (chat route): a provider that
 * caches where asked (provider_2) caches the prompt up to the block it marks; the others never
 * see it. `ttl` absent is the provider's default lifetime (5 minutes).
 */
export interface CacheControl {
  ttl?: CacheTtl;
}

/** A text part of a system or developer message, kept apart when the client marked one. */
export interface TextBlock {
  text: string;
  cacheControl?: CacheControl;
}

export type ChatMessage =
  /** `blocks`: the text parts with their breakpoints, only when one is marked (`content` is their join). */
  | { role: 'system' | 'developer'; content: string; blocks?: TextBlock[] }
  /** `cacheControls`: a breakpoint per content part (a string content is one part), only when one is marked. */
  | { role: 'user'; content: string | ContentPart[]; name?: string; cacheControls?: (CacheControl | undefined)[] }
  /** `cacheControl`: a breakpoint after the message's last block. */
  | { role: 'assistant'; content: string | null; toolCalls: ToolCall[] | undefined; reasoningContent?: string; cacheControl?: CacheControl }
  | { role: 'tool'; content: string; toolCallId: string; cacheControl?: CacheControl };

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text, as the client sent it. */
  arguments: string;
}

export interface FunctionTool {
  name: string;
  description: string | undefined;
  parameters: Record<string, unknown> | undefined;
  strict: boolean | undefined;
  /** A breakpoint after this tool's definition. */
  cacheControl?: CacheControl;
}

export type ToolChoice = 'none' | 'auto' | 'required' | { name: string };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict: boolean; description: string | undefined };

/** The optional request fields the provider plan decides on (forwarded or dropped). */
export interface ChatParams {
  temperature?: number;
  top_p?: number;
  stop?: string[];
  seed?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  logit_bias?: Record<string, number>;
  tools?: FunctionTool[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  response_format?: ResponseFormat;
  user?: string;
  reasoning_effort?: string;
  verbosity?: string;
}

/** A prompt-cache write lifetime: the default write (provider_2's 5 minutes) or provider_2's 1 hour. */
export type CacheTtl = '5m' | '1h';

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/**
 * The one usage value every adapter and door reports (STYLE: not three shapes). `promptTokens`
 * is every input token, cached or not; the cache counts are parts of it, each billed at its own
 * price (DECISIONS "Prompt caching, billed exactly"); absent means the provider reported none.
 */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** Of promptTokens: read from the provider's prompt cache. */
  cacheReadTokens?: number;
  /**
   * Of promptTokens: written to the cache at the default write price (`cache_write_usd_per_1m`):
   * provider_2's 5-minute writes, and provider_1's writes (GPT-5.6 and later bill them; 30 minutes).
   */
  cacheWrite5mTokens?: number;
  /** Of promptTokens: written to the cache with provider_2's 1-hour lifetime (`cache_write_1h_usd_per_1m`). */
  cacheWrite1hTokens?: number;
  /** Of completionTokens: the model's reasoning (thinking) tokens, where reported. */
  reasoningTokens?: number;
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
