/**
 * The Messages request body (DECISIONS "Agent formats: the Messages route"), validated as the
 * Anthropic Messages API takes it and as Claude Code and the SDKs send it: every field this door
 * reads is checked (400 invalid_request naming it), blocks are shape-checked and bounded in
 * depth, unknown top-level fields are collected for X-Service-Ignored-Params. The body itself is
 * kept as sent: a provider_2 model receives it (passthrough), the others its translation (to-chat.ts).
 */
import { parseModels } from '../chat/chat-request.ts';
import type { CacheTtl } from '../shared/chat-wire.ts';
import { GatewayError } from '../shared/errors.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../shared/json-depth.ts';

export type Json = Record<string, unknown>;
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A content block as sent (its `type` checked, its fields read by the translation). */
export type Block = Json & { type: string };

export interface MessagesTurn {
  role: 'user' | 'assistant' | 'system';
  /** A string content is one text block. */
  blocks: Block[];
  /** The content was a string. */
  text: string | undefined;
}

export interface MessagesTool {
  name: string;
  description: string | undefined;
  inputSchema: Json;
  cacheControl: Json | undefined;
}

export interface MessagesRequest {
  /** The body as sent (the passthrough forwards it, model id replaced and dropped fields removed). */
  body: Json;
  model: string;
  models: string[] | undefined;
  maxTokens: number;
  stream: boolean;
  system: Block[] | undefined;
  messages: MessagesTurn[];
  tools: MessagesTool[] | undefined;
  toolChoice: Json | undefined;
  thinking: Json | undefined;
  temperature: number | undefined;
  topP: number | undefined;
  topK: number | undefined;
  stopSequences: string[] | undefined;
  outputConfig: Json | undefined;
  /** The cache-write lifetimes the request's `cache_control` marks ask for (the hold prices its input at the dearest). */
  cacheTtls: CacheTtl[];
  /** Unknown top-level fields: dropped, named in X-Service-Ignored-Params. */
  unknown: string[];
}

/**
 * The fields this door knows. Besides the API's own, what Claude Code sends (`output_config`,
 * `context_management`): forwarded to provider_2, translated or quietly dropped for the others.
 * `models` is the gateway's (fallbacks) and never reaches a provider.
 */
export const KNOWN_FIELDS = new Set([
  'model', 'models', 'max_tokens', 'messages', 'system', 'stop_sequences', 'temperature', 'top_p', 'top_k', 'stream',
  'tools', 'tool_choice', 'thinking', 'metadata', 'output_config', 'context_management',
]);

const LIMITS = { messages: 5000, tools: 512, stop: 16 } as const;

