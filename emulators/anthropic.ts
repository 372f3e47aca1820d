/**
 * provider_2: Anthropic Messages.
 * Base URL `http://host:port`; `POST /v1/messages` with `x-api-key` and `anthropic-version: 2023-06-01`.
 * Streams are `event:` + `data:` pairs: message_start, per block content_block_start / _delta / _stop,
 * ping, message_delta (cumulative usage), message_stop; errors after a 200 are `event: error`.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import {
  buildAnswer,
  header,
  jsonReply,
  startServer,
  streamEnd,
  SSE_HEADERS,
  type Answer,
  type Exchange,
  type Picked,
  type ProtocolImpl,
  type Reply,
  type SseReply,
} from './core.ts';
import { cacheControlError, PromptCache } from './anthropic-cache.ts';
import type { Emulator, Scenario, ScenarioOptions, ScenarioUsage, StartOptions } from './types.ts';
import { fragments, isRecord, randomId, splitText } from './util.ts';

/**
 * API version 2026-10-21 is what the official SDKs send since their 2026-10-21 majors
 * (TypeScript 1.0): their keys arrive as `Authorization: Bearer` (x-api-key wins when both
 * come), and `temperature`, `top_p`, `top_k` are refused ("Extra inputs are not permitted").
 */
const V2026 = '2026-10-21';
const VERSIONS = new Set(['2023-06-01', '2023-01-01', V2026]);
const SAMPLING = ['temperature', 'top_p', 'top_k'];
const MAX_OUTPUT = 128_000;
const DOCS_THINKING = 'https://docs.claude.com/en/docs/build-with-claude/extended-thinking';

const TOP_LEVEL = new Set([
  'model', 'messages', 'max_tokens', 'system', 'stop_sequences', 'temperature', 'top_p', 'top_k', 'metadata', 'stream',
  'tools', 'tool_choice', 'thinking', 'output_config', 'output_format', 'service_tier', 'cache_control', 'container',
  'context_management', 'mcp_servers', 'inference_geo',
]);
const BLOCK_TAGS = [
  'bash_code_execution_tool_result', 'code_execution_tool_result', 'container_upload', 'document', 'image', 'mcp_tool_result', 'mcp_tool_use',
  'redacted_thinking', 'search_result', 'server_tool_use', 'text', 'text_editor_code_execution_tool_result', 'thinking', 'tool_result',
  'tool_use', 'web_fetch_tool_result', 'web_search_tool_result',
];
const BLOCK_TAG_SET = new Set(BLOCK_TAGS);
const USER_ONLY = new Set(['tool_result', 'image', 'document', 'search_result', 'container_upload']);
const ASSISTANT_ONLY = new Set(['tool_use', 'thinking', 'redacted_thinking', 'server_tool_use']);
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

// ---------------------------------------------------------------------------
// Errors

function requestId(): string {
  return `req_011${randomId(21)}`;
}

interface Rejection {
  status: number;
  type: string;
  message: string;
  headers?: Record<string, string>;
}

function errorBody(type: string, message: string, id: string): Record<string, unknown> {
  return { type: 'error', error: { type, message }, request_id: id };
}

function reject(r: Rejection, opts?: ScenarioOptions): Reply {
  const id = requestId();
  return jsonReply(r.status, errorBody(r.type, r.message, id), { 'request-id': id, 'x-should-retry': r.status >= 500 || r.status === 429 ? 'true' : 'false', ...(r.headers ?? {}) }, opts);
}

function invalid(message: string): Rejection {
  return { status: 400, type: 'invalid_request_error', message };
}

