/**
 * The chat request body, validated to the letter of the spec: every field's type and
 * range, `null` accepted for every optional field, the rejected list as 400
 * invalid_request with `param`, and unknown top-level fields collected for
 * X-Service-Ignored-Params. Content parts are only shape-checked here; whether the
 * model's provider can take them is the content-support stage's call. `cache_control` on a
 * part, a message or a tool becomes a typed breakpoint (cache-control.ts).
 */
import { GatewayError } from '../shared/errors.ts';
import type { CacheControl, ChatMessage, ChatParams, ContentPart, FunctionTool, ResponseFormat, ToolCall, ToolChoice } from '../shared/chat-wire.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../shared/json-depth.ts';
import { markedTextBlocks, parseCacheControl, unmarkedParts } from './cache-control.ts';
import { checkChatShape } from './chat-schema.ts';

export interface ChatRequest extends ChatParams {
  model: string;
  messages: ChatMessage[];
  /** max_completion_tokens, else max_tokens; undefined when neither was set. */
  maxTokens: number | undefined;
  stream: boolean;
  includeUsage: boolean;
  /** Names dropped at parse time: unknown top-level fields, tool_choice / parallel_tool_calls without tools. */
  ignored: string[];
  /** Fallback models, tried in order after `model` (docs/decisions.md "Routing"). */
  models?: string[];
}

const KNOWN_FIELDS = new Set([
  'model', 'messages', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'stop', 'seed',
  'frequency_penalty', 'presence_penalty', 'logit_bias', 'stream', 'stream_options', 'tools', 'tool_choice',
  'parallel_tool_calls', 'response_format', 'user', 'reasoning_effort', 'verbosity', 'models',
  // Checked for the rejected list below; never forwarded.
  'n', 'logprobs', 'top_logprobs', 'audio', 'modalities', 'functions', 'function_call', 'web_search_options',
]);

const LIMITS = { messages: 5000, tools: 512, stop: 16, user: 512, models: 8 } as const;

