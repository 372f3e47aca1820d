/**
 * provider_1's Responses API: `POST /v1/responses`, non-stream and SSE, as the real API answers
 * (output items: reasoning, message, function_call / custom_tool_call; usage with cached and
 * reasoning tokens; `incomplete` when `max_output_tokens` is reached). Requests are checked as
 * provider_1 checks them where a gateway bug would show (unknown fields, a tool output without its
 * call, a reasoning item without encrypted content while `store` is false, `previous_response_id`
 * unknown since nothing is stored here). Scenarios, failures and delivery are the shared ones (core.ts).
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { buildAnswer, JSON_TYPE, jsonReply, SSE_HEADERS, SSE_CONTENT_TYPE, streamEnd, type Answer, type Exchange, type Reply, type SseReply } from './core.ts';
import { bearer, contentText, openAIScenarioError, type OpenAIDialect, type Rejection } from './openai-core.ts';
import { followRequest } from './scripted-answers.ts';
import type { Scenario, ScenarioUsage } from './types.ts';
import { fragments, isRecord, nowSeconds, randomId, splitText } from './util.ts';

/** Every top-level field the API takes (Codex's `client_metadata` included); anything else is refused. */
const KNOWN_FIELDS = new Set([
  'model', 'input', 'instructions', 'max_output_tokens', 'max_tool_calls', 'temperature', 'top_p', 'top_logprobs', 'tools', 'tool_choice',
  'parallel_tool_calls', 'text', 'reasoning', 'stream', 'stream_options', 'store', 'previous_response_id', 'conversation', 'metadata', 'user',
  'include', 'truncation', 'background', 'prompt', 'prompt_cache_key', 'prompt_cache_retention', 'safety_identifier', 'service_tier', 'client_metadata',
]);

const INCOMPLETE: Record<string, string> = { length: 'max_output_tokens', max_output_tokens: 'max_output_tokens', content_filter: 'content_filter' };

/** o-series and gpt-5 reasoning models (not the `-chat` variants): they reason by default and refuse a sampling temperature. */
function reasons(model: string, body: Record<string, unknown>): boolean {
  const effort = isRecord(body.reasoning) ? body.reasoning.effort : undefined;
  return (/^o\d/.test(model) || /^gpt-5/.test(model)) && !model.includes('chat') && effort !== 'none';
}

function bad(message: string, param: string | null, code: string | null = null, status = 400): Rejection {
  return { status, error: { message, type: 'invalid_request_error', param, code } };
}

interface InputStats {
  chars: number;
  lastUser: string;
}

/** Checks the input items as the API does; the counts for usage when it passes. */
function readInput(body: Record<string, unknown>): Rejection | InputStats {
  const stats: InputStats = { chars: typeof body.instructions === 'string' ? body.instructions.length : 0, lastUser: '' };
  const input = body.input;
  if (typeof input === 'string') return { chars: stats.chars + input.length, lastUser: input };
  if (!Array.isArray(input)) return bad("Missing required parameter: 'input'.", 'input', 'missing_required_parameter');
  const calls = new Set<string>();
  const store = body.store !== false;
  for (let i = 0; i < input.length; i++) {
    const item: unknown = input[i];
    if (!isRecord(item)) return bad(`Invalid type for 'input[${i}]': expected an object, but got ${typeof item} instead.`, `input[${i}]`, 'invalid_type');
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    switch (type) {
      case 'message': {
        if (!['user', 'assistant', 'system', 'developer'].includes(String(item.role))) {
          return bad(`Invalid value: '${String(item.role)}'. Supported values are: 'assistant', 'system', 'developer', and 'user'.`, `input[${i}].role`, 'invalid_value');
        }
        const text = contentText(item.content);
        stats.chars += text.length;
        if (item.role === 'user' && text !== '') stats.lastUser = text;
        break;
      }
      case 'function_call':
      case 'custom_tool_call':
        if (typeof item.call_id !== 'string') return bad(`Missing required parameter: 'input[${i}].call_id'.`, `input[${i}].call_id`, 'missing_required_parameter');
        calls.add(item.call_id);
        stats.chars += String(item.arguments ?? item.input ?? '').length;
        break;
      case 'function_call_output':
      case 'custom_tool_call_output':
        if (typeof item.call_id !== 'string' || !calls.has(item.call_id)) {
          return bad(`No tool call found for ${type === 'function_call_output' ? 'function' : 'custom tool'} call output with call_id ${String(item.call_id)}.`, 'input', null);
        }
        stats.chars += (typeof item.output === 'string' ? item.output : JSON.stringify(item.output ?? '')).length;
        break;
      case 'reasoning':
      case 'item_reference':
        // Nothing is kept with store false: an item can only come back with its encrypted content.
        if (!store && (type === 'item_reference' || typeof item.encrypted_content !== 'string')) {
          return bad(`Item with id '${String(item.id)}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`, 'input', null, 404);
        }
        break;
      default:
        if (typeof type !== 'string') return bad(`Missing required parameter: 'input[${i}].type'.`, `input[${i}].type`, 'missing_required_parameter');
    }
  }
  return stats;
}

