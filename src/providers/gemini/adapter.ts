/**
 * provider_3: the Gemini generateContent protocol (providers.md §3) behind the adapter
 * interface. Requests are translated in request.ts; answers and SSE streams are mapped
 * back here: text parts joined, thought parts → reasoning, functionCall parts → tool
 * calls with minted `call_…` ids, finish reasons and usage per providers.md §0 and
 * docs/decisions.md.
 */
import type { ToolCall } from '../../shared/chat-wire.ts';
import { GatewayError } from '../../shared/errors.ts';
import type { ProviderAdapter, ProviderCall, StreamDecoder, UpstreamRequest } from '../adapter.ts';
import type { Completion, FinishReason, StreamEvent, Usage } from '../../shared/chat-wire.ts';
import { sseDecoder } from '../sse-lines.ts';
import { errorMessageOf, mintCallId } from '../translation.ts';
import { MAX_PASSED_MESSAGE, providerMessage, upstreamError } from '../upstream-errors.ts';
import { geminiBody } from './request.ts';
import { reportedUsage, tokenCount } from '../../shared/usage.ts';

type Json = Record<string, unknown>;

const CONTENT_FILTER = new Set([
  'SAFETY', 'PROHIBITED_CONTENT', 'BLOCKLIST', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'LANGUAGE', 'RECITATION', 'IMAGE_RECITATION',
]);

/** The model failed to produce a usable tool call: a provider failure, refunded (docs/decisions.md). */
const FAILED_TOOL_CALL = new Set(['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'TOO_MANY_TOOL_CALLS']);

/** A finish reason, or the provider failure it stands for. */
function finishOf(reason: string, hasToolCalls: boolean): FinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (CONTENT_FILTER.has(reason)) return 'content_filter';
  if (FAILED_TOOL_CALL.has(reason)) {
    throw new GatewayError('upstream_error', `The model produced an unusable tool call (${reason}). Nothing was charged; retry.`);
  }
  // STOP, FINISH_REASON_UNSPECIFIED, OTHER and anything new: a function call ends with STOP too.
  return hasToolCalls ? 'tool_calls' : 'stop';
}

/**
 * prompt = promptTokenCount (cached tokens included) + toolUsePromptTokenCount, of which
 * cachedContentTokenCount was read from the cache (implicit or explicit caching);
 * completion = candidates + thoughts, of which thoughtsTokenCount is reasoning.
 */
function usageOf(raw: unknown): Usage | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const u = raw as Json;
  if (typeof u.promptTokenCount !== 'number') return undefined;
  const thoughts = tokenCount(u.thoughtsTokenCount);
  return reportedUsage({
    promptTokens: tokenCount(u.promptTokenCount) + tokenCount(u.toolUsePromptTokenCount),
    completionTokens: tokenCount(u.candidatesTokenCount) + thoughts,
    cacheReadTokens: u.cachedContentTokenCount,
    reasoningTokens: thoughts,
  });
}

/** The provider's status for an error it sent in the body (errors inside a stream). */
function bodyError(body: Json): GatewayError {
  const error = body.error as Json;
  const status = typeof error.code === 'number' ? error.code : 500;
  const message = errorMessageOf(body) ?? 'error';
  if (status >= 500) return new GatewayError('upstream_error', `The model provider failed during the stream: ${message.slice(0, MAX_PASSED_MESSAGE)}`);
  return upstreamError(status, message);
}

interface Candidate {
  parts: Json[];
  finishReason: string | undefined;
}

function candidateOf(body: Json): Candidate | undefined {
  const candidate = (body.candidates as Json[] | undefined)?.[0];
  if (candidate === undefined) return undefined;
  const content = candidate.content as Json | undefined;
  return {
    parts: Array.isArray(content?.parts) ? (content.parts as Json[]) : [],
    finishReason: typeof candidate.finishReason === 'string' ? candidate.finishReason : undefined,
  };
}

/** A prompt Gemini blocked: HTTP 200, no candidates, promptFeedback.blockReason. */
function blocked(body: Json): boolean {
  const feedback = body.promptFeedback as Json | undefined;
  return (body.candidates === undefined || (Array.isArray(body.candidates) && body.candidates.length === 0)) && typeof feedback?.blockReason === 'string';
}

function functionCallOf(part: Json): { name: string; args: unknown } | undefined {
  const call = part.functionCall as Json | undefined;
  if (typeof call !== 'object' || call === null || typeof call.name !== 'string') return undefined;
  return { name: call.name, args: call.args ?? {} };
}

