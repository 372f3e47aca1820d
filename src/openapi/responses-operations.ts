/** The Responses route (DECISIONS "Agent formats: the Responses route"): create, and the stored responses. */
import { GATE, body, json, pathParam, RATE_HEADERS, type Json, type Operation } from './operation-parts.ts';
import { UPSTREAM } from './run-operations.ts';

const item: Json = { type: 'object', description: 'An input item: `message` (role `user`, `system`, `developer` or `assistant`; content a string or `input_text` / `input_image` / `input_file` parts; a message may omit `type`), `function_call`, `function_call_output`, `custom_tool_call`, `custom_tool_call_output`, `reasoning`, `additional_tools`. Items may carry `id` and `status`. Items of built-in tools and `item_reference` items are dropped and named as `input.<type>`.', additionalProperties: true };
const tool: Json = { type: 'object', required: ['type'], description: '`function` `{type, name, description?, parameters, strict?}`, `custom` `{type, name, description?, format?}` (free text or a grammar), `namespace` `{type, name, description, tools}`. Built-in tools (`web_search`, `file_search`, `code_interpreter`, `computer_use_preview`, `image_generation`, `mcp`, `local_shell`, …) are dropped, never sent, and named in X-Service-Ignored-Params as `tools.<type>`.', properties: { type: { type: 'string' }, name: { type: 'string' } }, additionalProperties: true };

const REQUEST: Json = {
  type: 'object',
  required: ['model', 'input'],
  properties: {
    model: { type: 'string', description: 'Any chat model of the catalog, of any provider.' },
    models: { type: 'array', items: { type: 'string' }, maxItems: 8, description: 'Fallback models, tried in order after `model`.' },
    input: { oneOf: [{ type: 'string' }, { type: 'array', items: item, maxItems: 10000 }] },
    instructions: { type: ['string', 'null'] },
    max_output_tokens: { type: ['integer', 'null'], minimum: 1, description: 'Default 4096, capped at the model\'s limit, held in full.' },
    temperature: { type: ['number', 'null'], minimum: 0, maximum: 2 },
    top_p: { type: ['number', 'null'], minimum: 0, maximum: 1 },
    tools: { type: ['array', 'null'], items: tool },
    tool_choice: { description: '`none`, `auto`, `required`, `{type: "function"|"custom", name}` or `{type: "allowed_tools", mode}`; one that requires a dropped built-in tool is 400 invalid_request.' },
    parallel_tool_calls: { type: ['boolean', 'null'] },
    text: { type: ['object', 'null'], properties: { format: { type: 'object', description: '`{type: "text"}`, `{type: "json_object"}` or `{type: "json_schema", name, schema, strict?, description?}`.' }, verbosity: { type: 'string' } } },
    reasoning: { type: ['object', 'null'], properties: { effort: { type: 'string' }, summary: { type: 'string' } } },
    stream: { type: ['boolean', 'null'] },
    store: { type: ['boolean', 'null'], description: 'Default true: the response and its input items are kept for RESPONSES_RETENTION_DAYS (default 30).' },
    previous_response_id: { type: ['string', 'null'], description: 'Continues a stored response of the same account: its conversation comes before `input`, and the hold counts all of it.' },
    metadata: { type: ['object', 'null'], additionalProperties: { type: 'string' } },
    user: { type: ['string', 'null'] },
    include: { type: ['array', 'null'], items: { type: 'string' } },
    truncation: { type: ['string', 'null'] },
    background: { type: ['boolean', 'null'], description: '`true` is refused (400 invalid_request).' },
  },
  additionalProperties: true,
};

const RESPONSE_DESCRIPTION = 'The response: `{id: "resp_" + job id, object: "response", created_at, status (completed | incomplete), incomplete_details ({reason: "max_output_tokens"} when cut), model (as asked), output (message items with output_text parts, function_call and custom_tool_call items, reasoning items), usage {input_tokens, input_tokens_details {cached_tokens}, output_tokens, output_tokens_details {reasoning_tokens}, total_tokens}, and the request\'s settings echoed}`.';
const responseId = pathParam('id', 'The response id (`resp_…`).');
const STORED_ERRORS = ['response_not_found', ...GATE, 'internal_error'] as const;

