/**
 * The Messages route (the Anthropic Messages format, for Claude Code and the Anthropic SDKs):
 * its operations and the shapes it publishes. Its errors come in that API's envelope.
 */
import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from '../shared/errors.ts';
import { body, json, ref, RATE_HEADERS, type Operation } from './operation-parts.ts';

const block = z.object({ type: z.string().describe('text, image (base64 or URL source), document (base64 PDF), tool_use, tool_result, thinking, redacted_thinking.') }).loose();
const content = z.union([z.string(), z.array(block)]);
const cacheControl = z.object({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() });

export const messagesRequestSchema = z.object({
  model: z.string().describe('Any chat model of the catalog, of any provider.'),
  models: z.array(z.string()).max(8).optional().describe('Fallback models, tried in order after `model`.'),
  max_tokens: z.number().int().min(1).describe('Required. The hold counts min(max_tokens, the model\'s limit) output tokens.'),
  messages: z.array(z.object({ role: z.enum(['user', 'assistant', 'system']), content })).min(1).max(5000),
  system: z.union([z.string(), z.array(z.object({ type: z.literal('text'), text: z.string(), cache_control: cacheControl.optional() }))]).optional(),
  stop_sequences: z.array(z.string()).max(16).optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  stream: z.boolean().optional(),
  tools: z.array(z.object({ name: z.string(), description: z.string().optional(), input_schema: z.record(z.string(), z.unknown()), cache_control: cacheControl.optional() }).loose()).optional()
    .describe('Custom tools only; a server tool (web search, code execution, computer use, bash, text editor) answers 400 invalid_request.'),
  tool_choice: z.object({ type: z.enum(['auto', 'any', 'tool', 'none']), name: z.string().optional(), disable_parallel_tool_use: z.boolean().optional() }).optional(),
  thinking: z.object({ type: z.enum(['enabled', 'adaptive', 'disabled']), budget_tokens: z.number().int().min(1024).optional() }).loose().optional(),
  metadata: z.object({ user_id: z.string().optional() }).loose().optional(),
  output_config: z.record(z.string(), z.unknown()).optional().describe('Forwarded to provider_2; `effort` and `format` are translated for the other providers.'),
  context_management: z.record(z.string(), z.unknown()).optional().describe('Forwarded to provider_2; dropped quietly for the others.'),
}).loose();

export const messageSchema = z.object({
  id: z.string().describe('`msg_` followed by the job id (header X-Service-Job-Id).'),
  type: z.literal('message'),
  role: z.literal('assistant'),
  model: z.string().describe("Echoes the request's model."),
  content: z.array(block),
  stop_reason: z.string().nullable().describe('end_turn, max_tokens, stop_sequence, tool_use (and refusal, pause_turn from provider_2).'),
  stop_sequence: z.string().nullable(),
  usage: z.object({
    input_tokens: z.number().int().describe('Input tokens not read from or written to the prompt cache.'),
    output_tokens: z.number().int(),
    cache_creation_input_tokens: z.number().int().nullable().optional(),
    cache_read_input_tokens: z.number().int().nullable().optional(),
  }).loose(),
}).loose();

export const messagesErrorSchema = z.object({
  type: z.literal('error'),
  error: z.object({
    type: z.enum(['invalid_request_error', 'authentication_error', 'billing_error', 'permission_error', 'not_found_error', 'rate_limit_error', 'api_error', 'overloaded_error', 'timeout_error']),
    message: z.string(),
    code: z.enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]]),
    param: z.string().optional(),
  }),
});

export const countTokensSchema = z.object({ input_tokens: z.number().int() });

const ACCESS = "The key in `x-api-key` or as a bearer token (both present and different: 401). Scope `chat`. `anthropic-version` and `anthropic-beta` are accepted, never required; a query string such as `?beta=true` is ignored.";

export const MESSAGES: Operation[] = [
  {
    method: 'post', route: '/api/v1/messages', path: '/api/v1/messages', operationId: 'createMessage', tag: 'Messages', security: 'messagesKey', scope: 'chat', errorSchema: 'MessagesError',
    summary: 'Create a message (Anthropic Messages format)',
    description: `${ACCESS} Checks, holds, limits, refunds and headers as on chat completions. A provider_2 model receives the body as sent (only the model id replaced, dropped fields removed); the other providers' models are translated both ways. With \`stream: true\`, that API's server-sent events; an error after the first byte is one \`event: error\` and nothing after it. provider_2's own 400 passes through with its message (code provider_rejected_request).`,
    body: body(ref('MessagesRequest')),
    ok: [{
      status: 200,
      description: 'The message, or an event stream when `stream` is true.',
      headers: ['X-Service-Job-Id', 'X-Service-Ignored-Params', ...RATE_HEADERS],
      content: { ...json(ref('Message')), 'text/event-stream': { schema: { type: 'string', description: 'message_start, content_block_start / _delta / _stop, message_delta, message_stop, ping.' } } },
    }],
    errors: ['invalid_json', 'invalid_request', 'model_not_supported', 'unsupported_content', 'provider_rejected_request', 'invalid_api_key', 'insufficient_credits', 'spending_limit_reached',
      'insufficient_scope', 'ip_not_allowed', 'model_not_found', 'payload_too_large', 'rate_limit_exceeded', 'api_key_limit_exceeded', 'trial_limit', 'upstream_rate_limited',
      'client_closed_request', 'internal_error', 'upstream_error', 'model_unavailable', 'provider_timeout'],
    errorHeaders: RATE_HEADERS,
  },
  {
    method: 'post', route: '/api/v1/messages/count_tokens', path: '/api/v1/messages/count_tokens', operationId: 'countMessageTokens', tag: 'Messages', security: 'messagesKey', scope: 'chat', errorSchema: 'MessagesError',
    summary: 'Count the input tokens of a message',
    description: `${ACCESS} Body \`{model, messages, system?, tools?}\`. The model's tokenizer estimate, the one holds use (images and PDF pages at their most). Free: no job; counts toward the key's requests per minute.`,
    body: body(ref('MessagesRequest')),
    ok: [{ status: 200, description: '`{input_tokens}`.', headers: RATE_HEADERS, content: json(ref('MessagesTokenCount')) }],
    errors: ['invalid_json', 'invalid_request', 'model_not_supported', 'unsupported_content', 'model_not_found', 'model_unavailable', 'invalid_api_key', 'insufficient_scope', 'ip_not_allowed', 'rate_limit_exceeded', 'internal_error'],
    errorHeaders: RATE_HEADERS,
  },
];