function invalid(param: string, message: string): GatewayError {
  return new GatewayError('invalid_request', message, { param });
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const present = (v: unknown) => v !== undefined && v !== null;

/** Values kept and serialised later (schemas, arguments, parts) nest at most MAX_JSON_DEPTH levels; unknown fields are never walked. */
function bounded<T>(value: T, param: string): T {
  if (nestsDeeperThan(value)) throw invalid(param, `'${param}' nests deeper than ${MAX_JSON_DEPTH} levels.`);
  return value;
}

function number(body: Json, name: string, min: number, max: number): number | undefined {
  const v = body[name];
  if (!present(v)) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(name, `'${name}' must be a number.`);
  if (v < min || v > max) throw invalid(name, `'${name}' must be between ${min} and ${max}.`);
  return v;
}

function integer(body: Json, name: string, min: number): number | undefined {
  const v = body[name];
  if (!present(v)) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw invalid(name, `'${name}' must be an integer.`);
  if (v < min) throw invalid(name, `'${name}' must be at least ${min}.`);
  return v;
}

function string(body: Json, name: string, maxLength = Infinity): string | undefined {
  const v = body[name];
  if (!present(v)) return undefined;
  if (typeof v !== 'string') throw invalid(name, `'${name}' must be a string.`);
  if (v.length > maxLength) throw invalid(name, `'${name}' must be at most ${maxLength} characters.`);
  return v;
}

function boolean(body: Json, name: string): boolean | undefined {
  const v = body[name];
  if (!present(v)) return undefined;
  if (typeof v !== 'boolean') throw invalid(name, `'${name}' must be a boolean.`);
  return v;
}

/** Validates a parsed JSON body; throws 400 invalid_request naming the field. */
export function parseChatRequest(raw: unknown): ChatRequest {
  if (!isObject(raw)) throw invalid('body', 'The request body must be a JSON object.');
  const body = raw;
  rejectUnsupported(body);

  const model = body.model;
  if (typeof model !== 'string' || model === '') throw invalid('model', "'model' is required and must be a non-empty string.");

  const ignored = Object.keys(body).filter((k) => !KNOWN_FIELDS.has(k));
  const request: ChatRequest = {
    model,
    messages: parseMessages(body.messages),
    maxTokens: undefined,
    stream: boolean(body, 'stream') ?? false,
    includeUsage: false,
    ignored,
  };

  const maxTokens = integer(body, 'max_tokens', 1);
  const maxCompletionTokens = integer(body, 'max_completion_tokens', 1);
  request.maxTokens = maxCompletionTokens ?? maxTokens;

  const set = <K extends keyof ChatRequest>(key: K, value: ChatRequest[K] | undefined) => {
    if (value !== undefined) request[key] = value;
  };
  set('temperature', number(body, 'temperature', 0, 2));
  set('top_p', number(body, 'top_p', 0, 1));
  set('frequency_penalty', number(body, 'frequency_penalty', -2, 2));
  set('presence_penalty', number(body, 'presence_penalty', -2, 2));
  set('seed', integer(body, 'seed', Number.MIN_SAFE_INTEGER));
  set('user', string(body, 'user', LIMITS.user));
  set('reasoning_effort', string(body, 'reasoning_effort'));
  set('verbosity', string(body, 'verbosity'));
  set('stop', parseStop(body.stop));
  set('logit_bias', parseLogitBias(body.logit_bias));
  set('response_format', parseResponseFormat(body.response_format));
  set('models', parseModels(body.models));

  const streamOptions = body.stream_options;
  if (present(streamOptions)) {
    if (!isObject(streamOptions)) throw invalid('stream_options', "'stream_options' must be an object.");
    const include = streamOptions.include_usage;
    if (present(include) && typeof include !== 'boolean') throw invalid('stream_options.include_usage', "'stream_options.include_usage' must be a boolean.");
    request.includeUsage = include === true;
  }

  const tools = parseTools(body.tools);
  const toolChoice = parseToolChoice(body.tool_choice);
  const parallel = boolean(body, 'parallel_tool_calls');
  if (tools !== undefined && tools.length > 0) {
    request.tools = tools;
    if (toolChoice !== undefined) {
      if (typeof toolChoice === 'object' && !tools.some((t) => t.name === toolChoice.name)) {
        throw invalid('tool_choice', `tool_choice names the function '${toolChoice.name}', which is not in 'tools'.`);
      }
      request.tool_choice = toolChoice;
    }
    if (parallel !== undefined) request.parallel_tool_calls = parallel;
  } else {
    if (toolChoice !== undefined) ignored.push('tool_choice');
    if (parallel !== undefined) ignored.push('parallel_tool_calls');
  }
  // The published schema (OpenAPI) holds too: what the document calls invalid is refused here.
  checkChatShape(body);
  return request;
}

function rejectUnsupported(body: Json): void {
  const n = body.n;
  if (present(n)) {
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) throw invalid('n', "'n' must be a positive integer.");
    if (n > 1) throw invalid('n', 'Only one choice per request is supported (n must be 1).');
  }
  if (present(body.logprobs) && body.logprobs !== false) throw invalid('logprobs', 'logprobs are not supported.');
  if (present(body.top_logprobs)) throw invalid('top_logprobs', 'top_logprobs are not supported.');
  if (present(body.audio)) throw invalid('audio', 'Audio output is not supported.');
  const modalities = body.modalities;
  if (present(modalities)) {
    if (!Array.isArray(modalities) || modalities.some((m) => m !== 'text')) throw invalid('modalities', "Only the 'text' modality is supported.");
  }
  if (present(body.functions)) throw invalid('functions', "The deprecated 'functions' field is not supported; use 'tools'.");
  if (present(body.function_call)) throw invalid('function_call', "The deprecated 'function_call' field is not supported; use 'tool_choice'.");
  if (present(body.web_search_options)) throw invalid('web_search_options', 'Web search is not supported.');
}

/** `models`: fallback slugs (every door that takes them reads them alike). */
export function parseModels(v: unknown): string[] | undefined {
  if (!present(v)) return undefined;
  if (!Array.isArray(v) || v.length > LIMITS.models || !v.every((slug) => typeof slug === 'string' && slug !== '')) {
    throw invalid('models', `'models' must be a list of at most ${LIMITS.models} model slugs.`);
  }
  return v as string[];
}

function parseStop(v: unknown): string[] | undefined {
  if (!present(v)) return undefined;
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list) || list.some((s) => typeof s !== 'string')) throw invalid('stop', "'stop' must be a string or an array of strings.");
  if (list.length > LIMITS.stop) throw invalid('stop', `'stop' may hold at most ${LIMITS.stop} entries.`);
  const kept = (list as string[]).filter((s) => s !== '');
  return kept.length === 0 ? undefined : kept;
}

function parseLogitBias(v: unknown): Record<string, number> | undefined {
  if (!present(v)) return undefined;
  if (!isObject(v)) throw invalid('logit_bias', "'logit_bias' must be an object of token id to bias.");
  for (const [token, bias] of Object.entries(v)) {
    if (!/^\d+$/.test(token)) throw invalid('logit_bias', `'logit_bias' key '${token}' is not a token id.`);
    if (typeof bias !== 'number' || bias < -100 || bias > 100) throw invalid('logit_bias', `'logit_bias' values must be numbers from -100 to 100.`);
  }
  return v as Record<string, number>;
}

