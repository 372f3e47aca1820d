/**
 * Our answers in the Responses format: the response object (its envelope echoes the request),
 * output items from a chat completion (translated providers), and the usage object.
 */
import { randomBytes } from 'node:crypto';
import type { Json } from '../chat/chat-request.ts';
import type { Completion, Usage } from '../shared/chat-wire.ts';
import type { ResponsesAnswer } from '../shared/responses-wire.ts';
import type { ResponsesRequest } from './request.ts';
import { customInput, type ToolTable } from './tools.ts';

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** What a provider answered, in this format (shared/responses-wire.ts). */
export type ResponseAnswer = ResponsesAnswer;

/** The answer's identity: `resp_` + the job id, the time, the request it echoes. */
export interface ResponseIdentity {
  id: string;
  createdAt: number;
  request: ResponsesRequest;
}

/** A new item id: the format's prefix and 48 hex digits (ids of one answer never repeat). */
export function itemId(prefix: 'msg' | 'fc' | 'ctc' | 'rs'): string {
  return `${prefix}_${randomBytes(24).toString('hex')}`;
}

/** The Responses usage object: input includes cached tokens, output includes reasoning tokens. */
export function usageView(usage: Usage): Json {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.cacheReadTokens ?? 0 },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

export interface ResponseState {
  status: ResponseStatus;
  output: Json[];
  usage?: Usage;
  incompleteReason?: string;
  error?: { code: string; message: string };
}

/** The response object: the state of the run, in an envelope echoing the request as that API does. */
export function responseView(who: ResponseIdentity, state: ResponseState): Json {
  const r = who.request;
  return {
    id: who.id,
    object: 'response',
    created_at: who.createdAt,
    status: state.status,
    background: false,
    error: state.error ?? null,
    incomplete_details: state.incompleteReason === undefined ? null : { reason: state.incompleteReason },
    instructions: r.instructions ?? null,
    max_output_tokens: r.maxOutputTokens ?? null,
    model: r.model,
    output: visibleOutput(state.output, r),
    parallel_tool_calls: r.parallelToolCalls ?? true,
    previous_response_id: r.previousResponseId ?? null,
    reasoning: { effort: r.reasoningEffort ?? null, summary: r.reasoningSummary ?? null },
    store: r.store,
    temperature: r.temperature ?? null,
    text: { format: formatView(r), ...(r.verbosity === undefined ? {} : { verbosity: r.verbosity }) },
    tool_choice: r.toolChoice ?? 'auto',
    tools: r.tools ?? [],
    top_p: r.top_p ?? null,
    truncation: r.truncation ?? 'disabled',
    usage: state.usage === undefined ? null : usageView(state.usage),
    user: r.user ?? null,
    metadata: r.metadata ?? {},
  };
}

/** Reasoning's encrypted content reaches the client only when it asked for it (the gateway may keep it to continue a stored conversation). */
export const ENCRYPTED_REASONING = 'reasoning.encrypted_content';

export function visibleItem(item: Json, r: ResponsesRequest): Json {
  if (item.encrypted_content === undefined || r.include.includes(ENCRYPTED_REASONING)) return item;
  const { encrypted_content: _hidden, ...shown } = item;
  return shown;
}

function visibleOutput(output: Json[], r: ResponsesRequest): Json[] {
  return r.include.includes(ENCRYPTED_REASONING) ? output : output.map((item) => visibleItem(item, r));
}

function formatView(r: ResponsesRequest): Json {
  const f = r.format;
  if (f === undefined || f.type !== 'json_schema') return { type: f?.type ?? 'text' };
  return { type: 'json_schema', name: f.name, schema: f.schema, strict: f.strict, ...(f.description === undefined ? {} : { description: f.description }) };
}

/** A reasoning item carrying the provider's reasoning text as its summary. */
export function reasoningItem(text: string, id = itemId('rs')): Json {
  return { id, type: 'reasoning', summary: [{ type: 'summary_text', text }] };
}

export function messageItem(text: string, refusal: string | null, id = itemId('msg'), status = 'completed'): Json {
  const content: Json[] = [];
  if (text !== '' || refusal === null) content.push({ type: 'output_text', text, annotations: [], logprobs: [] });
  if (refusal !== null) content.push({ type: 'refusal', refusal });
  return { id, type: 'message', role: 'assistant', status, content };
}

/** A chat tool call as the client's item: a function call (with its namespace) or a custom tool call. */
export function callItem(call: { id: string; name: string; arguments: string }, tools: ToolTable, id?: string): Json {
  const declared = tools.byFlatName.get(call.name);
  const namespace = declared?.namespace === undefined ? {} : { namespace: declared.namespace };
  if (declared?.kind === 'custom') {
    return { id: id ?? itemId('ctc'), type: 'custom_tool_call', status: 'completed', call_id: call.id, name: declared.name, ...namespace, input: customInput(call.arguments) };
  }
  return { id: id ?? itemId('fc'), type: 'function_call', status: 'completed', call_id: call.id, name: declared?.name ?? call.name, ...namespace, arguments: call.arguments };
}

/** A chat completion as Responses output: reasoning, the message, the calls; a length stop is incomplete. */
export function answerOfCompletion(c: Completion, usage: Usage | undefined, tools: ToolTable): ResponseAnswer {
  const output: Json[] = [];
  if (c.reasoning !== undefined) output.push(reasoningItem(c.reasoning));
  if ((c.content !== null && c.content !== '') || c.refusal !== null || c.toolCalls.length === 0) output.push(messageItem(c.content ?? '', c.refusal));
  for (const call of c.toolCalls) output.push(callItem(call, tools));
  const outputChars = (c.content ?? '').length + (c.reasoning ?? '').length + c.toolCalls.reduce((n, t) => n + t.name.length + t.arguments.length, 0);
  const answer: ResponseAnswer = { output, status: 'completed', usage, outputChars };
  const reason = INCOMPLETE[c.finishReason];
  if (reason !== undefined) {
    answer.status = 'incomplete';
    answer.incompleteReason = reason;
  }
  return answer;
}

/** Chat finish reasons that end a response incomplete, and the reason it gives. */
export const INCOMPLETE: Partial<Record<Completion['finishReason'], string>> = { length: 'max_output_tokens', content_filter: 'content_filter' };