export class GeminiAdapter implements ProviderAdapter {
  buildRequest(call: ProviderCall, apiKey: string): UpstreamRequest {
    const model = encodeURIComponent(call.providerModelId);
    return {
      path: call.stream ? `/v1beta/models/${model}:streamGenerateContent?alt=sse` : `/v1beta/models/${model}:generateContent`,
      headers: { 'x-goog-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(geminiBody(call)),
    };
  }

  parseResponse(raw: unknown): Completion {
    if (typeof raw !== 'object' || raw === null) throw new GatewayError('upstream_error', 'The model provider sent an unreadable answer.');
    const body = raw as Json;
    if (body.error !== undefined) throw bodyError(body);
    const usage = usageOf(body.usageMetadata);
    if (blocked(body)) return { content: '', reasoning: undefined, refusal: null, toolCalls: [], finishReason: 'content_filter', usage };
    const candidate = candidateOf(body);
    if (candidate === undefined) throw new GatewayError('upstream_error', 'The model provider answered without a candidate.');
    let text = '';
    let reasoning = '';
    const toolCalls: ToolCall[] = [];
    for (const part of candidate.parts) {
      const call = functionCallOf(part);
      if (call !== undefined) toolCalls.push({ id: mintCallId(), name: call.name, arguments: JSON.stringify(call.args) });
      else if (typeof part.text === 'string') {
        if (part.thought === true) reasoning += part.text;
        else text += part.text;
      }
    }
    return {
      content: text === '' && toolCalls.length > 0 ? null : text,
      reasoning: reasoning === '' ? undefined : reasoning,
      refusal: null,
      toolCalls,
      finishReason: finishOf(candidate.finishReason ?? 'STOP', toolCalls.length > 0),
      usage,
    };
  }

  streamDecoder(): StreamDecoder {
    let tools = 0;
    let done = false;
    const decode = (data: string, events: StreamEvent[]) => {
      let chunk: Json;
      try {
        chunk = JSON.parse(data) as Json;
      } catch {
        return;
      }
      if (chunk.error !== undefined) {
        events.push({ type: 'error', error: bodyError(chunk) });
        return;
      }
      const usage = usageOf(chunk.usageMetadata);
      if (blocked(chunk)) {
        done = true;
        events.push({ type: 'finish', reason: 'content_filter' });
        if (usage !== undefined) events.push({ type: 'usage', usage });
        return;
      }
      const candidate = candidateOf(chunk);
      for (const part of candidate?.parts ?? []) {
        const call = functionCallOf(part);
        if (call !== undefined) {
          // Gemini sends each call whole: its arguments are one fragment.
          const index = tools++;
          events.push({ type: 'tool_call', index, id: mintCallId(), name: call.name });
          events.push({ type: 'tool_arguments', index, fragment: JSON.stringify(call.args) });
        } else if (typeof part.text === 'string' && part.text !== '') {
          events.push({ type: part.thought === true ? 'reasoning' : 'content', text: part.text });
        }
      }
      if (candidate?.finishReason !== undefined) {
        done = true;
        try {
          events.push({ type: 'finish', reason: finishOf(candidate.finishReason, tools > 0) });
        } catch (error) {
          events.push({ type: 'error', error: error as GatewayError });
          return;
        }
      }
      // Cumulative on every chunk: the last one counts.
      if (usage !== undefined) events.push({ type: 'usage', usage });
    };
    return sseDecoder((e, events) => decode(e.data, events), () => done);
  }

  mapError(status: number, body: unknown, text: string): GatewayError {
    // A key Google refuses is a 400 (API_KEY_INVALID), and billing or region trouble a
    // 400 FAILED_PRECONDITION: our credentials, not the client's request.
    if (status === 400 && (hasReason(body, 'API_KEY_INVALID') || statusName(body) === 'FAILED_PRECONDITION')) return upstreamError(401, undefined);
    return upstreamError(status, providerMessage(body, text));
  }

  retryDelayMs(body: unknown): number | undefined {
    return retryInfoDelay(body);
  }
}

/** google.rpc.RetryInfo's retryDelay ("1s", "0.5s") in an error's details. */
function retryInfoDelay(body: unknown): number | undefined {
  const error = typeof body === 'object' && body !== null ? (body as Json).error : undefined;
  const details = typeof error === 'object' && error !== null ? (error as Json).details : undefined;
  if (!Array.isArray(details)) return undefined;
  for (const detail of details as unknown[]) {
    const delay = typeof detail === 'object' && detail !== null ? (detail as Json).retryDelay : undefined;
    const seconds = typeof delay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(delay)?.[1] : undefined;
    if (seconds !== undefined) return Number(seconds) * 1000;
  }
  return undefined;
}

function statusName(body: unknown): string | undefined {
  const error = typeof body === 'object' && body !== null ? (body as Json).error : undefined;
  return typeof error === 'object' && error !== null && typeof (error as Json).status === 'string' ? ((error as Json).status as string) : undefined;
}

function hasReason(body: unknown, reason: string): boolean {
  const error = typeof body === 'object' && body !== null ? (body as Json).error : undefined;
  const details = typeof error === 'object' && error !== null ? (error as Json).details : undefined;
  return Array.isArray(details) && details.some((d) => typeof d === 'object' && d !== null && (d as Json).reason === reason);
}