export function anthropicErrorFor(status: number, model: string): Rejection {
  switch (status) {
    case 400:
      return invalid('Invalid request (emulated).');
    case 401:
      return { status, type: 'authentication_error', message: 'invalid x-api-key' };
    case 402:
      return { status, type: 'billing_error', message: 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.' };
    case 403:
      return { status, type: 'permission_error', message: 'Your API key does not have permission to use the specified resource.' };
    case 404:
      return { status, type: 'not_found_error', message: `model: ${model}` };
    case 413:
      return { status, type: 'request_too_large', message: 'Request exceeds the maximum allowed number of bytes.' };
    case 429:
      return {
        status,
        type: 'rate_limit_error',
        message: 'This request would exceed the rate limit for your organization of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later.',
        headers: { 'retry-after': '1', 'anthropic-ratelimit-requests-remaining': '0' },
      };
    case 500:
      return { status, type: 'api_error', message: 'Internal server error' };
    case 504:
      return { status, type: 'timeout_error', message: 'Request timed out' };
    case 529:
      return { status, type: 'overloaded_error', message: 'Overloaded', headers: { 'retry-after': '1' } };
    default:
      return status >= 500 ? { status, type: 'api_error', message: 'Internal server error' } : { status, type: 'invalid_request_error', message: `Request failed with status ${status} (emulated).` };
  }
}

// ---------------------------------------------------------------------------
// Validation

/** Claude 4.5+ (temperature and top_p may not both be set). */
function isClaude45Plus(model: string): boolean {
  return /claude-(?:opus|sonnet|haiku)-(?:4-[5-9]|[5-9])/.test(model);
}

/** Claude 4.6+ (no assistant prefill). */
function isClaude46Plus(model: string): boolean {
  return /claude-(?:opus|sonnet|haiku)-(?:4-[6-9]|[5-9])/.test(model);
}

/** Opus 4.7+ (sampling parameters removed). */
function isOpus47Plus(model: string): boolean {
  return /claude-opus-(?:4-[7-9]|[5-9])/.test(model);
}

function blockError(i: number, j: number, detail: string): Rejection {
  return invalid(`messages.${i}.content.${j}.${detail}`);
}

function validateBlock(b: unknown, i: number, j: number, role: string): Rejection | undefined {
  if (!isRecord(b)) return invalid(`messages.${i}.content.${j}: Input should be a valid dictionary or object to extract fields from`);
  const type = b.type;
  if (typeof type !== 'string' || !BLOCK_TAG_SET.has(type)) {
    return invalid(`messages.${i}.content.${j}: Input tag '${String(type)}' found using 'type' does not match any of the expected tags: ${BLOCK_TAGS.map((t) => `'${t}'`).join(', ')}`);
  }
  if (role === 'assistant' && USER_ONLY.has(type)) return invalid(`messages.${i}.content.${j}: \`${type}\` blocks are not allowed in assistant messages`);
  if (role === 'user' && ASSISTANT_ONLY.has(type)) return invalid(`messages.${i}.content.${j}: \`${type}\` blocks are not allowed in user messages`);
  switch (type) {
    case 'text':
      if (typeof b.text !== 'string') return blockError(i, j, 'text.text: Field required');
      if (b.text === '') return invalid('messages: text content blocks must be non-empty');
      break;
    case 'image': {
      const src = b.source;
      if (!isRecord(src)) return blockError(i, j, 'image.source: Field required');
      if (src.type === 'base64') {
        if (typeof src.media_type !== 'string' || !IMAGE_TYPES.has(src.media_type)) {
          return blockError(i, j, "image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'");
        }
        if (typeof src.data !== 'string') return blockError(i, j, 'image.source.base64.data: Field required');
      } else if (src.type === 'url') {
        if (typeof src.url !== 'string') return blockError(i, j, 'image.source.url.url: Field required');
      } else if (src.type !== 'file') {
        return blockError(i, j, `image.source: Input tag '${String(src.type)}' found using 'type' does not match any of the expected tags: 'base64', 'file', 'url'`);
      }
      break;
    }
    case 'document': {
      const src = b.source;
      if (!isRecord(src)) return blockError(i, j, 'document.source: Field required');
      if (src.type === 'base64') {
        if (src.media_type !== 'application/pdf') return blockError(i, j, "document.source.base64.media_type: Input should be 'application/pdf'");
        if (typeof src.data !== 'string') return blockError(i, j, 'document.source.base64.data: Field required');
      } else if (src.type === 'text') {
        if (src.media_type !== 'text/plain') return blockError(i, j, "document.source.text.media_type: Input should be 'text/plain'");
        if (typeof src.data !== 'string') return blockError(i, j, 'document.source.text.data: Field required');
      } else if (src.type !== 'url' && src.type !== 'file' && src.type !== 'content') {
        return blockError(i, j, `document.source: Input tag '${String(src.type)}' found using 'type' does not match any of the expected tags: 'base64', 'content', 'file', 'text', 'url'`);
      }
      break;
    }
    case 'tool_use':
      if (typeof b.id !== 'string') return blockError(i, j, 'tool_use.id: Field required');
      if (typeof b.name !== 'string') return blockError(i, j, 'tool_use.name: Field required');
      if (!isRecord(b.input)) return blockError(i, j, 'tool_use.input: Input should be a valid dictionary');
      break;
    case 'tool_result':
      if (typeof b.tool_use_id !== 'string') return blockError(i, j, 'tool_result.tool_use_id: Field required');
      if (b.content !== undefined && typeof b.content !== 'string' && !Array.isArray(b.content)) {
        return blockError(i, j, 'tool_result.content: Input should be a valid string or a valid list');
      }
      if (Array.isArray(b.content)) {
        for (let k = 0; k < b.content.length; k++) {
          const c: unknown = b.content[k];
          const t = isRecord(c) ? c.type : undefined;
          if (t !== 'text' && t !== 'image' && t !== 'document' && t !== 'search_result') {
            return blockError(i, j, `tool_result.content.${k}: Input tag '${String(t)}' found using 'type' does not match any of the expected tags: 'document', 'image', 'search_result', 'text'`);
          }
        }
      }
      break;
    case 'thinking':
      if (typeof b.thinking !== 'string') return blockError(i, j, 'thinking.thinking: Field required');
      if (typeof b.signature !== 'string') return blockError(i, j, 'thinking.signature: Field required');
      break;
    default:
      break;
  }
  return undefined;
}

interface Turn {
  role: string;
  /** The message index where the turn starts (for error paths). */
  first: number;
  blocks: { block: Record<string, unknown>; i: number; j: number }[];
}

function validate(body: Record<string, unknown>, version: string): Rejection | undefined {
  for (const key of Object.keys(body)) if (!TOP_LEVEL.has(key) || (version === V2026 && SAMPLING.includes(key))) return invalid(`${key}: Extra inputs are not permitted`);
  if (body.model === undefined) return invalid('model: Field required');
  if (typeof body.model !== 'string') return invalid('model: Input should be a valid string');
  const model = body.model;
  if (body.max_tokens === undefined) return invalid('max_tokens: Field required');
  const maxTokens = body.max_tokens;
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens)) return invalid('max_tokens: Input should be a valid integer');
  if (maxTokens < 1) return invalid('max_tokens: Input should be greater than or equal to 1');
  if (maxTokens > MAX_OUTPUT) return invalid(`max_tokens: ${maxTokens} > ${MAX_OUTPUT}, which is the maximum allowed number of output tokens for ${model}`);
  if (body.messages === undefined) return invalid('messages: Field required');
  if (!Array.isArray(body.messages)) return invalid('messages: Input should be a valid list');
  const messages = body.messages;
  if (messages.length === 0) return invalid('messages: at least one message is required');

  if (body.system !== undefined) {
    if (Array.isArray(body.system)) {
      for (let j = 0; j < body.system.length; j++) {
        const b: unknown = body.system[j];
        if (!isRecord(b) || b.type !== 'text' || typeof b.text !== 'string') return invalid(`system.${j}: Input should be a valid dictionary or object with type 'text'`);
        if (b.text === '') return invalid('system: text content blocks must be non-empty');
      }
    } else if (typeof body.system !== 'string') {
      return invalid('system: Input should be a valid string or a valid list');
    }
  }

  // Messages: roles, blocks, then turn rules over merged same-role neighbours.
  const turns: Turn[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    if (!isRecord(m)) return invalid(`messages.${i}: Input should be a valid dictionary or object to extract fields from`);
    const role = m.role;
    if (role === 'system') {
      return invalid('messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.');
    }
    if (role !== 'user' && role !== 'assistant') return invalid(`messages.${i}.role: Input should be 'user' or 'assistant'`);
    const last = i === messages.length - 1;
    let blocks: Record<string, unknown>[];
    if (typeof m.content === 'string') {
      if (m.content === '' && !(last && role === 'assistant')) return invalid(`messages.${i}: all messages must have non-empty content except for the optional final assistant message`);
      blocks = m.content === '' ? [] : [{ type: 'text', text: m.content }];
    } else if (Array.isArray(m.content)) {
      if (m.content.length === 0 && !(last && role === 'assistant')) return invalid(`messages.${i}: all messages must have non-empty content except for the optional final assistant message`);
      blocks = [];
      for (let j = 0; j < m.content.length; j++) {
        const bad = validateBlock(m.content[j], i, j, role);
        if (bad !== undefined) return bad;
        blocks.push(m.content[j] as Record<string, unknown>);
      }
    } else {
      return invalid(m.content === undefined ? `messages.${i}.content: Field required` : `messages.${i}.content: Input should be a valid string or a valid list`);
    }
    const prev = turns[turns.length - 1];
    const turn: Turn = prev !== undefined && prev.role === role ? prev : { role, first: i, blocks: [] };
    if (turn !== prev) turns.push(turn);
    blocks.forEach((block, j) => turn.blocks.push({ block, i, j }));
  }
  for (let k = 0; k < turns.length; k++) {
    const turn = turns[k] as Turn;
    if (turn.role !== 'user') continue;
    const prev = turns[k - 1];
    const useIds = new Set<string>();
    if (prev !== undefined) for (const { block } of prev.blocks) if (block.type === 'tool_use' && typeof block.id === 'string') useIds.add(block.id);
    for (const { block, i, j } of turn.blocks) {
      if (block.type === 'tool_result' && !useIds.has(block.tool_use_id as string)) {
        return invalid(`messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`);
      }
    }
    if (useIds.size > 0 && prev !== undefined) {
      // Every tool_use answered, and the answers lead the user turn.
      const missing = new Set(useIds);
      for (const { block } of turn.blocks) {
        if (block.type !== 'tool_result') break;
        missing.delete(block.tool_use_id as string);
      }
      if (missing.size > 0) {
        return invalid(`messages.${turn.first - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${[...missing].join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`);
      }
    }
  }
  const lastTurn = turns[turns.length - 1] as Turn;
  if (lastTurn.role === 'assistant') {
    if (isClaude46Plus(model)) return invalid('This model does not support assistant message prefill. The conversation must end with a user message.');
    const lastBlock = lastTurn.blocks[lastTurn.blocks.length - 1]?.block;
    if (lastBlock !== undefined && lastBlock.type === 'text' && typeof lastBlock.text === 'string' && /\s$/.test(lastBlock.text)) {
      return invalid('messages: final assistant content cannot end with trailing whitespace');
    }
  }

  // Sampling.
  const t = body.temperature;
  const hasTemp = t !== undefined && t !== null;
  const hasTopP = body.top_p !== undefined && body.top_p !== null;
  if (isOpus47Plus(model)) {
    if (hasTemp) return invalid('`temperature` is deprecated for this model.');
    if (hasTopP) return invalid('`top_p` is deprecated for this model.');
    if (body.top_k !== undefined && body.top_k !== null) return invalid('`top_k` is deprecated for this model.');
  }
  if (hasTemp) {
    if (typeof t !== 'number') return invalid('temperature: Input should be a valid number');
    if (t > 1) return invalid('temperature: Input should be less than or equal to 1');
    if (t < 0) return invalid('temperature: Input should be greater than or equal to 0');
  }
  if (hasTemp && hasTopP && isClaude45Plus(model)) return invalid('`temperature` and `top_p` cannot both be specified for this model. Please use only one.');

  // Thinking.
  const thinking = body.thinking;
  let thinkingOn = false;
  if (thinking !== undefined && thinking !== null) {
    if (!isRecord(thinking)) return invalid('thinking: Input should be a valid dictionary or object to extract fields from');
    const type = thinking.type;
    if (type === 'enabled') {
      thinkingOn = true;
      const budget = thinking.budget_tokens;
      if (budget === undefined) return invalid('thinking.enabled.budget_tokens: Field required');
      if (typeof budget !== 'number' || !Number.isInteger(budget)) return invalid('thinking.enabled.budget_tokens: Input should be a valid integer');
      if (budget < 1024) return invalid('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
      if (maxTokens <= budget) return invalid(`\`max_tokens\` must be greater than \`thinking.budget_tokens\`. Please consult our documentation at ${DOCS_THINKING}#max-tokens-and-context-window-size`);
    } else if (type === 'adaptive') {
      thinkingOn = true;
    } else if (type !== 'disabled') {
      return invalid(`thinking: Input tag '${String(type)}' found using 'type' does not match any of the expected tags: 'adaptive', 'disabled', 'enabled'`);
    }
  }
  if (thinkingOn && hasTemp && t !== 1) return invalid(`\`temperature\` may only be set to 1 when thinking is enabled. Please consult our documentation at ${DOCS_THINKING}#feature-compatibility`);

  // Tools.
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return invalid('tools: Input should be a valid list');
    for (let j = 0; j < body.tools.length; j++) {
      const tool: unknown = body.tools[j];
      if (!isRecord(tool)) return invalid(`tools.${j}: Input should be a valid dictionary or object to extract fields from`);
      if (tool.type !== undefined && tool.type !== 'custom') continue; // server tools
      if (typeof tool.name !== 'string') return invalid(`tools.${j}.custom.name: Field required`);
      if (!TOOL_NAME.test(tool.name)) return invalid(`tools.${j}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`);
      const schema = tool.input_schema;
      if (!isRecord(schema)) return invalid(`tools.${j}.custom.input_schema: Field required`);
      if (schema.type === undefined) return invalid(`tools.${j}.custom.input_schema.type: Field required`);
      if (schema.type !== 'object') return invalid(`tools.${j}.custom.input_schema.type: Input should be 'object'`);
    }
  }
  const tc = body.tool_choice;
  const cacheError = cacheControlError(body);
  if (cacheError !== undefined) return invalid(cacheError);
  if (tc !== undefined) {
    if (!isRecord(tc)) return invalid('tool_choice: Input should be a valid dictionary or object to extract fields from');
    if (tc.type !== 'auto' && tc.type !== 'any' && tc.type !== 'tool' && tc.type !== 'none') {
      return invalid(`tool_choice: Input tag '${String(tc.type)}' found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'`);
    }
    if (tc.type === 'tool' && typeof tc.name !== 'string') return invalid('tool_choice.tool.name: Field required');
    if (thinkingOn && (tc.type === 'any' || tc.type === 'tool')) return invalid('Thinking may not be enabled when tool_choice forces tool use.');
  }
  return undefined;
}

