/**
 * provider_2: the Anthropic Messages protocol (providers.md §2) behind the adapter
 * interface. Requests are translated in request.ts; answers and event streams are
 * mapped back here: text blocks joined, thinking → reasoning, tool_use → tool calls
 * with `call_…` ids, stop reasons per providers.md §0, usage by usage.ts (cache reads and writes apart).
 */
import type { ToolCall } from '../../shared/chat-wire.ts';
import { GatewayError } from '../../shared/errors.ts';
import type { ProviderAdapter, ProviderCall, StreamDecoder, UpstreamRequest } from '../adapter.ts';
import type { Completion, FinishReason, StreamEvent } from '../../shared/chat-wire.ts';
import { sseDecoder } from '../sse-lines.ts';
import { errorMessageOf } from '../translation.ts';
import { MAX_PASSED_MESSAGE, providerMessage, upstreamError } from '../upstream-errors.ts';
import { anthropicBody } from './request.ts';
import { anthropicUsage } from './usage.ts';

type Json = Record<string, unknown>;

export const ANTHROPIC_VERSION = '2023-06-01';

const FINISH: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

/** Anthropic error types → the HTTP status they come with (for errors inside a stream). */
const ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

function finishOf(reason: unknown, hasToolCalls: boolean): FinishReason {
  const mapped = typeof reason === 'string' ? FINISH[reason] : undefined;
  return mapped ?? (hasToolCalls ? 'tool_calls' : 'stop');
}

/** Anthropic `toolu_…` ids become `call_…` ids; the same upstream id always gives the same call id. */
export function callIdOf(upstreamId: string): string {
  if (upstreamId.startsWith('call_')) return upstreamId;
  return `call_${upstreamId.startsWith('toolu_') ? upstreamId.slice('toolu_'.length) : upstreamId}`;
}

function refusalOf(details: unknown): string | null {
  if (typeof details !== 'object' || details === null) return null;
  const explanation = (details as Json).explanation;
  return typeof explanation === 'string' && explanation !== '' ? explanation : null;
}

/** An `event: error` inside a provider_2 stream → our error (5xx-class as upstream_error). */
export function streamError(body: unknown): GatewayError {
  const error = typeof body === 'object' && body !== null ? (body as Json).error : undefined;
  const type = typeof error === 'object' && error !== null ? (error as Json).type : undefined;
  const message = errorMessageOf(body) ?? 'error';
  const status = (typeof type === 'string' ? ERROR_STATUS[type] : undefined) ?? 500;
  if (status >= 500) return new GatewayError('upstream_error', `The model provider failed during the stream: ${message.slice(0, MAX_PASSED_MESSAGE)}`);
  return upstreamError(status, message);
}

export class AnthropicAdapter implements ProviderAdapter {
  buildRequest(call: ProviderCall, apiKey: string): UpstreamRequest {
    return {
      path: '/v1/messages',
      headers: { 'x-api-key': apiKey, 'anthropic-version': ANTHROPIC_VERSION, 'content-type': 'application/json' },
      body: JSON.stringify(anthropicBody(call)),
    };
  }

  parseResponse(raw: unknown): Completion {
    const body = raw as { content?: unknown; stop_reason?: unknown; stop_details?: unknown; usage?: unknown };
    if (typeof body !== 'object' || body === null || !Array.isArray(body.content)) {
      throw new GatewayError('upstream_error', 'The model provider answered without content.');
    }
    let text = '';
    let reasoning = '';
    const toolCalls: ToolCall[] = [];
    for (const block of body.content as Json[]) {
      if (block.type === 'text' && typeof block.text === 'string') text += block.text;
      else if (block.type === 'thinking' && typeof block.thinking === 'string') reasoning += block.thinking;
      else if (block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') {
        toolCalls.push({ id: callIdOf(block.id), name: block.name, arguments: JSON.stringify(block.input ?? {}) });
      }
    }
    return {
      content: text === '' && toolCalls.length > 0 ? null : text,
      reasoning: reasoning === '' ? undefined : reasoning,
      refusal: body.stop_reason === 'refusal' ? refusalOf(body.stop_details) : null,
      toolCalls,
      finishReason: finishOf(body.stop_reason, toolCalls.length > 0),
      usage: anthropicUsage(body.usage),
    };
  }

