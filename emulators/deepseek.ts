/**
 * provider_7: DeepSeek's OpenAI-compatible Chat Completions (the OpenAI engine with DeepSeek's dialect).
 * Base URL `http://host:port`; `POST /chat/completions` (also `/v1/…` and `/beta/…`), `Authorization: Bearer`.
 * Differences from OpenAI: UUID ids, `call_00_…` tool ids, usage on the finish chunk, `: keep-alive`
 * comments (blank lines before slow JSON), `reasoning_content` in thinking mode, text-only parts,
 * no json_schema.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { startServer, type Exchange, type ProtocolImpl } from './core.ts';
import { openAIStyleHandler, type OpenAIDialect, type OpenAIErrorObject, type Rejection } from './openai-core.ts';
import type { Emulator, ScenarioUsage, StartOptions } from './types.ts';
import { isRecord, randomId, uuid } from './util.ts';

const FINGERPRINT = 'fp_emu0deepseek_prod0820_fp8_kvcache';
const ROLES = ['system', 'user', 'assistant', 'tool'];
/** Output limits of the legacy model names (newer ids are not checked). */
const MAX_TOKENS: Record<string, number> = { 'deepseek-chat': 8192, 'deepseek-reasoner': 65536 };

function de(message: string, type = 'invalid_request_error', code: string | null = 'invalid_request_error'): OpenAIErrorObject {
  return { message, type, param: null, code };
}

function invalid(status: number, message: string): Rejection {
  return { status, error: de(message) };
}

/** `… at line 1 column N`, pointing just past the first occurrence of `needle` in the raw body. */
function column(ex: Exchange, needle: string): number {
  const at = ex.raw.indexOf(needle);
  return at === -1 ? 1 : at + needle.length + 1;
}

function deserializeError(ex: Exchange, detail: string, needle: string): Rejection {
  return invalid(400, `Failed to deserialize the JSON body into the target type: ${detail} at line 1 column ${column(ex, needle)}`);
}

/** Thinking mode: the reasoner, `thinking: {type: "enabled"}`, or a V4 model unless thinking is disabled. */
function thinkingMode(body: Record<string, unknown>): boolean {
  const model = typeof body.model === 'string' ? body.model : '';
  const t = isRecord(body.thinking) ? body.thinking.type : undefined;
  if (t === 'enabled') return true;
  if (t === 'disabled') return false;
  return model === 'deepseek-reasoner' || model.startsWith('deepseek-v4') || model === 'deepseek-flash';
}