// ---------------------------------------------------------------------------
// Rendering

function blocksText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let s = '';
  for (const b of content) if (isRecord(b) && b.type === 'text' && typeof b.text === 'string') s = s === '' ? b.text : `${s} ${b.text}`;
  return s;
}

function inputStats(body: Record<string, unknown>): { chars: number; lastUser: string } {
  let chars = blocksText(body.system).length;
  let lastUser = '';
  const messages = body.messages as Record<string, unknown>[];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as Record<string, unknown>;
    const text = blocksText(m.content);
    chars += text.length;
    if (lastUser === '' && m.role === 'user' && text !== '') lastUser = text;
    if (Array.isArray(m.content)) {
      for (const b of m.content) {
        if (!isRecord(b)) continue;
        if (b.type === 'tool_result') chars += blocksText(b.content).length;
        else if (b.type === 'tool_use') chars += JSON.stringify(b.input).length;
        else if (b.type === 'thinking' && typeof b.thinking === 'string') chars += b.thinking.length;
      }
    }
  }
  return { chars, lastUser };
}

function usageObject(u: ScenarioUsage): Record<string, unknown> {
  return {
    input_tokens: u.input,
    cache_creation_input_tokens: (u.cacheWrite ?? 0) + (u.cacheWrite1h ?? 0),
    cache_read_input_tokens: u.cacheRead ?? 0,
    cache_creation: { ephemeral_5m_input_tokens: u.cacheWrite ?? 0, ephemeral_1h_input_tokens: u.cacheWrite1h ?? 0 },
    output_tokens: u.output,
    service_tier: 'standard',
  };
}