function parseResponseFormat(v: unknown): ResponseFormat | undefined {
  if (!present(v)) return undefined;
  if (!isObject(v)) throw invalid('response_format', "'response_format' must be an object.");
  switch (v.type) {
    case 'text':
      return { type: 'text' };
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema': {
      const js = v.json_schema;
      if (!isObject(js)) throw invalid('response_format.json_schema', "'response_format.json_schema' is required for type json_schema.");
      if (typeof js.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(js.name)) {
        throw invalid('response_format.json_schema.name', "'json_schema.name' must be 1–64 letters, digits, '_' or '-'.");
      }
      if (present(js.schema) && !isObject(js.schema)) throw invalid('response_format.json_schema.schema', "'json_schema.schema' must be an object.");
      bounded(js.schema, 'response_format.json_schema.schema');
      if (present(js.strict) && typeof js.strict !== 'boolean') throw invalid('response_format.json_schema.strict', "'json_schema.strict' must be a boolean.");
      if (present(js.description) && typeof js.description !== 'string') throw invalid('response_format.json_schema.description', "'json_schema.description' must be a string.");
      return {
        type: 'json_schema',
        name: js.name,
        schema: isObject(js.schema) ? js.schema : {},
        strict: js.strict === true,
        description: typeof js.description === 'string' ? js.description : undefined,
      };
    }
    default:
      throw invalid('response_format.type', "'response_format.type' must be 'text', 'json_object' or 'json_schema'.");
  }
}

function parseTools(v: unknown): FunctionTool[] | undefined {
  if (!present(v)) return undefined;
  if (!Array.isArray(v)) throw invalid('tools', "'tools' must be an array.");
  if (v.length > LIMITS.tools) throw invalid('tools', `'tools' may hold at most ${LIMITS.tools} tools.`);
  return v.map((tool, i) => {
    const at = `tools[${i}]`;
    if (!isObject(tool)) throw invalid(at, 'Each tool must be an object.');
    if (tool.type !== 'function') throw invalid(`${at}.type`, "Only tools of type 'function' are supported.");
    const fn = tool.function;
    if (!isObject(fn)) throw invalid(`${at}.function`, "A function tool needs a 'function' object.");
    if (typeof fn.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(fn.name)) {
      throw invalid(`${at}.function.name`, 'Function names are 1–64 letters, digits, underscores or dashes.');
    }
    if (present(fn.description) && typeof fn.description !== 'string') throw invalid(`${at}.function.description`, 'must be a string.');
    if (present(fn.parameters) && !isObject(fn.parameters)) throw invalid(`${at}.function.parameters`, 'must be a JSON schema object.');
    bounded(fn.parameters, `${at}.function.parameters`);
    if (present(fn.strict) && typeof fn.strict !== 'boolean') throw invalid(`${at}.function.strict`, 'must be a boolean.');
    const cacheControl = parseCacheControl(tool.cache_control, at);
    return {
      name: fn.name,
      description: typeof fn.description === 'string' ? fn.description : undefined,
      parameters: isObject(fn.parameters) ? fn.parameters : undefined,
      strict: typeof fn.strict === 'boolean' ? fn.strict : undefined,
      ...(cacheControl === undefined ? {} : { cacheControl }),
    };
  });
}

function parseToolChoice(v: unknown): ToolChoice | undefined {
  if (!present(v)) return undefined;
  if (v === 'none' || v === 'auto' || v === 'required') return v;
  if (isObject(v) && v.type === 'function' && isObject(v.function) && typeof v.function.name === 'string') return { name: v.function.name };
  throw invalid('tool_choice', "'tool_choice' must be 'none', 'auto', 'required' or {type:'function', function:{name}}.");
}

function parseMessages(v: unknown): ChatMessage[] {
  if (!Array.isArray(v)) throw invalid('messages', "'messages' is required and must be an array.");
  if (v.length < 1 || v.length > LIMITS.messages) throw invalid('messages', `'messages' must hold 1 to ${LIMITS.messages} items.`);
  return v.map((m, i) => parseMessage(m, `messages[${i}]`));
}

interface TextContent {
  /** The parts joined; null for an absent content where allowed. */
  text: string | null;
  /** Each text part with the breakpoint the client set on it (a string content is one part). */
  parts: { text: string; mark: CacheControl | undefined }[];
}

