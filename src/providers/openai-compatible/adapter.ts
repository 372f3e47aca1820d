/**
 * The OpenAI Chat Completions wire format, spoken by provider_1 and (as a dialect)
 * provider_7. Differences between the two are rows in `OpenAiDialect`, not branches
 * on a provider name.
 */
import type { ChatMessage, ResponseFormat } from '../../shared/chat-wire.ts';
import { GatewayError } from '../../shared/errors.ts';
import type { ProviderAdapter, ProviderCall, StreamDecoder, UpstreamRequest } from '../adapter.ts';
import type { Completion, FinishReason, StreamEvent, Usage } from '../../shared/chat-wire.ts';
import { sseDecoder } from '../sse-lines.ts';
import { JSON_OBJECT_INSTRUCTION, schemaInstruction, stripFences } from '../structured-output.ts';
import { providerMessage, upstreamError } from '../upstream-errors.ts';
import { reportedUsage, tokenCount } from '../../shared/usage.ts';

export interface OpenAiDialect {
  /** Assistant turns with tool calls carry their reasoning_content back (DeepSeek thinking mode). */
  replayReasoning: boolean;
  /** Finish values that mean the backend aborted the answer (DeepSeek insufficient_system_resource). */
  abortedFinishReasons: readonly string[];
  /** One provider model id serves both modes; `thinking` is switched from the model's `reasoning` fact (DeepSeek V4). */
  thinkingSwitch: boolean;
}

type Json = Record<string, unknown>;

const FINISH: Record<string, FinishReason> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  content_filter: 'content_filter',
};

export class OpenAiCompatibleAdapter implements ProviderAdapter {
  constructor(private readonly dialect: OpenAiDialect) {}

  buildRequest(call: ProviderCall, apiKey: string): UpstreamRequest {
    const body: Json = {
      model: call.providerModelId,
      messages: this.messages(call),
      [call.routing.max_tokens_field]: call.maxTokens,
    };
    if (this.dialect.thinkingSwitch) body.thinking = { type: call.routing.reasoning ? 'enabled' : 'disabled' };
    if (call.stream) {
      body.stream = true;
      // Usage is always asked for, whatever the client asked: billing needs it.
      body.stream_options = { include_usage: true };
    }
    const forwarded = ['temperature', 'top_p', 'stop', 'seed', 'frequency_penalty', 'presence_penalty', 'logit_bias', 'parallel_tool_calls', 'user', 'reasoning_effort', 'verbosity'] as const;
    for (const name of forwarded) if (call[name] !== undefined) body[name] = call[name];
    if (call.tools !== undefined) {
      body.tools = call.tools.map((t) => ({
        type: 'function',
        function: {
          name: t.name,
          ...(t.description === undefined ? {} : { description: t.description }),
          ...(t.parameters === undefined ? {} : { parameters: t.parameters }),
          ...(t.strict === undefined ? {} : { strict: t.strict }),
        },
      }));
      if (call.tool_choice !== undefined) {
        body.tool_choice = typeof call.tool_choice === 'string' ? call.tool_choice : { type: 'function', function: { name: call.tool_choice.name } };
      }
    }
    const format = this.responseFormat(call.response_format, call.routing.json_schema === 'native');
    if (format !== undefined) body.response_format = format;
    return {
      path: '/chat/completions',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    };
  }

  private responseFormat(format: ResponseFormat | undefined, native: boolean): Json | undefined {
    if (format === undefined) return undefined;
    if (format.type !== 'json_schema') return { type: format.type };
    if (!native) return { type: 'json_object' };
    return {
      type: 'json_schema',
      json_schema: { name: format.name, schema: format.schema, strict: format.strict, ...(format.description === undefined ? {} : { description: format.description }) },
    };
  }

  private messages(call: ProviderCall): Json[] {
    const out: Json[] = call.messages.map((m) => this.message(m, call.routing.developer_role));
    // Where schemas are not enforced natively, the schema travels as an instruction.
    const format = call.response_format;
    if (format !== undefined && format.type !== 'text' && (format.type === 'json_object' || call.routing.json_schema !== 'native')) {
      const instruction = format.type === 'json_schema' ? schemaInstruction(format) : JSON_OBJECT_INSTRUCTION;
      out.unshift({ role: 'system', content: instruction });
    }
    return out;
  }

  private message(m: ChatMessage, keepDeveloper: boolean): Json {
    switch (m.role) {
      case 'system':
      case 'developer':
        return { role: m.role === 'developer' && keepDeveloper ? 'developer' : 'system', content: m.content };
      case 'user':
        return { role: 'user', content: m.content };
      case 'assistant': {
        const out: Json = { role: 'assistant', content: m.content };
        if (m.toolCalls !== undefined) {
          out.tool_calls = m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
          if (this.dialect.replayReasoning && m.reasoningContent !== undefined) out.reasoning_content = m.reasoningContent;
        }
        return out;
      }
      case 'tool':
        return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
    }
  }