function validate(body: Record<string, unknown>): Rejection | InputStats {
  for (const key of Object.keys(body)) if (!KNOWN_FIELDS.has(key)) return bad(`Unknown parameter: '${key}'.`, key, 'unknown_parameter');
  const model = body.model;
  if (typeof model !== 'string' || model === '') return bad("Missing required parameter: 'model'.", 'model', 'missing_required_parameter');
  if (typeof body.previous_response_id === 'string') return bad(`Previous response with id '${body.previous_response_id}' not found.`, 'previous_response_id', 'previous_response_not_found', 404);
  if (body.background === true && body.store === false) return bad('Background mode requires store=true.', 'background', null);
  const t = body.temperature;
  if (t !== undefined && t !== null) {
    if (typeof t !== 'number' || t < 0 || t > 2) return bad(`Invalid 'temperature': expected a decimal between 0 and 2, but got ${JSON.stringify(t)} instead.`, 'temperature', 'invalid_value');
    if (reasons(model, body) && t !== 1) return bad("Unsupported parameter: 'temperature' is not supported with this model.", 'temperature', 'unsupported_parameter');
  }
  const max = body.max_output_tokens;
  if (max !== undefined && max !== null && (typeof max !== 'number' || !Number.isInteger(max) || max < 16)) {
    return bad(`Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got ${JSON.stringify(max)} instead.`, 'max_output_tokens', 'integer_below_min_value');
  }
  const tools = body.tools;
  if (tools !== undefined && tools !== null) {
    if (!Array.isArray(tools)) return bad(`Invalid type for 'tools': expected an array, but got ${typeof tools} instead.`, 'tools', 'invalid_type');
    for (let i = 0; i < tools.length; i++) {
      const tool: unknown = tools[i];
      if (!isRecord(tool) || typeof tool.type !== 'string') return bad(`Missing required parameter: 'tools[${i}].type'.`, `tools[${i}].type`, 'missing_required_parameter');
      if ((tool.type === 'function' || tool.type === 'custom') && typeof tool.name !== 'string') return bad(`Missing required parameter: 'tools[${i}].name'.`, `tools[${i}].name`, 'missing_required_parameter');
    }
  }
  const format = isRecord(body.text) && isRecord(body.text.format) ? body.text.format : undefined;
  if (format?.type === 'json_schema') {
    if (typeof format.name !== 'string') return bad("Missing required parameter: 'text.format.name'.", 'text.format.name', 'missing_required_parameter');
    if (!isRecord(format.schema)) return bad("Missing required parameter: 'text.format.schema'.", 'text.format.schema', 'missing_required_parameter');
  }
  return readInput(body);
}

/** The tool_choice makes a call compulsory (`required` or one named tool). */
function callForced(body: Record<string, unknown>): boolean {
  const tc = body.tool_choice;
  const hasTools = (Array.isArray(body.tools) && body.tools.length > 0) || declaredTools(body).length > 0;
  return hasTools && (tc === 'required' || (isRecord(tc) && typeof tc.name === 'string'));
}