function textOf(content: unknown, at: string, allowNull: boolean): TextContent {
  if (content === null || content === undefined) {
    if (allowNull) return { text: null, parts: [] };
    throw invalid(`${at}.content`, 'content is required.');
  }
  if (typeof content === 'string') return { text: content, parts: [{ text: content, mark: undefined }] };
  if (!Array.isArray(content)) throw invalid(`${at}.content`, 'content must be a string or an array of text parts.');
  const parts = content.map((part, j) => {
    if (isObject(part) && (part.type === 'text' || part.type === 'refusal')) {
      const text = part.type === 'text' ? part.text : part.refusal;
      if (typeof text === 'string') return { text, mark: parseCacheControl(part.cache_control, `${at}.content[${j}]`) };
    }
    throw invalid(`${at}.content[${j}]`, 'Only text parts are accepted in this message.');
  });
  return { text: parts.map((p) => p.text).join(''), parts };
}

/** The breakpoint after a whole message: its own, else the last one on its parts. */
function endMark(content: TextContent, messageMark: CacheControl | undefined): CacheControl | undefined {
  return messageMark ?? content.parts.findLast((p) => p.mark !== undefined)?.mark;
}

function parseMessage(m: unknown, at: string): ChatMessage {
  if (!isObject(m)) throw invalid(at, 'Each message must be an object.');
  const mark = parseCacheControl(m.cache_control, at);
  switch (m.role) {
    case 'system':
    case 'developer': {
      const content = textOf(m.content, at, false);
      const blocks = markedTextBlocks(content.parts, mark);
      return { role: m.role, content: content.text as string, ...(blocks === undefined ? {} : { blocks }) };
    }
    case 'user': {
      const content = m.content;
      if (typeof content === 'string') return { role: 'user', content, ...(mark === undefined ? {} : { cacheControls: [mark] }) };
      if (!Array.isArray(content) || content.length === 0) throw invalid(`${at}.content`, 'content must be a string or a non-empty array of parts.');
      content.forEach((part, j) => {
        if (!isObject(part) || typeof part.type !== 'string') throw invalid(`${at}.content[${j}]`, "Each content part needs a 'type'.");
        if (part.type === 'text' && typeof part.text !== 'string') throw invalid(`${at}.content[${j}].text`, 'A text part needs a string text.');
        bounded(part, `${at}.content[${j}]`);
      });
      const { parts, marks } = unmarkedParts(content as ContentPart[], at, mark);
      return { role: 'user', content: parts, ...(marks === undefined ? {} : { cacheControls: marks }) };
    }
    case 'assistant': {
      const toolCalls = parseToolCalls(m.tool_calls, at);
      const content = textOf(m.content, at, true);
      if (content.text === null && toolCalls === undefined && !present(m.refusal)) throw invalid(`${at}.content`, 'An assistant message needs content or tool_calls.');
      const message: ChatMessage = { role: 'assistant', content: content.text, toolCalls };
      if (typeof m.reasoning_content === 'string') message.reasoningContent = m.reasoning_content;
      const cacheControl = endMark(content, mark);
      if (cacheControl !== undefined) message.cacheControl = cacheControl;
      return message;
    }
    case 'tool': {
      if (typeof m.tool_call_id !== 'string' || m.tool_call_id === '') throw invalid(`${at}.tool_call_id`, "A 'tool' message needs 'tool_call_id'.");
      const content = textOf(m.content, at, false);
      const cacheControl = endMark(content, mark);
      return { role: 'tool', content: content.text as string, toolCallId: m.tool_call_id, ...(cacheControl === undefined ? {} : { cacheControl }) };
    }
    case 'function':
      throw invalid(`${at}.role`, "The deprecated 'function' role is not supported; use 'tool'.");
    default:
      throw invalid(`${at}.role`, "role must be 'system', 'developer', 'user', 'assistant' or 'tool'.");
  }
}

function parseToolCalls(v: unknown, at: string): ToolCall[] | undefined {
  if (!present(v)) return undefined;
  if (!Array.isArray(v)) throw invalid(`${at}.tool_calls`, 'tool_calls must be an array.');
  if (v.length === 0) return undefined;
  return v.map((call, k) => {
    const where = `${at}.tool_calls[${k}]`;
    if (!isObject(call) || typeof call.id !== 'string' || !isObject(call.function) || typeof call.function.name !== 'string') {
      throw invalid(where, "Each tool call needs 'id' and 'function.name'.");
    }
    const args = call.function.arguments;
    // Arguments given as JSON text are parsed again by the provider adapters: bounded either way.
    bounded(typeof args === 'string' ? parsedOrUndefined(args) : args, `${where}.function.arguments`);
    return { id: call.id, name: call.function.name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) };
  });
}

function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