export const deepSeekDialect: OpenAIDialect = {
  kind: 'deepseek',
  basePath: '',
  chatPaths: new Set(['/chat/completions', '/v1/chat/completions', '/beta/chat/completions']),
  // Every OpenAI role passes the shared checks; DeepSeek's own role check (with its wording) is in extraChecks.
  roles: ['system', 'developer', 'user', 'assistant', 'tool', 'function'],
  completionId: uuid,
  callId: (i) => `call_${String(i).padStart(2, '0')}_${randomId(24)}`,
  extraFields: `"system_fingerprint":"${FINGERPRINT}",`,
  extraObject: { system_fingerprint: FINGERPRINT },
  usagePlacement: 'finish',
  usage: (u: ScenarioUsage) => {
    const hit = u.cacheRead ?? 0;
    const out: Record<string, unknown> = {
      prompt_tokens: u.input,
      completion_tokens: u.output,
      total_tokens: u.input + u.output,
      prompt_tokens_details: { cached_tokens: hit },
    };
    if ((u.reasoning ?? 0) > 0) out.completion_tokens_details = { reasoning_tokens: u.reasoning };
    out.prompt_cache_hit_tokens = hit;
    out.prompt_cache_miss_tokens = Math.max(0, u.input - hit);
    return out;
  },
  obfuscation: false,
  reasoningContent: true,
  keepAlive: true,
  namedToolChoiceStops: false,
  finishes: { stop: 'stop', tool: 'tool_calls', filter: 'content_filter', refusal: 'content_filter' },
  blockedContent: '',
  thinking: thinkingMode,
  responseHeaders: (contentType: string): OutgoingHttpHeaders => ({ 'content-type': contentType }),
  auth(token, apiKey) {
    if (token === undefined || token === '') {
      return { status: 401, error: de('Authentication Fails (auth header format should be Bearer sk-...)', 'authentication_error') };
    }
    if (token !== apiKey) return { status: 401, error: de(`Authentication Fails, Your api key: ****${token.slice(-4)} is invalid`, 'authentication_error') };
    return undefined;
  },
  errorFor(status) {
    switch (status) {
      case 400:
        return { error: de('Invalid Format') };
      case 401:
        return { error: de('Authentication Fails, Your api key: ****0000 is invalid', 'authentication_error') };
      case 402:
        return { error: de('Insufficient Balance', 'unknown_error') };
      case 422:
        return { error: de('Invalid Parameters') };
      case 429:
        return { error: de('Rate Limit Reached', 'rate_limit_error'), headers: { 'retry-after': '1' } };
      case 500:
        return { error: de('Server Error', 'server_error', 'server_error') };
      case 503:
        return { error: de('Server Overloaded', 'server_error', 'server_error') };
      default:
        return { error: status >= 500 ? de('Server Error', 'server_error', 'server_error') : de(`Request failed with status ${status} (emulated).`) };
    }
  },
  streamError: de('Server Error', 'server_error', 'server_error'),
  invalidJson: de('Failed to parse the request body as JSON: expected value at line 1 column 1'),
  notFound: () => de('Not Found'),
  invalid: {
    missingModel: () => invalid(400, 'Failed to deserialize the JSON body into the target type: missing field `model` at line 1 column 1'),
    missingMessages: () => invalid(400, 'Failed to deserialize the JSON body into the target type: missing field `messages` at line 1 column 1'),
    emptyMessages: () => invalid(400, 'Invalid request: messages must not be empty'),
    badRole: (i, role) => invalid(400, `Failed to deserialize the JSON body into the target type: messages[${i}]: unknown variant \`${String(role)}\`, expected one of \`system\`, \`user\`, \`assistant\`, \`tool\` at line 1 column 1`),
    generic: (status, message) => invalid(status, message),
  },
  extraChecks(body, info, ex) {
    const messages = body.messages as unknown[];
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i];
      if (!isRecord(m)) continue;
      const role = String(m.role);
      if (!ROLES.includes(role)) {
        return deserializeError(ex, `messages[${i}]: unknown variant \`${role}\`, expected one of \`system\`, \`user\`, \`assistant\`, \`tool\``, `"${role}"`);
      }
      if (Array.isArray(m.content)) {
        for (const p of m.content) {
          const type = isRecord(p) ? String(p.type) : 'null';
          if (type !== 'text') return deserializeError(ex, `messages[${i}]: unknown variant \`${type}\`, expected \`text\``, `"${type}"`);
        }
      }
      if (info.thinking && role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0 && typeof m.reasoning_content !== 'string') {
        return invalid(400, 'The reasoning_content in the thinking mode must be passed back to the API.');
      }
    }
    const limit = MAX_TOKENS[info.model];
    const mt = body.max_tokens;
    if (limit !== undefined && mt !== undefined && mt !== null && (typeof mt !== 'number' || !Number.isInteger(mt) || mt < 1 || mt > limit)) {
      return invalid(400, `Invalid max_tokens value, the valid range of max_tokens is [1, ${limit}]`);
    }
    const rf = body.response_format;
    if (isRecord(rf) && rf.type !== 'text' && rf.type !== 'json_object') {
      return invalid(400, 'This response_format type is unavailable now');
    }
    return undefined;
  },
};

export const deepSeekProtocol: ProtocolImpl = {
  kind: 'deepseek',
  basePath: '',
  handle: openAIStyleHandler(deepSeekDialect),
};

export function startDeepSeekEmulator(opts?: StartOptions): Promise<Emulator> {
  return startServer(deepSeekProtocol, opts);
}