  streamDecoder(): StreamDecoder {
    /** Content-block index → tool ordinal (the OpenAI tool `index`), and whether arguments came. */
    const tools = new Map<number, { ordinal: number; args: boolean }>();
    let usage: Json = {};
    let done = false;
    const decode = (name: string | undefined, data: string, events: StreamEvent[]) => {
      let event: Json;
      try {
        event = JSON.parse(data) as Json;
      } catch {
        return;
      }
      const type = name ?? event.type;
      switch (type) {
        case 'message_start': {
          const message = event.message as Json | undefined;
          if (typeof message?.usage === 'object' && message.usage !== null) usage = { ...(message.usage as Json) };
          // The input, cache reads and writes are exact from here on (what a stream the client closes is billed).
          const started = anthropicUsage(usage);
          if (started !== undefined) events.push({ type: 'usage', usage: started });
          return;
        }
        case 'content_block_start': {
          const block = event.content_block as Json | undefined;
          if (block?.type === 'tool_use' && typeof event.index === 'number') {
            const ordinal = tools.size;
            tools.set(event.index, { ordinal, args: false });
            events.push({ type: 'tool_call', index: ordinal, id: callIdOf(String(block.id)), name: String(block.name) });
          }
          return;
        }
        case 'content_block_delta': {
          const delta = event.delta as Json | undefined;
          if (delta === undefined) return;
          if (delta.type === 'text_delta' && typeof delta.text === 'string' && delta.text !== '') events.push({ type: 'content', text: delta.text });
          else if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string' && delta.thinking !== '') events.push({ type: 'reasoning', text: delta.thinking });
          else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string' && delta.partial_json !== '') {
            const tool = typeof event.index === 'number' ? tools.get(event.index) : undefined;
            if (tool === undefined) return;
            tool.args = true;
            events.push({ type: 'tool_arguments', index: tool.ordinal, fragment: delta.partial_json });
          }
          return;
        }
        case 'content_block_stop': {
          // A tool called without arguments: `{}`, as the non-stream answer says.
          const tool = typeof event.index === 'number' ? tools.get(event.index) : undefined;
          if (tool !== undefined && !tool.args) {
            tool.args = true;
            events.push({ type: 'tool_arguments', index: tool.ordinal, fragment: '{}' });
          }
          return;
        }
        case 'message_delta': {
          const delta = event.delta as Json | undefined;
          // Counts here are cumulative and supersede message_start's.
          if (typeof event.usage === 'object' && event.usage !== null) usage = { ...usage, ...(event.usage as Json) };
          const counted = anthropicUsage(usage);
          if (delta?.stop_reason === 'refusal') {
            const refusal = refusalOf(delta.stop_details);
            if (refusal !== null) events.push({ type: 'refusal', text: refusal });
          }
          if (delta !== undefined && delta.stop_reason !== undefined && delta.stop_reason !== null) {
            events.push({ type: 'finish', reason: finishOf(delta.stop_reason, tools.size > 0) });
          }
          if (counted !== undefined) events.push({ type: 'usage', usage: counted });
          return;
        }
        case 'message_stop':
          done = true;
          return;
        case 'error':
          events.push({ type: 'error', error: streamError(event) });
          return;
        default:
          // ping and events this adapter does not know.
          return;
      }
    };
    return sseDecoder((e, events) => decode(e.event, e.data, events), () => done);
  }

  mapError(status: number, body: unknown, text: string): GatewayError {
    return upstreamError(status, providerMessage(body, text));
  }
}