function signature(): string {
  return `EqMBCkYIBxgCKkA${randomId(64)}`;
}

function answerText(a: Answer): string {
  return a.text !== '' ? a.text : (a.refusal ?? '');
}

function stopDetails(a: Answer): Record<string, unknown> | null {
  return a.finish === 'refusal' ? { type: 'refusal', category: null, explanation: a.refusal } : null;
}

function messageBody(a: Answer, model: string, id: string): string {
  const content: Record<string, unknown>[] = [];
  if (a.reasoning !== '') content.push({ type: 'thinking', thinking: a.reasoning, signature: signature() });
  const text = answerText(a);
  if (text !== '') content.push({ type: 'text', text });
  for (const c of a.calls) content.push({ type: 'tool_use', id: c.id, name: c.name, input: c.args });
  const out: Record<string, unknown> = {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: a.finish,
    stop_sequence: null,
    stop_details: stopDetails(a),
  };
  if (a.usage !== null) out.usage = usageObject(a.usage);
  return JSON.stringify(out);
}

function ev(name: string, data: string): string {
  return `event: ${name}\ndata: ${data}\n\n`;
}

const PING = ev('ping', '{"type": "ping"}');

function streamReply(a: Answer, model: string, id: string, s: Scenario | null, picked: Picked, headers: OutgoingHttpHeaders): SseReply {
  const events: string[] = [];
  const content: number[] = [];
  const startUsage = a.usage === null ? undefined : { ...usageObject(a.usage), output_tokens: Math.min(1, a.usage.output) };
  const message: Record<string, unknown> = { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, stop_details: null };
  if (startUsage !== undefined) message.usage = startUsage;
  events.push(ev('message_start', JSON.stringify({ type: 'message_start', message })));

  let index = 0;
  let pinged = false;
  const start = (block: string): void => {
    events.push(ev('content_block_start', `{"type":"content_block_start","index":${index},"content_block":${block}}`));
    if (!pinged) {
      events.push(PING);
      pinged = true;
    }
  };
  const delta = (d: string, isContent = true): void => {
    if (isContent) content.push(events.length);
    events.push(ev('content_block_delta', `{"type":"content_block_delta","index":${index},"delta":${d}}`));
  };
  const stop = (): void => {
    events.push(ev('content_block_stop', `{"type":"content_block_stop","index":${index}}`));
    index++;
  };

  if (a.reasoning !== '') {
    start('{"type":"thinking","thinking":"","signature":""}');
    for (const piece of splitText(a.reasoning, Math.max(1, Math.ceil(a.chunks / 2)))) delta(`{"type":"thinking_delta","thinking":${JSON.stringify(piece)}}`);
    delta(`{"type":"signature_delta","signature":"${signature()}"}`, false);
    stop();
  }
  const text = answerText(a);
  if (text !== '') {
    start('{"type":"text","text":""}');
    for (const piece of splitText(text, a.chunks)) delta(`{"type":"text_delta","text":${JSON.stringify(piece)}}`);
    stop();
  }
  for (const c of a.calls) {
    start(`{"type":"tool_use","id":${JSON.stringify(c.id)},"name":${JSON.stringify(c.name)},"input":{}}`);
    delta('{"type":"input_json_delta","partial_json":""}');
    for (const f of fragments(c.json)) delta(`{"type":"input_json_delta","partial_json":${JSON.stringify(f)}}`);
    stop();
  }
  if (!pinged) events.push(PING);

  const finishAt = events.length;
  const md: Record<string, unknown> = { type: 'message_delta', delta: { stop_reason: a.finish, stop_sequence: null, stop_details: stopDetails(a) } };
  if (a.usage !== null) {
    const u = usageObject(a.usage);
    md.usage = { input_tokens: u.input_tokens, cache_creation_input_tokens: u.cache_creation_input_tokens, cache_read_input_tokens: u.cache_read_input_tokens, output_tokens: u.output_tokens };
  }
  events.push(ev('message_delta', JSON.stringify(md)));
  events.push(ev('message_stop', '{"type":"message_stop"}'));

  const { end, afterChunks } = streamEnd(s);
  return {
    type: 'sse',
    headers: { ...SSE_HEADERS, ...headers },
    events,
    content,
    finishAt,
    keepAlive: { at: 1, text: PING },
    end,
    afterChunks,
    errorEvent: ev('error', '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'),
    opts: picked.opts,
  };
}

