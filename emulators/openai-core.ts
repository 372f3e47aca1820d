/**
 * One OpenAI-style Chat Completions engine for every OpenAI-shaped protocol. A small
 * dialect table (openai.ts, deepseek.ts) holds what differs: paths, ids, usage placement
 * and shape, keep-alives, reasoning_content, error wording, and extra validation.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import {
  buildAnswer,
  header,
  jsonReply,
  streamEnd,
  SSE_HEADERS,
  JSON_TYPE,
  SSE_CONTENT_TYPE,
  type Answer,
  type AnswerContext,
  type Exchange,
  type Picked,
  type Reply,
  type SseReply,
} from './core.ts';
import type { Scenario, ScenarioOptions, ScenarioUsage } from './types.ts';
import { fragments, isRecord, nowSeconds, splitText } from './util.ts';

export interface OpenAIErrorObject {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

/** Facts about the request that the dialect needs while validating and rendering. */
export interface ChatRequestInfo {
  model: string;
  stream: boolean;
  includeUsage: boolean;
  /** `stream_options.include_obfuscation` is not false. */
  obfuscation: boolean;
  /** The dialect's thinking mode is on (DeepSeek reasoner / thinking enabled). */
  thinking: boolean;
  /** tool_choice names one function. */
  namedToolChoice: boolean;
}

export interface OpenAIDialect {
  kind: 'openai' | 'deepseek';
  basePath: string;
  chatPaths: ReadonlySet<string>;
  embeddingsPath?: string;
  roles: readonly string[];
  completionId(): string;
  callId(index: number): string;
  /** Fields between `model` and `choices` in every response and chunk, e.g. `"system_fingerprint":"fp_1",` (JSON text with trailing comma). */
  extraFields: string;
  /** Object key/values for the same fields in non-stream responses. */
  extraObject: Record<string, unknown>;
  /** 'separate': a `choices:[]` chunk when include_usage (OpenAI); 'finish': on the finish chunk always (DeepSeek). */
  usagePlacement: 'separate' | 'finish';
  usage(u: ScenarioUsage): Record<string, unknown>;
  /** Random padding on chunks unless include_obfuscation is false (OpenAI). */
  obfuscation: boolean;
  /** `reasoning_content` in messages and deltas when thinking (DeepSeek). */
  reasoningContent: boolean;
  /** SSE keep-alive comment and blank lines before slow JSON (DeepSeek). */
  keepAlive: boolean;
  /** OpenAI's observed quirk: a forced named tool_choice finishes with `stop`. */
  namedToolChoiceStops: boolean;
  finishes: AnswerContext['finishes'];
  /** Content of the assistant message for a blocked answer. */
  blockedContent: string | null;
  thinking(body: Record<string, unknown>): boolean;
  /** Response headers (a fresh object the caller may change), content type included. */
  responseHeaders(contentType: string): OutgoingHttpHeaders;
  /** Missing/wrong key → status and body; undefined when accepted. */
  auth(token: string | undefined, apiKey: string): { status: number; error: OpenAIErrorObject } | undefined;
  /** The provider's error body for a scripted status. */
  errorFor(status: number, model: string): { error: OpenAIErrorObject; headers?: Record<string, string> };
  streamError: OpenAIErrorObject;
  invalidJson: OpenAIErrorObject;
  notFound(method: string, pathname: string): OpenAIErrorObject;
  /** Validation errors worded per provider. */
  invalid: InvalidWording;
  /** Provider-specific checks after the common ones. */
  extraChecks(body: Record<string, unknown>, info: ChatRequestInfo, ex: Exchange): { status: number; error: OpenAIErrorObject } | undefined;
}

export interface InvalidWording {
  missingModel(): { status: number; error: OpenAIErrorObject };
  missingMessages(): { status: number; error: OpenAIErrorObject };
  emptyMessages(): { status: number; error: OpenAIErrorObject };
  badRole(index: number, role: unknown, roles: readonly string[]): { status: number; error: OpenAIErrorObject };
  generic(status: number, message: string, param: string | null, code: string | null): { status: number; error: OpenAIErrorObject };
}

export type Rejection = { status: number; error: OpenAIErrorObject };

function errReply(r: Rejection, headers: OutgoingHttpHeaders, opts?: ScenarioOptions): Reply {
  return jsonReply(r.status, { error: r.error }, headers, opts);
}

// ---------------------------------------------------------------------------
// Request reading

export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let s = '';
  for (const p of content) {
    if (isRecord(p) && typeof p.text === 'string') s = s === '' ? p.text : `${s} ${p.text}`;
  }
  return s;
}