/** The offered tools by name: custom or not, and the namespace a tool is in (a call of it says so). */
function offeredTools(body: Record<string, unknown>): Map<string, { custom: boolean; namespace?: string }> {
  const tools = new Map<string, { custom: boolean; namespace?: string }>();
  const walk = (list: unknown, namespace?: string): void => {
    if (!Array.isArray(list)) return;
    for (const t of list) {
      if (!isRecord(t)) continue;
      if (t.type === 'namespace' && typeof t.name === 'string') walk(t.tools, t.name);
      else if (typeof t.name === 'string') tools.set(t.name, { custom: t.type === 'custom', ...(namespace === undefined ? {} : { namespace }) });
    }
  };
  walk(body.tools);
  for (const item of declaredTools(body)) walk(item);
  return tools;
}

/** The tool lists of `additional_tools` input items (Codex declares its tools so, beside or instead of `tools`). */
function declaredTools(body: Record<string, unknown>): unknown[] {
  if (!Array.isArray(body.input)) return [];
  return body.input.flatMap((item) => (isRecord(item) && item.type === 'additional_tools' && Array.isArray(item.tools) ? [item.tools] : []));
}

// ---------------------------------------------------------------------------
// The answer as output items

type Item = Record<string, unknown>;

interface Rendered {
  output: Item[];
  status: 'completed' | 'incomplete';
  reason: string | null;
  usage: ScenarioUsage | null;
  /** Per output item: its streamed pieces (summary text, text, arguments). */
  pieces: string[][];
}

/** Cuts the answer at `max_output_tokens` as the model would stop: text shortened, calls not reached. */
function capped(a: Answer, max: number | undefined): { a: Answer; reached: boolean } {
  if (max === undefined || a.usage === null || a.usage.output <= max) return { a, reached: false };
  const room = Math.max(0, max - (a.usage.reasoning ?? 0)) * 4;
  return { a: { ...a, text: a.text.slice(0, room), calls: [], usage: { ...a.usage, output: max } }, reached: true };
}

function render(a: Answer, body: Record<string, unknown>, summarize: boolean): Rendered {
  const max = typeof body.max_output_tokens === 'number' ? body.max_output_tokens : undefined;
  const cut = capped(a, max);
  const ans = cut.a;
  const reason = cut.reached ? 'max_output_tokens' : (INCOMPLETE[ans.finish] ?? null);
  const status = reason === null ? 'completed' : 'incomplete';
  const output: Item[] = [];
  const pieces: string[][] = [];
  const include = Array.isArray(body.include) ? body.include : [];
  if (ans.reasoning !== '') {
    const summary = summarize ? [{ type: 'summary_text', text: ans.reasoning }] : [];
    const item: Item = { id: `rs_${randomId(40)}`, type: 'reasoning', summary };
    if (include.includes('reasoning.encrypted_content')) item.encrypted_content = `gAAAAA${Buffer.from(ans.reasoning).toString('base64')}`;
    output.push(item);
    pieces.push(summarize ? splitText(ans.reasoning, Math.max(1, Math.ceil(ans.chunks / 2))) : []);
  }
  const words = ans.refusal ?? ans.text;
  if (words !== '' || ans.calls.length === 0) {
    const part = ans.refusal !== null ? { type: 'refusal', refusal: ans.refusal } : { type: 'output_text', annotations: [], logprobs: [], text: ans.text };
    output.push({ id: `msg_${randomId(40)}`, type: 'message', status: status === 'incomplete' ? 'incomplete' : 'completed', content: [part], role: 'assistant' });
    pieces.push(splitText(words, ans.chunks));
  }
  const offered = offeredTools(body);
  for (const c of ans.calls) {
    const callId = `call_${randomId(24)}`;
    const tool = offered.get(c.name);
    const namespace = tool?.namespace === undefined ? {} : { namespace: tool.namespace };
    if (tool?.custom === true) {
      const input = typeof c.args.input === 'string' ? c.args.input : c.json;
      output.push({ id: `ctc_${randomId(40)}`, type: 'custom_tool_call', status: 'completed', call_id: callId, input, name: c.name, ...namespace });
      pieces.push(fragments(input));
    } else {
      output.push({ id: `fc_${randomId(40)}`, type: 'function_call', status: 'completed', arguments: c.json, call_id: callId, name: c.name, ...namespace });
      pieces.push(fragments(c.json));
    }
  }
  return { output, status, reason, usage: ans.usage, pieces };
}

