/**
 * The Responses request body (DECISIONS "Agent formats: the Responses route"), validated and
 * read into what the door needs: the items (kept as sent), the tools table, the parameters in
 * the internal form, and the fields the answer echoes. What real clients send is taken:
 * Codex's `client_metadata`, `prompt_cache_key`, `include`, `reasoning.summary`,
 * `text.verbosity`; unknown fields are dropped and named in X-Service-Ignored-Params.
 */
import { boolean, bounded, integer, invalid, isObject, number, parseModels, present, string, type ChatRequest, type Json } from '../chat/chat-request.ts';
import type { ResponseFormat } from '../shared/chat-wire.ts';
import { GatewayError } from '../shared/errors.ts';
import { chatMessages, normalInput, type InputItem } from './input-items.ts';
import { addTools, emptyToolTable, parseToolChoice, type ToolTable } from './tools.ts';

/** Fields read here: taken, translated or echoed. */
const KNOWN = new Set([
  'model', 'models', 'input', 'instructions', 'max_output_tokens', 'temperature', 'top_p', 'tools', 'tool_choice',
  'parallel_tool_calls', 'text', 'reasoning', 'stream', 'store', 'previous_response_id', 'metadata', 'user', 'include',
  'truncation', 'background', 'stream_options',
]);
/** Hints real clients send that no translated provider has a use for: taken quietly (the native provider receives them). */
const QUIET = new Set(['client_metadata', 'prompt_cache_key', 'safety_identifier', 'service_tier', 'prompt_cache_retention']);

export interface ResponsesRequest {
  model: string;
  models?: string[];
  /** This request's own input items, typed (a string input is one user message). */
  input: InputItem[];
  instructions?: string;
  stream: boolean;
  store: boolean;
  previousResponseId?: string;
  maxOutputTokens?: number;
  temperature?: number;
  top_p?: number;
  parallelToolCalls?: boolean;
  user?: string;
  reasoningEffort?: string;
  reasoningSummary?: string;
  verbosity?: string;
  format?: ResponseFormat;
  /** tool_choice as the client sent it (echoed), and its raw tools list (echoed; the native provider takes it). */
  toolChoice?: unknown;
  tools?: unknown[];
  metadata?: Record<string, string>;
  truncation?: string;
  /** What the client asked to be included in the answer (`reasoning.encrypted_content`, …). */
  include: string[];
  /** The body as sent, for the native provider (only known and quiet fields; rebuilt there). */
  body: Json;
  /** Names for X-Service-Ignored-Params found at parse time. */
  ignored: string[];
}

export function parseResponsesRequest(raw: unknown): ResponsesRequest {
  if (!isObject(raw)) throw invalid('body', 'The request body must be a JSON object.');
  const body = raw;
  const model = body.model;
  if (typeof model !== 'string' || model === '') throw invalid('model', "'model' is required and must be a non-empty string.");
  if (body.background === true) throw invalid('background', 'Background responses are not supported: send the request without background (stream it for long runs).');
  const ignored = Object.keys(body).filter((k) => !KNOWN.has(k) && !QUIET.has(k));
  // What is kept is serialised again (stored, sent to the native provider): bounded; unknown fields are never walked.
  for (const name of Object.keys(body)) if (name !== 'input' && !ignored.includes(name)) bounded(body[name], name);
  const request: ResponsesRequest = {
    model,
    input: normalInput(body.input),
    stream: boolean(body, 'stream') ?? false,
    store: boolean(body, 'store') ?? true,
    include: [],
    body,
    ignored,
  };
  const set = <K extends keyof ResponsesRequest>(key: K, value: ResponsesRequest[K] | undefined) => {
    if (value !== undefined) request[key] = value;
  };
  set('models', parseModels(body.models));
  set('instructions', string(body, 'instructions'));
  set('previousResponseId', string(body, 'previous_response_id'));
  set('maxOutputTokens', integer(body, 'max_output_tokens', 1));
  set('temperature', number(body, 'temperature', 0, 2));
  set('top_p', number(body, 'top_p', 0, 1));
  set('parallelToolCalls', boolean(body, 'parallel_tool_calls'));
  set('user', string(body, 'user', 512));
  set('truncation', string(body, 'truncation'));
  set('metadata', parseMetadata(body.metadata));
  if (present(body.include)) {
    if (!Array.isArray(body.include) || body.include.some((v) => typeof v !== 'string')) throw invalid('include', "'include' must be a list of strings.");
    request.include = body.include as string[];
  }
  readReasoning(body.reasoning, request);
  readText(body.text, request);
  if (present(body.tools)) {
    if (!Array.isArray(body.tools)) throw invalid('tools', "'tools' must be an array.");
    request.tools = body.tools;
  }
  if (present(body.tool_choice)) request.toolChoice = body.tool_choice;
  return request;
}

function parseMetadata(v: unknown): Record<string, string> | undefined {
  if (!present(v)) return undefined;
  if (!isObject(v) || Object.keys(v).length > 16 || Object.values(v).some((s) => typeof s !== 'string' || s.length > 512)) {
    throw invalid('metadata', "'metadata' is at most 16 string values of at most 512 characters.");
  }
  return v as Record<string, string>;
}