function inputStats(messages: unknown[]): { chars: number; lastUser: string } {
  let chars = 0;
  let lastUser = '';
  let found = false;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!isRecord(m)) continue;
    const text = contentText(m.content);
    chars += text.length;
    if (!found && m.role === 'user' && text !== '') {
      lastUser = text;
      found = true;
    }
    if (Array.isArray(m.tool_calls)) {
      for (const tc of m.tool_calls) {
        if (isRecord(tc) && isRecord(tc.function) && typeof tc.function.arguments === 'string') chars += tc.function.arguments.length;
      }
    }
  }
  return { chars, lastUser };
}

const USER_PARTS = new Set(['text', 'image_url', 'input_audio', 'file']);
const ASSISTANT_PARTS = new Set(['text', 'refusal']);
const TEXT_PARTS = new Set(['text']);
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** The checks every OpenAI-shaped API makes; undefined when the request is acceptable. */
function validateChat(d: OpenAIDialect, body: Record<string, unknown>, info: ChatRequestInfo, ex: Exchange): Rejection | undefined {
  const w = d.invalid;
  if (typeof body.model !== 'string' || body.model === '') return w.missingModel();
  const messages = body.messages;
  if (!Array.isArray(messages)) return w.missingMessages();
  if (messages.length === 0) return w.emptyMessages();
  if (body.stream_options !== undefined && body.stream_options !== null && body.stream !== true) {
    return w.generic(400, "The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options', null);
  }
  if (body.temperature !== undefined && body.temperature !== null) {
    const t = body.temperature;
    if (typeof t !== 'number') return w.generic(400, `Invalid type for 'temperature': expected a decimal, but got ${typeof t} instead.`, 'temperature', 'invalid_type');
    if (t > 2) return w.generic(400, `Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got ${t} instead.`, 'temperature', 'decimal_above_max_value');
    if (t < 0) return w.generic(400, `Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got ${t} instead.`, 'temperature', 'decimal_below_min_value');
  }

  // Messages: roles, parts, and the tool-call flow.
  let pending: Set<string> | null = null;
  let pendingFrom = -1;
  let answered: Set<string> | null = null;
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    if (!isRecord(m)) return w.generic(400, `Invalid type for 'messages[${i}]': expected an object, but got ${Array.isArray(m) ? 'an array' : typeof m} instead.`, `messages[${i}]`, 'invalid_type');
    const role = m.role;
    if (typeof role !== 'string' || !d.roles.includes(role)) return w.badRole(i, role, d.roles);
    if (role !== 'tool' && pending !== null && pending.size > 0) {
      return w.generic(400, `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...pending].join(', ')}`, `messages.[${pendingFrom}].role`, null);
    }
    if (role !== 'tool') {
      pending = null;
      answered = null;
    }
    const content = m.content;
    const allowed = role === 'user' ? USER_PARTS : role === 'assistant' ? ASSISTANT_PARTS : TEXT_PARTS;
    if (Array.isArray(content)) {
      for (let j = 0; j < content.length; j++) {
        const p: unknown = content[j];
        const type = isRecord(p) ? p.type : undefined;
        if (typeof type !== 'string' || !allowed.has(type)) {
          if (typeof type === 'string' && USER_PARTS.has(type) && role !== 'user') {
            return w.generic(400, `Invalid 'messages[${i}]'. Only text content parts are allowed for messages with role '${role}', but this message contains a part of type '${type}'.`, `messages[${i}]`, 'invalid_value');
          }
          return w.generic(400, `Invalid value: '${String(type)}'. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', 'audio', and 'file'.`, `messages[${i}].content[${j}].type`, 'invalid_value');
        }
        if (type === 'text' && typeof (p as Record<string, unknown>).text !== 'string') {
          return w.generic(400, `Missing required parameter: 'messages[${i}].content[${j}].text'.`, `messages[${i}].content[${j}].text`, 'missing_required_parameter');
        }
      }
    } else if (typeof content !== 'string') {
      const toolCalls = Array.isArray(m.tool_calls) && m.tool_calls.length > 0;
      const nullOk = role === 'assistant' && (content === null || content === undefined) && (toolCalls || typeof m.refusal === 'string' || m.function_call !== undefined);
      if (!nullOk) {
        return content === undefined
          ? w.generic(400, `Missing required parameter: 'messages[${i}].content'.`, `messages[${i}].content`, 'missing_required_parameter')
          : w.generic(400, `Invalid type for 'messages[${i}].content': expected one of a string or array of objects, but got ${content === null ? 'null' : typeof content} instead.`, `messages[${i}].content`, 'invalid_type');
      }
    }
    if (role === 'assistant' && m.tool_calls !== undefined && m.tool_calls !== null) {
      if (!Array.isArray(m.tool_calls)) return w.generic(400, `Invalid type for 'messages[${i}].tool_calls': expected an array, but got ${typeof m.tool_calls} instead.`, `messages[${i}].tool_calls`, 'invalid_type');
      const ids = new Set<string>();
      for (let j = 0; j < m.tool_calls.length; j++) {
        const tc: unknown = m.tool_calls[j];
        const at = `messages[${i}].tool_calls[${j}]`;
        if (!isRecord(tc) || typeof tc.id !== 'string') return w.generic(400, `Missing required parameter: '${at}.id'.`, `${at}.id`, 'missing_required_parameter');
        if (tc.type !== 'function') return w.generic(400, `Missing required parameter: '${at}.type'.`, `${at}.type`, 'missing_required_parameter');
        const fn = tc.function;
        if (!isRecord(fn) || typeof fn.name !== 'string') return w.generic(400, `Missing required parameter: '${at}.function.name'.`, `${at}.function.name`, 'missing_required_parameter');
        if (typeof fn.arguments !== 'string') {
          return w.generic(400, `Invalid type for '${at}.function.arguments': expected a string, but got ${fn.arguments === undefined ? 'nothing' : Array.isArray(fn.arguments) ? 'an array' : fn.arguments === null ? 'null' : typeof fn.arguments === 'object' ? 'an object' : typeof fn.arguments} instead.`, `${at}.function.arguments`, 'invalid_type');
        }
        ids.add(tc.id);
      }
      if (ids.size > 0) {
        pending = new Set(ids);
        answered = ids;
        pendingFrom = i;
      }
    }
    if (role === 'tool') {
      if (typeof m.tool_call_id !== 'string') return w.generic(400, `Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.`, `messages.[${i}].tool_call_id`, null);
      if (answered === null) return w.generic(400, "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", `messages.[${i}].role`, null);
      if (!answered.has(m.tool_call_id)) return w.generic(400, `Invalid parameter: 'tool_call_id' of '${m.tool_call_id}' not found in 'tool_calls' of previous message.`, `messages.[${i}].tool_call_id`, null);
      pending?.delete(m.tool_call_id);
    }
  }
  if (pending !== null && pending.size > 0) {
    return w.generic(400, `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...pending].join(', ')}`, `messages.[${pendingFrom}].role`, null);
  }

  if (body.tools !== undefined && body.tools !== null) {
    if (!Array.isArray(body.tools)) return w.generic(400, `Invalid type for 'tools': expected an array, but got ${typeof body.tools} instead.`, 'tools', 'invalid_type');
    for (let j = 0; j < body.tools.length; j++) {
      const t: unknown = body.tools[j];
      if (!isRecord(t) || t.type !== 'function' || !isRecord(t.function)) return w.generic(400, `Missing required parameter: 'tools[${j}].function'.`, `tools[${j}].function`, 'missing_required_parameter');
      const name = t.function.name;
      if (typeof name !== 'string' || !TOOL_NAME.test(name)) {
        return w.generic(400, `Invalid 'tools[${j}].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`, `tools[${j}].function.name`, 'invalid_value');
      }
    }
  }
  const rf = body.response_format;
  if (isRecord(rf) && rf.type === 'json_object') {
    let mentions = false;
    for (const m of messages) if (isRecord(m) && contentText(m.content).toLowerCase().includes('json')) mentions = true;
    if (!mentions) return w.generic(400, "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.", 'messages', null);
  }
  return d.extraChecks(body, info, ex);
}