  parseResponse(raw: unknown): Completion {
    const body = raw as { choices?: { message?: Json; finish_reason?: string }[]; usage?: Json };
    const choice = body.choices?.[0];
    if (choice === undefined || typeof choice.message !== 'object') {
      throw new GatewayError('upstream_error', 'The model provider answered without a choice.');
    }
    const message = choice.message;
    const toolCalls = Array.isArray(message.tool_calls)
      ? (message.tool_calls as { id: string; function: { name: string; arguments: string } }[]).map((c) => ({
          id: c.id,
          name: c.function.name,
          arguments: typeof c.function.arguments === 'string' ? c.function.arguments : JSON.stringify(c.function.arguments),
        }))
      : [];
    const content = typeof message.content === 'string' ? message.content : null;
    return {
      content,
      reasoning: typeof message.reasoning_content === 'string' && message.reasoning_content !== '' ? message.reasoning_content : undefined,
      refusal: typeof message.refusal === 'string' ? message.refusal : null,
      toolCalls,
      finishReason: this.finish(choice.finish_reason, toolCalls.length > 0),
      usage: usageOf(body.usage),
    };
  }

  private finish(reason: string | undefined | null, hasToolCalls: boolean): FinishReason {
    if (reason !== undefined && reason !== null && this.dialect.abortedFinishReasons.includes(reason)) {
      throw new GatewayError('upstream_error', 'The model provider aborted the answer (insufficient resources). Retry with backoff.');
    }
    const mapped = reason === undefined || reason === null ? undefined : FINISH[reason];
    return mapped ?? (hasToolCalls ? 'tool_calls' : 'stop');
  }

  streamDecoder(): StreamDecoder {
    const seenTools = new Set<number>();
    let done = false;
    const decode = (data: string, events: StreamEvent[]) => {
      if (data === '[DONE]') {
        done = true;
        return;
      }
      let chunk: Json;
      try {
        chunk = JSON.parse(data) as Json;
      } catch {
        return;
      }
      if (chunk.error !== undefined) {
        events.push({ type: 'error', error: new GatewayError('upstream_error', `The model provider failed during the stream: ${(providerMessage(chunk, '') ?? 'error').slice(0, 500)}`) });
        return;
      }
      const choice = (chunk.choices as Json[] | undefined)?.[0];
      const delta = choice?.delta as Json | undefined;
      if (delta !== undefined) {
        if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') events.push({ type: 'reasoning', text: delta.reasoning_content });
        if (typeof delta.content === 'string' && delta.content !== '') events.push({ type: 'content', text: delta.content });
        if (typeof delta.refusal === 'string' && delta.refusal !== '') events.push({ type: 'refusal', text: delta.refusal });
        if (Array.isArray(delta.tool_calls)) {
          for (const call of delta.tool_calls as { index?: number; id?: string; function?: { name?: string; arguments?: string } }[]) {
            const index = call.index ?? 0;
            if (!seenTools.has(index)) {
              seenTools.add(index);
              events.push({ type: 'tool_call', index, id: call.id ?? `call_${index}`, name: call.function?.name ?? '' });
            }
            const fragment = call.function?.arguments;
            if (typeof fragment === 'string' && fragment !== '') events.push({ type: 'tool_arguments', index, fragment });
          }
        }
      }
      const reason = choice?.finish_reason;
      if (typeof reason === 'string') {
        try {
          events.push({ type: 'finish', reason: this.finish(reason, seenTools.size > 0) });
        } catch (error) {
          events.push({ type: 'error', error: error as GatewayError });
        }
      }
      const usage = usageOf(chunk.usage);
      if (usage !== undefined) events.push({ type: 'usage', usage });
    };
    return sseDecoder((e, events) => decode(e.data, events), () => done);
  }

  mapError(status: number, body: unknown, text: string): GatewayError {
    return upstreamError(status, providerMessage(body, text));
  }
}

/** The usage object of the OpenAI format, as far as billing reads it. */
interface OpenAiUsageWire {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown; cache_write_tokens?: unknown } | null;
  completion_tokens_details?: { reasoning_tokens?: unknown } | null;
  /** DeepSeek's own count of cache hits (it also fills cached_tokens). */
  prompt_cache_hit_tokens?: unknown;
}

/**
 * prompt_tokens is every input token; of it, cached_tokens were read from the cache (DeepSeek:
 * prompt_cache_hit_tokens) and cache_write_tokens written (OpenAI bills writes from GPT-5.6 on).
 * completion_tokens includes reasoning_tokens.
 */
function usageOf(raw: unknown): Usage | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const u = raw as OpenAiUsageWire;
  if (typeof u.prompt_tokens !== 'number' || typeof u.completion_tokens !== 'number') return undefined;
  const details = u.prompt_tokens_details ?? {};
  return reportedUsage({
    promptTokens: tokenCount(u.prompt_tokens),
    completionTokens: tokenCount(u.completion_tokens),
    cacheReadTokens: u.prompt_cache_hit_tokens ?? details.cached_tokens,
    cacheWrite5mTokens: details.cache_write_tokens,
    reasoningTokens: u.completion_tokens_details?.reasoning_tokens,
  });
}

export { stripFences };