export const RESPONSES: Operation[] = [
  {
    method: 'post', route: '/api/v1/responses', path: '/api/v1/responses', operationId: 'createResponse', tag: 'Responses', security: 'apiKey', scope: 'chat',
    summary: 'Create a response (the Responses format)',
    description: 'The Responses format as the openai SDKs, the Agents SDK, the AI SDK and Codex CLI send it, on a chat model of any provider: provider_1 models on provider_1\'s own Responses endpoint (`store: false`, the whole context), the others translated through their chat protocols. '
      + 'Checks, holds, limits, refunds and headers as on chat. With `stream: true`: server-sent events `event: <type>` / `data: {type, …, sequence_number}` from `response.created` and `response.in_progress` to `response.completed` or `response.incomplete`; an error after the first byte is one `error` event then `response.failed`. '
      + 'Unknown fields are dropped and named in X-Service-Ignored-Params; Codex\'s `client_metadata` and `prompt_cache_key` are taken quietly.',
    body: body(REQUEST),
    ok: [{
      status: 200,
      description: RESPONSE_DESCRIPTION,
      headers: ['X-Service-Job-Id', 'X-Service-Ignored-Params', ...RATE_HEADERS],
      content: { ...json({ type: 'object', description: RESPONSE_DESCRIPTION }), 'text/event-stream': { schema: { type: 'string', description: 'Server-sent events of the Responses format.' } } },
    }],
    errors: ['invalid_json', 'invalid_request', 'model_not_supported', 'unsupported_content', 'provider_rejected_request', 'model_not_found', 'response_not_found', 'payload_too_large',
      'insufficient_credits', 'spending_limit_reached', 'api_key_limit_exceeded', 'trial_limit', 'client_closed_request', ...GATE, ...UPSTREAM],
    errorHeaders: RATE_HEADERS,
  },
  {
    method: 'get', route: '/api/v1/responses/:id', path: '/api/v1/responses/{id}', operationId: 'getResponse', tag: 'Responses', security: 'apiKey', scope: 'chat',
    summary: 'Get a stored response',
    description: 'A response of the key\'s own account kept with `store` (the default) and not yet expired or deleted; anything else (unknown, deleted, expired, unstored, another account\'s) is 404 response_not_found.',
    parameters: [responseId],
    ok: [{ status: 200, description: RESPONSE_DESCRIPTION, headers: RATE_HEADERS }],
    errors: [...STORED_ERRORS],
    errorHeaders: RATE_HEADERS,
  },
  {
    method: 'get', route: '/api/v1/responses/:id/input_items', path: '/api/v1/responses/{id}/input_items', operationId: 'listResponseInputItems', tag: 'Responses', security: 'apiKey', scope: 'chat',
    summary: "A stored response's input items",
    description: 'The input items of that request (not of the responses it continued), each with an `id`. `order` `desc` (default) or `asc`, `after` an item id, `limit` 1–100 (default 20).',
    parameters: [
      responseId,
      { name: 'order', in: 'query', required: false, schema: { type: 'string', enum: ['asc', 'desc'] } },
      { name: 'after', in: 'query', required: false, schema: { type: 'string' } },
      { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100 } },
    ],
    ok: [{ status: 200, description: '`{object: "list", data: [items], first_id, last_id, has_more}`.', headers: RATE_HEADERS }],
    errors: [...STORED_ERRORS],
    errorHeaders: RATE_HEADERS,
  },
  {
    method: 'delete', route: '/api/v1/responses/:id', path: '/api/v1/responses/{id}', operationId: 'deleteResponse', tag: 'Responses', security: 'apiKey', scope: 'chat',
    summary: 'Delete a stored response',
    description: 'Deletes its content at once; a conversation that went through it can no longer be continued (404 response_not_found).',
    parameters: [responseId],
    ok: [{ status: 200, description: '`{id, object: "response", deleted: true}`.', headers: RATE_HEADERS }],
    errors: [...STORED_ERRORS],
    errorHeaders: RATE_HEADERS,
  },
];