// ---------------------------------------------------------------------------
// Rendering

const OBFUSCATION = Array.from({ length: 16 }, (_, i) => 'Qx7pLm2ZrT9wKd4BvN8sYc'.slice(0, (i * 7) % 17));

function finishOf(d: OpenAIDialect, a: Answer, info: ChatRequestInfo): string {
  if (a.calls.length > 0 && d.namedToolChoiceStops && info.namedToolChoice && a.finish === d.finishes.tool) return 'stop';
  return a.finish;
}

function nonStreamBody(d: OpenAIDialect, a: Answer, info: ChatRequestInfo, id: string): string {
  const message: Record<string, unknown> = { role: 'assistant' };
  if (a.blocked) message.content = d.blockedContent;
  else if (a.refusal !== null && d.kind === 'openai') message.content = null;
  else if (a.text === '' && a.calls.length > 0) message.content = d.kind === 'openai' ? null : '';
  else message.content = a.refusal !== null && a.text === '' ? a.refusal : a.text;
  if (d.reasoningContent && (info.thinking || a.reasoning !== '')) message.reasoning_content = a.reasoning;
  if (a.calls.length > 0) {
    message.tool_calls = a.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.json } }));
  }
  if (d.kind === 'openai') {
    message.refusal = a.refusal;
    message.annotations = [];
  }
  const out: Record<string, unknown> = {
    id,
    object: 'chat.completion',
    created: nowSeconds(),
    model: info.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishOf(d, a, info) }],
  };
  if (a.usage !== null) out.usage = d.usage(a.usage);
  Object.assign(out, d.extraObject);
  return JSON.stringify(out);
}