function readReasoning(v: unknown, request: ResponsesRequest): void {
  if (!present(v)) return;
  if (!isObject(v)) throw invalid('reasoning', "'reasoning' must be an object.");
  const effort = string(v, 'effort');
  if (effort !== undefined) request.reasoningEffort = effort;
  const summary = string(v, 'summary') ?? string(v, 'generate_summary');
  if (summary !== undefined) request.reasoningSummary = summary;
}

function readText(v: unknown, request: ResponsesRequest): void {
  if (!present(v)) return;
  if (!isObject(v)) throw invalid('text', "'text' must be an object.");
  const verbosity = string(v, 'verbosity');
  if (verbosity !== undefined) request.verbosity = verbosity;
  const format = v.format;
  if (!present(format)) return;
  if (!isObject(format)) throw invalid('text.format', "'text.format' must be an object.");
  switch (format.type) {
    case 'text':
      request.format = { type: 'text' };
      return;
    case 'json_object':
      request.format = { type: 'json_object' };
      return;
    case 'json_schema': {
      if (typeof format.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(format.name)) throw invalid('text.format.name', "'text.format.name' must be 1–64 letters, digits, '_' or '-'.");
      if (!isObject(format.schema)) throw invalid('text.format.schema', "'text.format.schema' must be a JSON schema object.");
      // The schema is serialised later: bounded like chat's.
      bounded(format.schema, 'text.format.schema');
      request.format = {
        type: 'json_schema',
        name: format.name,
        schema: format.schema,
        strict: format.strict === true,
        description: typeof format.description === 'string' ? format.description : undefined,
      };
      return;
    }
    default:
      throw invalid('text.format.type', "'text.format.type' must be 'text', 'json_object' or 'json_schema'.");
  }
}

/** The tools of the request and of its context's `additional_tools` items, and the chat request the adapters take. */
export interface Translated {
  chat: ChatRequest;
  tools: ToolTable;
  /** The whole context: the stored conversation's items, then this request's. */
  context: InputItem[];
  /** Each internal message's origin as the client names it (`input[i]`, `instructions`, `previous_response_id`). */
  origins: string[];
  /** The request's own `tools` as the native provider takes them (built-ins left out; additional_tools items carry theirs). */
  nativeTools: Json[];
}

/**
 * The internal request: the model sees `stored` (a stored conversation's items) then this
 * request's input, `instructions` first as a system message.
 */
export function translate(request: ResponsesRequest, stored: readonly InputItem[]): Translated {
  const ignored = [...request.ignored];
  const tools = emptyToolTable();
  addTools(tools, request.tools, 'tools', ignored);
  const nativeTools = [...tools.native];
  const context = [...stored, ...request.input];
  const { messages, origins } = chatMessages(context, stored.length, tools, ignored);
  if (request.instructions !== undefined && request.instructions !== '') {
    messages.unshift({ role: 'system', content: request.instructions });
    origins.unshift('instructions');
  }
  if (messages.length === 0) throw invalid('input', "'input' holds no message for the model.");
  const chat: ChatRequest = { model: request.model, messages, maxTokens: request.maxOutputTokens, stream: request.stream, includeUsage: false, ignored };
  const set = <K extends keyof ChatRequest>(key: K, value: ChatRequest[K] | undefined) => {
    if (value !== undefined) chat[key] = value;
  };
  set('models', request.models);
  set('temperature', request.temperature);
  set('top_p', request.top_p);
  set('user', request.user);
  set('reasoning_effort', request.reasoningEffort);
  set('verbosity', request.verbosity);
  set('response_format', request.format);
  if (tools.functions.length > 0) {
    chat.tools = tools.functions;
    set('tool_choice', parseToolChoice(request.toolChoice, tools));
    set('parallel_tool_calls', request.parallelToolCalls);
  } else {
    // Without tools a provider can call, these say nothing (as on chat: named); a choice that requires a built-in tool is still refused.
    if (request.toolChoice !== undefined) {
      if (request.toolChoice !== 'auto' && request.toolChoice !== 'none') parseToolChoice(request.toolChoice, tools);
      ignored.push('tool_choice');
    }
    if (request.parallelToolCalls !== undefined) ignored.push('parallel_tool_calls');
  }
  return { chat, tools, context, origins, nativeTools };
}

const INTERNAL_PART = /^messages\[(\d+)\]/;

/**
 * Runs `work` (models, content support, the quote); a refusal that names a part of the internal
 * request (`messages[2].content[1]`) is renamed to the item the client sent (`input[1].content[1]`).
 */
export async function namedAsSent<T>(translated: Translated, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const match = error instanceof GatewayError && typeof error.param === 'string' ? INTERNAL_PART.exec(error.param) : null;
    const origin = match === null ? undefined : translated.origins[Number(match[1])];
    if (!(error instanceof GatewayError) || match === null || origin === undefined) throw error;
    const param = origin + (error.param as string).slice(match[0].length);
    throw new GatewayError(error.code, error.message.split(error.param as string).join(param), { param, ...(error.headers === undefined ? {} : { headers: error.headers }) });
  }
}
