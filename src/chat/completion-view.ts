/**
 * Our answers in the chat-completions format: the non-stream completion and the
 * stream chunks (their fixed part serialised once per run).
 */
import type { Completion, FinishReason, Usage } from '../shared/chat-wire.ts';

export interface AnswerIdentity {
  /** `chatcmpl-` + the job id. */
  id: string;
  created: number;
  /** Echoes the request's model. */
  model: string;
  /** `svc-` + the slug that answered. */
  fingerprint: string;
}

/** The chat-completions usage object. */
export interface UsageView {
  /** Every input token, cached or not. */
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** When the provider reported cache reads or writes (OpenAI's field names). */
  prompt_tokens_details?: { cached_tokens: number; cache_write_tokens?: number };
  /** When the provider reported reasoning tokens (part of completion_tokens). */
  completion_tokens_details?: { reasoning_tokens: number };
}

export function usageView(usage: Usage): UsageView {
  const view: UsageView = { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.promptTokens + usage.completionTokens };
  const writes = (usage.cacheWrite5mTokens ?? 0) + (usage.cacheWrite1hTokens ?? 0);
  if (usage.cacheReadTokens !== undefined || writes > 0) {
    view.prompt_tokens_details = { cached_tokens: usage.cacheReadTokens ?? 0, ...(writes > 0 ? { cache_write_tokens: writes } : {}) };
  }
  if (usage.reasoningTokens !== undefined) view.completion_tokens_details = { reasoning_tokens: usage.reasoningTokens };
  return view;
}

export function completionView(who: AnswerIdentity, completion: Completion, usage: Usage) {
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: completion.content ?? (completion.toolCalls.length > 0 ? null : ''),
    refusal: completion.refusal,
  };
  if (completion.toolCalls.length > 0) {
    message.tool_calls = completion.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  }
  if (completion.reasoning !== undefined) message.reasoning_content = completion.reasoning;
  return {
    id: who.id,
    object: 'chat.completion',
    created: who.created,
    model: who.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: completion.finishReason }],
    usage: usageView(usage),
    system_fingerprint: who.fingerprint,
  };
}

/** Serialises stream chunks; `usage: null` on every chunk when the client asked for the usage chunk. */
export class ChunkWriter {
  private readonly head: string;
  private readonly tail: string;

  constructor(who: AnswerIdentity, includeUsage: boolean) {
    this.head = `{"id":${JSON.stringify(who.id)},"object":"chat.completion.chunk","created":${who.created},"model":${JSON.stringify(who.model)},"system_fingerprint":${JSON.stringify(who.fingerprint)},"choices":`;
    this.tail = includeUsage ? ',"usage":null}' : '}';
  }

  delta(delta: Record<string, unknown>): string {
    return `data: ${this.head}[{"index":0,"delta":${JSON.stringify(delta)},"logprobs":null,"finish_reason":null}]${this.tail}\n\n`;
  }

  first(): string {
    return this.delta({ role: 'assistant', content: '', refusal: null });
  }

  finish(reason: FinishReason): string {
    return `data: ${this.head}[{"index":0,"delta":{},"logprobs":null,"finish_reason":"${reason}"}]${this.tail}\n\n`;
  }

  usage(usage: Usage): string {
    return `data: ${this.head}[],"usage":${JSON.stringify(usageView(usage))}}\n\n`;
  }
}