function handle(ex: Exchange, cache: PromptCache): Reply {
  if (ex.pathname !== '/v1/messages') return reject({ status: 404, type: 'not_found_error', message: 'Not Found' });
  if (ex.method !== 'POST') return reject({ status: 405, type: 'invalid_request_error', message: `Method Not Allowed` });
  const version = header(ex, 'anthropic-version');
  const bearer = version === V2026 ? /^Bearer (.+)$/i.exec(header(ex, 'authorization') ?? '')?.[1] : undefined;
  const key = header(ex, 'x-api-key') ?? bearer;
  if (key === undefined || key === '') return reject({ status: 401, type: 'authentication_error', message: 'x-api-key header is required' });
  if (key !== ex.apiKey) return reject({ status: 401, type: 'authentication_error', message: 'invalid x-api-key' });
  if (version === undefined) return reject(invalid('anthropic-version: header is required'));
  if (!VERSIONS.has(version)) return reject(invalid(`anthropic-version: "${version}" is not a valid version`));
  if (ex.bodyInvalid || !isRecord(ex.body)) return reject(invalid('There was an error parsing the body of your request. Please make sure it is valid JSON.'));
  const body = ex.body;
  const bad = validate(body, version);
  if (bad !== undefined) return reject(bad);

  const model = body.model as string;
  const stream = body.stream === true;
  const picked = ex.take();
  const s = picked.scenario;
  if (s !== null) {
    if (s.kind === 'hang') return { type: 'hang' };
    if (s.kind === 'error') {
      const def = anthropicErrorFor(s.status, model);
      const id = requestId();
      const errBody = s.body !== undefined ? s.body : errorBody(def.type, def.message, id);
      return jsonReply(s.status, errBody, { 'request-id': id, ...(def.headers ?? {}), ...(s.headers ?? {}) }, picked.opts);
    }
    if (s.kind === 'stream_error' && !stream) return reject(anthropicErrorFor(529, model), picked.opts);
  }
  const stats = inputStats(body);
  const thinking = isRecord(body.thinking) && (body.thinking.type === 'enabled' || body.thinking.type === 'adaptive');
  const answer = buildAnswer(s, {
    kind: 'anthropic',
    inputChars: stats.chars,
    lastUserText: stats.lastUser,
    thinking,
    finishes: { stop: 'end_turn', tool: 'tool_use', filter: 'refusal', refusal: 'refusal' },
    reasoningInOutput: true,
    callId: () => `toolu_01${randomId(22)}`,
  });
  // Breakpoints shape the built-in usage; a scenario's scripted usage is sent as written.
  const scripted = s !== null && (s.kind === 'text' || s.kind === 'tool_calls') && s.usage !== undefined;
  const cached = answer.usage === null ? undefined : cache.usage(model, body, answer.usage);
  if (cached !== undefined && !scripted) answer.usage = cached;
  const id = `msg_01${randomId(22)}`;
  const headers: OutgoingHttpHeaders = { 'request-id': requestId() };
  if (stream) return streamReply(answer, model, id, s, picked, headers);
  return {
    type: 'json',
    status: 200,
    headers: { 'content-type': 'application/json', ...headers },
    body: messageBody(answer, model, id),
    opts: picked.opts,
    cut: s !== null && s.kind === 'cut',
  };
}

/** A fresh protocol per server: its prompt cache is its own. */
export function anthropicProtocol(): ProtocolImpl {
  const cache = new PromptCache();
  return { kind: 'anthropic', basePath: '', handle: (ex) => handle(ex, cache), reset: () => cache.reset() };
}

export function startAnthropicEmulator(opts?: StartOptions): Promise<Emulator> {
  return startServer(anthropicProtocol(), opts);
}
