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

export function usageView(usage: Usage) {
  return { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.promptTokens + usage.completionTokens };
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