function streamReply(d: OpenAIDialect, a: Answer, info: ChatRequestInfo, id: string, scenario: Scenario | null, picked: Picked): SseReply {
  const prefix = `data: {"id":"${id}","object":"chat.completion.chunk","created":${nowSeconds()},"model":${JSON.stringify(info.model)},${d.extraFields}"choices":[{"index":0,"delta":`;
  const usageNull = info.includeUsage ? ',"usage":null' : '';
  const obf = d.obfuscation && info.obfuscation;
  let n = 0;
  const tail = (): string => (obf ? `,"obfuscation":"${OBFUSCATION[n++ & 15]}"}\n\n` : '}\n\n');
  const chunk = (delta: string): string => `${prefix}${delta},"logprobs":null,"finish_reason":null}]${usageNull}${tail()}`;
  const events: string[] = [];
  const content: number[] = [];
  const push = (delta: string): void => {
    content.push(events.length);
    events.push(chunk(delta));
  };
  const thinking = d.reasoningContent && (info.thinking || a.reasoning !== '');
  const refusal = a.refusal !== null && d.kind === 'openai';

  // (1) the role delta; OpenAI merges it with the first tool call when there is no text.
  const calls = a.calls;
  let firstCallMerged = false;
  if (thinking) events.push(chunk('{"role":"assistant","content":null,"reasoning_content":""}'));
  else if (d.kind === 'deepseek') events.push(chunk('{"role":"assistant","content":""}'));
  else if (refusal) events.push(chunk('{"role":"assistant","content":null,"refusal":""}'));
  else if (a.text === '' && calls.length > 0) firstCallMerged = true;
  else events.push(chunk('{"role":"assistant","content":"","refusal":null}'));

  // (2) reasoning, text or refusal pieces.
  if (thinking) for (const piece of splitText(a.reasoning, Math.max(1, Math.ceil(a.chunks / 2)))) push(`{"content":null,"reasoning_content":${JSON.stringify(piece)}}`);
  if (refusal) {
    for (const piece of splitText(a.refusal ?? '', a.chunks)) push(`{"refusal":${JSON.stringify(piece)}}`);
  } else {
    // Dialects without a refusal field say it as content (with their content-filter finish).
    const text = a.text === '' && a.refusal !== null ? a.refusal : a.text;
    const after = thinking ? ',"reasoning_content":null}' : '}';
    for (const piece of splitText(text, a.chunks)) push(`{"content":${JSON.stringify(piece)}${after}`);
  }

  // (3) tool calls: a head delta with id/name/arguments "", then argument fragments.
  calls.forEach((c, i) => {
    const head = `{"index":${i},"id":${JSON.stringify(c.id)},"type":"function","function":{"name":${JSON.stringify(c.name)},"arguments":""}}`;
    if (i === 0 && firstCallMerged) push(`{"role":"assistant","content":null,"tool_calls":[${head}],"refusal":null}`);
    else push(`{"tool_calls":[${head}]}`);
    for (const f of fragments(c.json)) push(`{"tool_calls":[{"index":${i},"function":{"arguments":${JSON.stringify(f)}}}]}`);
  });

  // (4) finish, usage, terminator.
  const finishAt = events.length;
  const finish = JSON.stringify(finishOf(d, a, info));
  const usage = a.usage === null ? null : JSON.stringify(d.usage(a.usage));
  if (d.usagePlacement === 'finish') {
    const delta = d.kind === 'deepseek' ? (thinking ? '{"content":"","reasoning_content":null}' : '{"content":""}') : '{}';
    const usagePart = usage !== null ? `,"usage":${usage}` : usageNull;
    events.push(`${prefix}${delta},"logprobs":null,"finish_reason":${finish}}]${usagePart}${tail()}`);
  } else {
    events.push(`${prefix}{},"logprobs":null,"finish_reason":${finish}}]${usageNull}${tail()}`);
    if (info.includeUsage && usage !== null) {
      const p = prefix.slice(0, prefix.indexOf('"choices":['));
      events.push(`${p}"choices":[],"usage":${usage}${tail()}`);
    }
  }
  events.push('data: [DONE]\n\n');

  const { end, afterChunks } = streamEnd(scenario);
  return {
    type: 'sse',
    headers: Object.assign(d.responseHeaders(SSE_CONTENT_TYPE), SSE_HEADERS),
    events,
    content,
    finishAt,
    keepAlive: d.keepAlive ? { at: 0, text: ': keep-alive\n\n' } : undefined,
    end,
    afterChunks,
    errorEvent: `data: ${JSON.stringify({ error: d.streamError })}\n\n`,
    opts: picked.opts,
  };
}

