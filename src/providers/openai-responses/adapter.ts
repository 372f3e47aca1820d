/**
 * provider_1's own Responses endpoint (`POST {base}/responses`), the native row of the
 * Responses door: the door builds the body (the client's, with the context, `store: false`
 * and the held output cap), this adapter sends it, reads the answer and its usage, and
 * relays the stream's events, reading the final response for billing.
 */
import type { UpstreamRequest } from '../adapter.ts';
import { GatewayError } from '../../shared/errors.ts';
import type { ResponsesAnswer, ResponsesJson, ResponsesStreamDecoder, ResponsesStreamEvent } from '../../shared/responses-wire.ts';
import { reportedUsage, tokenCount } from '../../shared/usage.ts';
import type { Usage } from '../../shared/chat-wire.ts';
import { SseLines } from '../sse-lines.ts';
import { providerMessage, upstreamError } from '../upstream-errors.ts';

/** A provider that serves the Responses format itself. */
export interface NativeResponsesAdapter {
  /** `body` is complete but for the model id and the key. */
  buildRequest(body: ResponsesJson, providerModelId: string, apiKey: string): UpstreamRequest;
  parseResponse(body: unknown): ResponsesAnswer;
  streamDecoder(): ResponsesStreamDecoder;
  mapError(status: number, body: unknown, text: string): GatewayError;
}

const isObject = (v: unknown): v is ResponsesJson => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The Responses usage object: input_tokens includes cached_tokens; output_tokens includes reasoning_tokens. */
function usageOf(raw: unknown): Usage | undefined {
  if (!isObject(raw) || typeof raw.input_tokens !== 'number' || typeof raw.output_tokens !== 'number') return undefined;
  const input = isObject(raw.input_tokens_details) ? raw.input_tokens_details : {};
  const output = isObject(raw.output_tokens_details) ? raw.output_tokens_details : {};
  return reportedUsage({
    promptTokens: tokenCount(raw.input_tokens),
    completionTokens: tokenCount(raw.output_tokens),
    cacheReadTokens: input.cached_tokens,
    cacheWrite5mTokens: input.cache_write_tokens,
    reasoningTokens: output.reasoning_tokens,
  });
}

/** Characters generated in the output items (text, reasoning summaries, call arguments and inputs). */
function outputChars(output: readonly ResponsesJson[]): number {
  let chars = 0;
  for (const item of output) {
    for (const field of ['arguments', 'input', 'name'] as const) if (typeof item[field] === 'string') chars += item[field].length;
    for (const list of [item.content, item.summary]) {
      if (!Array.isArray(list)) continue;
      for (const part of list) if (isObject(part) && typeof part.text === 'string') chars += part.text.length;
    }
  }
  return chars;
}

function answerOf(response: ResponsesJson): ResponsesAnswer {
  const output = Array.isArray(response.output) ? response.output.filter(isObject) : [];
  const answer: ResponsesAnswer = { output, status: 'completed', usage: usageOf(response.usage), outputChars: outputChars(output) };
  if (response.status === 'incomplete') {
    answer.status = 'incomplete';
    const details = response.incomplete_details;
    answer.incompleteReason = isObject(details) && typeof details.reason === 'string' ? details.reason : 'max_output_tokens';
  }
  return answer;
}

function failed(response: unknown): GatewayError {
  const error = isObject(response) && isObject(response.error) ? response.error : undefined;
  const message = typeof error?.message === 'string' ? error.message.slice(0, 500) : 'error';
  return new GatewayError('upstream_error', `The model provider failed during the answer: ${message}`, { logCause: 'the provider reported the response failed' });
}

export class OpenAiResponsesAdapter implements NativeResponsesAdapter {
  buildRequest(body: ResponsesJson, providerModelId: string, apiKey: string): UpstreamRequest {
    return {
      path: '/responses',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, model: providerModelId }),
    };
  }

  parseResponse(body: unknown): ResponsesAnswer {
    if (!isObject(body) || !Array.isArray(body.output)) throw new GatewayError('upstream_error', 'The model provider answered without output.');
    if (body.status === 'failed') throw failed(body);
    return answerOf(body);
  }

  streamDecoder(): ResponsesStreamDecoder {
    const sse = new SseLines();
    let done = false;
    const decode = (data: string, out: ResponsesStreamEvent[]) => {
      let event: unknown;
      try {
        event = JSON.parse(data);
      } catch {
        return;
      }
      if (!isObject(event) || typeof event.type !== 'string') return;
      switch (event.type) {
        case 'response.created':
        case 'response.in_progress':
        case 'response.queued':
          // The door sends its own (its id, its envelope).
          return;
        case 'response.completed':
        case 'response.incomplete':
          if (isObject(event.response)) {
            done = true;
            out.push({ type: 'done', answer: answerOf(event.response) });
          }
          return;
        case 'response.failed':
          out.push({ type: 'error', error: failed(event.response) });
          return;
        case 'error':
          out.push({ type: 'error', error: new GatewayError('upstream_error', `The model provider failed during the stream: ${(providerMessage(event, '') ?? 'error').slice(0, 500)}`) });
          return;
        default:
          out.push({ type: 'relay', event });
      }
    };
    return {
      push(text) {
        const out: ResponsesStreamEvent[] = [];
        for (const e of sse.push(text)) decode(e.data, out);
        return out;
      },
      end() {
        const out: ResponsesStreamEvent[] = [];
        for (const e of sse.end()) decode(e.data, out);
        return { events: out, complete: done };
      },
    };
  }

  mapError(status: number, body: unknown, text: string): GatewayError {
    return upstreamError(status, providerMessage(body, text));
  }
}