function usageOf(u: ScenarioUsage | null): Record<string, unknown> | null {
  if (u === null) return null;
  return {
    input_tokens: u.input,
    input_tokens_details: { cached_tokens: u.cacheRead ?? 0 },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
    total_tokens: u.input + u.output,
  };
}

/** The response object; `r` undefined gives the in-progress shell of `response.created`. */
function responseObject(id: string, created: number, body: Record<string, unknown>, r: Rendered | undefined): Record<string, unknown> {
  const reasoning = isRecord(body.reasoning) ? body.reasoning : {};
  const text = isRecord(body.text) ? body.text : {};
  return {
    id,
    object: 'response',
    created_at: created,
    status: r === undefined ? 'in_progress' : r.status,
    background: false,
    error: null,
    incomplete_details: r?.reason == null ? null : { reason: r.reason },
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: body.max_tool_calls ?? null,
    model: body.model,
    output: r === undefined ? [] : r.output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    reasoning: { effort: reasoning.effort ?? null, summary: reasoning.summary ?? null },
    safety_identifier: null,
    service_tier: 'default',
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: { format: text.format ?? { type: 'text' }, verbosity: text.verbosity ?? 'medium' },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_logprobs: 0,
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? 'disabled',
    usage: r === undefined ? null : usageOf(r.usage),
    user: null,
    metadata: body.metadata ?? {},
  };
}

// ---------------------------------------------------------------------------
// The stream

