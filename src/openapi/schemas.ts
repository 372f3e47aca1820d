/**
 * Answer shapes the OpenAPI document publishes that no request validator owns: the chat
 * completion and its stream chunk, the error object, the admin views, JSON-RPC. Tests parse
 * real answers with them (openapi.test.ts), so they follow the code that writes the answers.
 */
import { z } from 'zod';
import { limitViewFields } from '../admin/limit-fields.ts';
import { HOLD_LIMITS, perTable } from '../store/limits.ts';
import { ERROR_CODES } from '../shared/errors.ts';
import { SCOPES } from '../shared/scopes.ts';

const toolCall = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string().describe('JSON text.') }),
});
const finishReason = z.enum(['stop', 'length', 'tool_calls', 'content_filter']);
const usage = z.object({
  prompt_tokens: z.number().int().describe('Every input token, cached or not.'),
  completion_tokens: z.number().int().describe('Output tokens, reasoning included.'),
  total_tokens: z.number().int(),
  prompt_tokens_details: z.object({
    cached_tokens: z.number().int().describe("Of prompt_tokens: read from the provider's prompt cache (billed at the model's cache_read price)."),
    cache_write_tokens: z.number().int().optional().describe('Of prompt_tokens: written to the prompt cache (billed at its cache_write prices); only when the provider reported writes.'),
  }).optional().describe('Only when the provider reported cache reads or writes.'),
  completion_tokens_details: z.object({
    reasoning_tokens: z.number().int().describe('Of completion_tokens: the reasoning (thinking) tokens.'),
  }).optional().describe('Only when the provider reported reasoning tokens.'),
});

export const chatCompletionSchema = z.object({
  id: z.string().describe('`chatcmpl-` followed by the job id (header X-Service-Job-Id).'),
  object: z.literal('chat.completion'),
  created: z.number().int().describe('Unix seconds.'),
  model: z.string().describe("Echoes the request's model."),
  choices: z.array(z.object({
    index: z.number().int(),
    message: z.object({
      role: z.literal('assistant'),
      content: z.string().nullable(),
      refusal: z.string().nullable(),
      tool_calls: z.array(toolCall).optional().describe('Only when the model calls tools.'),
      reasoning_content: z.string().optional().describe('Only when the provider returns reasoning text.'),
    }),
    logprobs: z.null(),
    finish_reason: finishReason,
  })),
  usage: usage.describe("From the provider; estimated at about 4 characters per token where it reports none."),
  system_fingerprint: z.string().describe('`svc-` followed by the slug of the catalog model that answered.'),
});

export const chatChunkSchema = z.object({
  id: z.string(),
  object: z.literal('chat.completion.chunk'),
  created: z.number().int(),
  model: z.string(),
  system_fingerprint: z.string(),
  choices: z.array(z.object({
    index: z.number().int(),
    delta: z.object({
      role: z.literal('assistant').optional(),
      content: z.string().optional(),
      refusal: z.string().nullable().optional(),
      reasoning_content: z.string().optional(),
      tool_calls: z.array(z.object({
        index: z.number().int(),
        id: z.string().optional(),
        type: z.literal('function').optional(),
        function: z.object({ name: z.string().optional(), arguments: z.string().optional() }),
      })).optional(),
    }),
    logprobs: z.null(),
    finish_reason: finishReason.nullable(),
  })),
  usage: usage.nullable().optional().describe('With stream_options.include_usage: null on every chunk except the final usage chunk.'),
}).describe('One `data:` event of a stream. The stream ends with `data: [DONE]`; an error after the first byte is one `data: {"error":{…}}` event without [DONE].');

export const errorSchema = z.object({
  error: z.object({
    message: z.string().describe('For humans; clients switch on `code`.'),
    type: z.string().describe('The code\'s error type (see the table).'),
    code: z.enum(ERROR_CODES as [string, ...string[]]),
    param: z.string().nullable().optional().describe('On chat (and catalog filters): the field at fault, or null.'),
    details: z.object({
      formErrors: z.array(z.string()),
      fieldErrors: z.record(z.string(), z.array(z.string())),
    }).optional().describe('On strict-schema routes: the field errors.'),
  }),
});

/** An account's answer, with the settings of a limit table (src/store/limits.ts). */
export const accountSchemaFor = perTable((limits) => z.object({
  id: z.string(),
  name: z.string(),
  email: z.string().nullable(),
  created_at: z.string().describe('ISO 8601.'),
  has_purchase: z.boolean(),
  billing_emails: z.boolean(),
  balance_credits: z.number(),
  held_credits: z.number(),
  available_credits: z.number(),
  ...limitViewFields(limits, 'account'),
  month_spent_credits: z.number(),
}));

export const accountSchema = accountSchemaFor(HOLD_LIMITS);

/** A key's answer, with the settings of a limit table. */
export const keySchemaFor = perTable((limits) => z.object({
  id: z.string(),
  account_id: z.string(),
  name: z.string(),
  key_prefix: z.string().describe('The first characters of the secret, for display.'),
  scopes: z.array(z.enum(SCOPES)),
  requests_per_minute: z.number().int(),
  ip_allowlist: z.array(z.string()),
  ...limitViewFields(limits, 'key'),
  expires_at: z.string().nullable(),
  warning_threshold: z.number(),
  email_alerts: z.boolean(),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
  status: z.enum(['active', 'revoked', 'expired']),
  last_used_at: z.string().nullable().optional().describe('When the key last ran a request (in the admin list of an account\'s keys).'),
}));

export const keySchema = keySchemaFor(HOLD_LIMITS);

export const issuedKeySchemaFor = perTable((limits) => keySchemaFor(limits).extend({
  key: z.string().describe('The full secret (`svc_live_` + 64 hex characters). Shown only here.'),
}));

export const issuedKeySchema = issuedKeySchemaFor(HOLD_LIMITS);

export const ledgerEntrySchema = z.object({
  id: z.number().int(),
  job_id: z.string().nullable(),
  key_id: z.string().nullable(),
  kind: z.enum(['topup', 'grant', 'hold', 'settle', 'refund', 'payment_refund']),
  credits: z.number(),
  created_at: z.string(),
});

export const notificationSchema = z.object({
  kind: z.enum(['warning', 'limit_reached']),
  key_id: z.string(),
  limit: z.enum(['daily', 'monthly']),
  threshold: z.number(),
  created_at: z.string(),
  emailed: z.boolean(),
});

export const keyUsageSchema = z.object({
  day_credits: z.number(),
  month_credits: z.number(),
  day_resets_at: z.string(),
  month_resets_at: z.string(),
});

export const statsSchema = z.object({
  rss_bytes: z.number(),
  heap_used_bytes: z.number(),
  event_loop_delay_ms: z.object({ p50: z.number(), p99: z.number(), max: z.number() }),
  media_part_max_ms: z.number().describe('The longest a single image or PDF part took to read and price in the gateway since the last reset (ms).'),
});

const jsonRpcId = z.union([z.string(), z.number(), z.null()]);

export const jsonRpcRequestSchema = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: jsonRpcId.optional().describe('Absent on notifications.'),
  method: z.string().describe('initialize, notifications/initialized, tools/list, tools/call, ping, …'),
  params: z.record(z.string(), z.unknown()).optional(),
}).describe('One JSON-RPC 2.0 message of the Model Context Protocol (Streamable HTTP transport).');

export const jsonRpcResponseSchema = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: jsonRpcId,
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).optional(),
});