// ---------------------------------------------------------------------------
// Handlers

function scenarioError(d: OpenAIDialect, s: Extract<Scenario, { kind: 'error' }>, model: string, picked: Picked): Reply {
  const def = d.errorFor(s.status, model);
  const body = s.body !== undefined ? s.body : { error: def.error };
  return jsonReply(s.status, body, Object.assign(d.responseHeaders(JSON_TYPE), def.headers, s.headers), picked.opts);
}

function handleChat(d: OpenAIDialect, ex: Exchange, body: Record<string, unknown>): Reply {
  const so = isRecord(body.stream_options) ? body.stream_options : undefined;
  const tc = body.tool_choice;
  const info: ChatRequestInfo = {
    model: typeof body.model === 'string' ? body.model : '',
    stream: body.stream === true,
    includeUsage: so?.include_usage === true,
    obfuscation: so?.include_obfuscation !== false,
    thinking: d.thinking(body),
    namedToolChoice: isRecord(tc) && tc.type === 'function',
  };
  const bad = validateChat(d, body, info, ex);
  if (bad !== undefined) return errReply(bad, d.responseHeaders(JSON_TYPE));

  const picked = ex.take();
  const s = picked.scenario;
  if (s !== null) {
    if (s.kind === 'hang') return { type: 'hang' };
    if (s.kind === 'error') return scenarioError(d, s, info.model, picked);
    if (s.kind === 'stream_error' && !info.stream) return errReply({ status: 500, error: d.errorFor(500, info.model).error }, d.responseHeaders(JSON_TYPE), picked.opts);
  }
  const stats = inputStats(body.messages as unknown[]);
  const answer = buildAnswer(s, {
    kind: d.kind,
    inputChars: stats.chars,
    lastUserText: stats.lastUser,
    thinking: info.thinking,
    finishes: d.finishes,
    reasoningInOutput: true,
    callId: d.callId,
  });
  const id = d.completionId();
  if (info.stream) return streamReply(d, answer, info, id, s, picked);
  return {
    type: 'json',
    status: 200,
    headers: d.responseHeaders(JSON_TYPE),
    body: nonStreamBody(d, answer, info, id),
    opts: picked.opts,
    blankLineKeepAlives: d.keepAlive,
    cut: s !== null && s.kind === 'cut',
  };
}

export type EmbeddingsHandler = (ex: Exchange, body: Record<string, unknown>, picked: () => Picked) => Reply;

export function openAIStyleHandler(d: OpenAIDialect, embeddings?: EmbeddingsHandler): (ex: Exchange) => Reply {
  return (ex) => {
    const isChat = d.chatPaths.has(ex.pathname);
    const isEmbeddings = embeddings !== undefined && ex.pathname === d.embeddingsPath;
    if (!isChat && !isEmbeddings) return errReply({ status: 404, error: d.notFound(ex.method, ex.pathname) }, d.responseHeaders(JSON_TYPE));
    if (ex.method !== 'POST') return errReply({ status: 405, error: d.notFound(ex.method, ex.pathname) }, d.responseHeaders(JSON_TYPE));
    const denied = d.auth(bearer(ex), ex.apiKey);
    if (denied !== undefined) return errReply(denied, d.responseHeaders(JSON_TYPE));
    if (ex.bodyInvalid || !isRecord(ex.body)) return errReply({ status: 400, error: d.invalidJson }, d.responseHeaders(JSON_TYPE));
    if (isEmbeddings) return embeddings(ex, ex.body, () => ex.take());
    return handleChat(d, ex, ex.body);
  };
}

export function bearer(ex: Exchange): string | undefined {
  const v = header(ex, 'authorization');
  if (v === undefined) return undefined;
  if (v.startsWith('Bearer ')) return v.slice(7).trim();
  const m = /^bearer\s+(.*)$/i.exec(v);
  return m === null ? '' : (m[1] ?? '').trim();
}

export { scenarioError as openAIScenarioError };