/** Tool types that run on Anthropic's side (web search, code execution, computer use, bash, text editor, …): the gateway cannot price them. */
const CUSTOM_TOOL_TYPES = new Set(['custom']);
const BLOCK_TYPES = new Set(['text', 'image', 'document', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking']);

export function invalid(param: string, message: string): GatewayError {
  return new GatewayError('invalid_request', message, { param });
}

const present = (v: unknown) => v !== undefined && v !== null;

function bounded(value: unknown, param: string): void {
  if (nestsDeeperThan(value)) throw invalid(param, `'${param}' nests deeper than ${MAX_JSON_DEPTH} levels.`);
}

function number(body: Json, name: string, min: number, max: number): number | undefined {
  const v = body[name];
  if (!present(v)) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(name, `'${name}' must be a number.`);
  if (v < min || v > max) throw invalid(name, `'${name}' must be between ${min} and ${max}.`);
  return v;
}

function integer(v: unknown, name: string, min: number): number | undefined {
  if (!present(v)) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw invalid(name, `'${name}' must be an integer.`);
  if (v < min) throw invalid(name, `'${name}' must be at least ${min}.`);
  return v;
}

function object(body: Json, name: string): Json | undefined {
  const v = body[name];
  if (!present(v)) return undefined;
  if (!isObject(v)) throw invalid(name, `'${name}' must be an object.`);
  bounded(v, name);
  return v;
}

/** Validates a parsed JSON body; throws 400 invalid_request naming the field. */
export function parseMessagesRequest(raw: unknown): MessagesRequest {
  if (!isObject(raw)) throw invalid('body', 'The request body must be a JSON object.');
  const body = raw;
  const model = body.model;
  if (typeof model !== 'string' || model === '') throw invalid('model', "'model' is required and must be a non-empty string.");
  const maxTokens = integer(body.max_tokens, 'max_tokens', 1);
  if (maxTokens === undefined) throw invalid('max_tokens', "'max_tokens' is required: an integer of 1 or more.");
  if (present(body.stream) && typeof body.stream !== 'boolean') throw invalid('stream', "'stream' must be a boolean.");
  const ttls = new Set<CacheTtl>();
  const request: MessagesRequest = {
    body,
    model,
    models: parseModels(body.models),
    maxTokens,
    stream: body.stream === true,
    system: parseSystem(body.system, ttls),
    messages: parseTurns(body.messages, ttls),
    tools: parseTools(body.tools, ttls),
    toolChoice: parseToolChoice(body.tool_choice),
    thinking: parseThinking(body.thinking),
    temperature: number(body, 'temperature', 0, 1),
    topP: number(body, 'top_p', 0, 1),
    topK: integer(body.top_k, 'top_k', 0),
    stopSequences: parseStop(body.stop_sequences),
    outputConfig: object(body, 'output_config'),
    cacheTtls: [],
    unknown: Object.keys(body).filter((k) => !KNOWN_FIELDS.has(k)),
  };
  object(body, 'metadata');
  object(body, 'context_management');
  if (request.toolChoice?.type === 'tool' && !(request.tools ?? []).some((t) => t.name === request.toolChoice?.name)) {
    throw invalid('tool_choice.name', `tool_choice names the tool '${String(request.toolChoice.name)}', which is not in 'tools'.`);
  }
  request.cacheTtls = [...ttls];
  return request;
}

function parseStop(v: unknown): string[] | undefined {
  if (!present(v)) return undefined;
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) throw invalid('stop_sequences', "'stop_sequences' must be an array of strings.");
  if (v.length > LIMITS.stop) throw invalid('stop_sequences', `'stop_sequences' may hold at most ${LIMITS.stop} entries.`);
  const kept = (v as string[]).filter((s) => s !== '');
  return kept.length === 0 ? undefined : kept;
}

/** A `cache_control` mark: `{type: "ephemeral", ttl?: "5m" | "1h"}`; its lifetime is noted for the hold. */
function cacheControl(block: Json, at: string, ttls: Set<CacheTtl>): Json | undefined {
  const mark = block.cache_control;
  if (!present(mark)) return undefined;
  if (!isObject(mark) || mark.type !== 'ephemeral' || (present(mark.ttl) && mark.ttl !== '5m' && mark.ttl !== '1h')) {
    throw invalid(`${at}.cache_control`, `'${at}.cache_control' must be {"type": "ephemeral"} with an optional "ttl" of "5m" or "1h".`);
  }
  ttls.add(mark.ttl === '1h' ? '1h' : '5m');
  return mark;
}

function parseSystem(v: unknown, ttls: Set<CacheTtl>): Block[] | undefined {
  if (!present(v)) return undefined;
  if (typeof v === 'string') return v === '' ? undefined : [{ type: 'text', text: v }];
  if (!Array.isArray(v)) throw invalid('system', "'system' must be a string or an array of text blocks.");
  return v.map((block, i) => {
    const at = `system[${i}]`;
    if (!isObject(block) || block.type !== 'text' || typeof block.text !== 'string') throw invalid(at, 'Each system block must be a text block.');
    cacheControl(block, at, ttls);
    return block as Block;
  });
}

function parseTurns(v: unknown, ttls: Set<CacheTtl>): MessagesTurn[] {
  if (!Array.isArray(v)) throw invalid('messages', "'messages' is required and must be an array.");
  if (v.length < 1 || v.length > LIMITS.messages) throw invalid('messages', `'messages' must hold 1 to ${LIMITS.messages} items.`);
  return v.map((m, i) => {
    const at = `messages[${i}]`;
    if (!isObject(m)) throw invalid(at, 'Each message must be an object.');
    if (m.role !== 'user' && m.role !== 'assistant' && m.role !== 'system') throw invalid(`${at}.role`, "role must be 'user' or 'assistant'.");
    if (typeof m.content === 'string') return { role: m.role, blocks: [{ type: 'text', text: m.content }], text: m.content };
    if (!Array.isArray(m.content)) throw invalid(`${at}.content`, 'content must be a string or an array of content blocks.');
    const blocks = m.content.map((block, j) => parseBlock(block, `${at}.content[${j}]`, ttls));
    return { role: m.role, blocks, text: undefined };
  });
}

function parseBlock(block: unknown, at: string, ttls: Set<CacheTtl>): Block {
  if (!isObject(block) || typeof block.type !== 'string') throw invalid(at, "Each content block needs a 'type'.");
  bounded(block, at);
  cacheControl(block, at, ttls);
  const type = block.type;
  if (!BLOCK_TYPES.has(type)) throw new GatewayError('unsupported_content', `Content blocks of type '${type}' are not supported (${at}).`, { param: at });
  const need = (field: string, ok: boolean) => {
    if (!ok) throw invalid(`${at}.${field}`, `A ${type} block needs '${field}'.`);
  };
  switch (type) {
    case 'text':
      need('text', typeof block.text === 'string');
      break;
    case 'image':
    case 'document':
      need('source', isObject(block.source));
      break;
    case 'tool_use':
      need('id', typeof block.id === 'string' && block.id !== '');
      need('name', typeof block.name === 'string' && block.name !== '');
      need('input', block.input === undefined || isObject(block.input));
      break;
    case 'tool_result':
      need('tool_use_id', typeof block.tool_use_id === 'string' && block.tool_use_id !== '');
      if (Array.isArray(block.content)) block.content.forEach((inner, k) => parseBlock(inner, `${at}.content[${k}]`, ttls));
      else need('content', block.content === undefined || typeof block.content === 'string');
      break;
    case 'thinking':
      need('thinking', typeof block.thinking === 'string');
      break;
  }
  return block as Block;
}

function parseTools(v: unknown, ttls: Set<CacheTtl>): MessagesTool[] | undefined {
  if (!present(v)) return undefined;
  if (!Array.isArray(v)) throw invalid('tools', "'tools' must be an array.");
  if (v.length > LIMITS.tools) throw invalid('tools', `'tools' may hold at most ${LIMITS.tools} tools.`);
  if (v.length === 0) return undefined;
  return v.map((tool, i) => {
    const at = `tools[${i}]`;
    if (!isObject(tool)) throw invalid(at, 'Each tool must be an object.');
    if (present(tool.type) && !CUSTOM_TOOL_TYPES.has(String(tool.type))) {
      throw invalid(`${at}.type`, `Server tools such as '${String(tool.type)}' run at the provider and are not supported; declare a custom tool {name, description, input_schema}.`);
    }
    if (typeof tool.name !== 'string' || !/^[a-zA-Z0-9_-]{1,128}$/.test(tool.name)) throw invalid(`${at}.name`, 'Tool names are 1–128 letters, digits, underscores or dashes.');
    if (!isObject(tool.input_schema)) throw invalid(`${at}.input_schema`, "A tool needs 'input_schema', a JSON schema object.");
    bounded(tool.input_schema, `${at}.input_schema`);
    if (present(tool.description) && typeof tool.description !== 'string') throw invalid(`${at}.description`, "'description' must be a string.");
    return {
      name: tool.name,
      description: typeof tool.description === 'string' ? tool.description : undefined,
      inputSchema: tool.input_schema,
      cacheControl: cacheControl(tool, at, ttls),
    };
  });
}

function parseToolChoice(v: unknown): Json | undefined {
  if (!present(v)) return undefined;
  if (!isObject(v) || !['auto', 'any', 'tool', 'none'].includes(String(v.type))) throw invalid('tool_choice', "'tool_choice.type' must be 'auto', 'any', 'tool' or 'none'.");
  if (v.type === 'tool' && typeof v.name !== 'string') throw invalid('tool_choice.name', "A tool_choice of type 'tool' needs 'name'.");
  if (present(v.disable_parallel_tool_use) && typeof v.disable_parallel_tool_use !== 'boolean') throw invalid('tool_choice.disable_parallel_tool_use', 'must be a boolean.');
  return v;
}

function parseThinking(v: unknown): Json | undefined {
  if (!present(v)) return undefined;
  if (!isObject(v) || !['enabled', 'disabled', 'adaptive'].includes(String(v.type))) throw invalid('thinking', "'thinking.type' must be 'enabled', 'adaptive' or 'disabled'.");
  if (v.type === 'enabled' && integer(v.budget_tokens, 'thinking.budget_tokens', 1024) === undefined) {
    throw invalid('thinking.budget_tokens', "'thinking.budget_tokens' is required with type 'enabled' (1024 or more).");
  }
  return v;
}