function streamOf(id: string, created: number, body: Record<string, unknown>, r: Rendered): { events: string[]; content: number[]; finishAt: number } {
  const events: string[] = [];
  const content: number[] = [];
  const obfuscate = !(isRecord(body.stream_options) && body.stream_options.include_obfuscation === false);
  const emit = (type: string, fields: Record<string, unknown>, isContent = false): void => {
    if (isContent) content.push(events.length);
    const data = { type, sequence_number: events.length, ...fields, ...(isContent && obfuscate ? { obfuscation: randomId(8) } : {}) };
    events.push(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  const shell = responseObject(id, created, body, undefined);
  emit('response.created', { response: shell });
  emit('response.in_progress', { response: shell });
  r.output.forEach((item, output_index) => {
    const item_id = item.id;
    const parts = r.pieces[output_index] ?? [];
    const at = { item_id, output_index };
    if (item.type === 'reasoning') {
      emit('response.output_item.added', { output_index, item: { ...item, summary: [] } });
      const summary = item.summary as { text: string }[];
      summary.forEach((s, summary_index) => {
        emit('response.reasoning_summary_part.added', { ...at, summary_index, part: { type: 'summary_text', text: '' } });
        for (const delta of parts) emit('response.reasoning_summary_text.delta', { ...at, summary_index, delta }, true);
        emit('response.reasoning_summary_text.done', { ...at, summary_index, text: s.text });
        emit('response.reasoning_summary_part.done', { ...at, summary_index, part: { type: 'summary_text', text: s.text } });
      });
    } else if (item.type === 'message') {
      emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      const part = (item.content as Item[])[0] as Item;
      const refusal = part.type === 'refusal';
      const at0 = { ...at, content_index: 0 };
      emit('response.content_part.added', { ...at0, part: refusal ? { type: 'refusal', refusal: '' } : { type: 'output_text', annotations: [], logprobs: [], text: '' } });
      for (const delta of parts) emit(refusal ? 'response.refusal.delta' : 'response.output_text.delta', { ...at0, delta, ...(refusal ? {} : { logprobs: [] }) }, true);
      if (refusal) emit('response.refusal.done', { ...at0, refusal: part.refusal });
      else emit('response.output_text.done', { ...at0, text: part.text, logprobs: [] });
      emit('response.content_part.done', { ...at0, part });
    } else if (item.type === 'function_call') {
      emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      for (const delta of parts) emit('response.function_call_arguments.delta', { ...at, delta }, true);
      emit('response.function_call_arguments.done', { ...at, name: item.name, arguments: item.arguments });
    } else {
      emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', input: '' } });
      for (const delta of parts) emit('response.custom_tool_call_input.delta', { ...at, delta }, true);
      emit('response.custom_tool_call_input.done', { ...at, input: item.input });
    }
    emit('response.output_item.done', { output_index, item });
  });
  const finishAt = events.length;
  emit(r.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: responseObject(id, created, body, r) });
  return { events, content, finishAt };
}

/** The failure a real stream ends with: `response.failed` carrying the error, numbered after the last event sent. */
function failedEvent(id: string, created: number, body: Record<string, unknown>, sequence: number): string {
  const response = { ...responseObject(id, created, body, undefined), status: 'failed', error: { code: 'server_error', message: 'An error occurred while processing your request. You can retry your request, or contact us through our help center at help.openai.com if the error persists.' } };
  return `event: response.failed\ndata: ${JSON.stringify({ type: 'response.failed', sequence_number: sequence, response })}\n\n`;
}

/** Where a stream stops after `n` content events (as core's delivery cuts it). */
function stopAt(content: number[], finishAt: number, n: number): number {
  if (n <= 0) return content[0] ?? finishAt;
  if (n >= content.length) return finishAt;
  return (content[n - 1] as number) + 1;
}

// ---------------------------------------------------------------------------
// The route

export function responsesHandler(d: OpenAIDialect): (ex: Exchange) => Reply {
  const refuse = (r: Rejection, opts?: SseReply['opts']): Reply => jsonReply(r.status, { error: r.error }, d.responseHeaders(JSON_TYPE), opts);
  return (ex) => {
    if (ex.method !== 'POST') return refuse({ status: 405, error: d.notFound(ex.method, ex.pathname) });
    const denied = d.auth(bearer(ex), ex.apiKey);
    if (denied !== undefined) return refuse(denied);
    if (ex.bodyInvalid || !isRecord(ex.body)) return refuse({ status: 400, error: d.invalidJson });
    const body = ex.body;
    const checked = validate(body);
    if ('error' in checked) return refuse(checked);
    const model = body.model as string;
    const stream = body.stream === true;

    const picked = ex.take();
    let s: Scenario | null = picked.scenario;
    if (s !== null) {
      if (s.kind === 'hang') return { type: 'hang' };
      if (s.kind === 'error') return openAIScenarioError(d, s, model, picked);
      if (s.kind === 'stream_error' && !stream) return refuse({ status: 500, error: d.errorFor(500, model).error }, picked.opts);
    }
    // A tool choice that forces a call is honoured even unscripted, as the model must.
    if (s === null && callForced(body)) s = followRequest('openai', body);
    const thinking = reasons(model, body);
    const answer = buildAnswer(s, {
      kind: 'openai',
      inputChars: checked.chars,
      lastUserText: checked.lastUser,
      thinking,
      finishes: { stop: 'completed', tool: 'completed', filter: 'content_filter', refusal: 'completed' },
      reasoningInOutput: true,
      callId: () => `call_${randomId(24)}`,
    });
    // A summary is given when asked for (`reasoning.summary`) or when the script writes the reasoning out.
    const scripted = s !== null && (s.kind === 'text' || s.kind === 'tool_calls') && s.reasoning !== undefined;
    const summarize = scripted || (isRecord(body.reasoning) && typeof body.reasoning.summary === 'string');
    const rendered = render(answer, body, summarize);
    const id = `resp_${randomId(48)}`;
    const created = nowSeconds();
    if (!stream) {
      return { ...jsonReply(200, responseObject(id, created, body, rendered), d.responseHeaders(JSON_TYPE), picked.opts), cut: s !== null && s.kind === 'cut' };
    }
    const { events, content, finishAt } = streamOf(id, created, body, rendered);
    const { end, afterChunks } = streamEnd(s);
    const headers: OutgoingHttpHeaders = Object.assign(d.responseHeaders(SSE_CONTENT_TYPE), SSE_HEADERS);
    return {
      type: 'sse',
      headers,
      events,
      content,
      finishAt,
      end,
      afterChunks,
      errorEvent: failedEvent(id, created, body, stopAt(content, finishAt, afterChunks)),
      opts: picked.opts,
    };
  };
}
