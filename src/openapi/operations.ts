/**
 * Every route of the gateway as one row: its Fastify pattern (openapi.test.ts matches these
 * against the registered routes), its access, body, answers and error codes.
 */
import { z } from 'zod';
import { listFiltersSchema } from '../catalog/listing.ts';
import { AUDIO } from './audio-operations.ts';
import type { ErrorCode } from '../shared/errors.ts';
import { body, GATE, json, pathParam, RATE_HEADERS, ref, type Json, type Operation } from './operation-parts.ts';
import { FINE_TUNING } from './fine-tuning-operations.ts';
import { RUNS } from './run-operations.ts';
import { MESSAGES } from './messages-operations.ts';
import { PORTAL } from './portal-operations.ts';
import { RESPONSES } from './responses-operations.ts';

export { TAGS, type Operation } from './operation-parts.ts';

/** The only 4xx a static route can give: the HTTP server refusing a request it cannot read, before any route runs. */
const BEFORE_ROUTING = { status: '4XX' as const, description: 'Only before routing: a request the HTTP server cannot read (a malformed request line or header section) is refused by the server itself.' };

const IF_NONE_MATCH = { name: 'If-None-Match', in: 'header', required: false, description: 'An ETag of an earlier answer: 304 when unchanged.', schema: { type: 'string' } };

/** The catalog filters as query parameters, from the schema GET /models validates with. */
function filterParameters(): Json[] {
  const shape = z.toJSONSchema(listFiltersSchema, { target: 'draft-2020-12', io: 'input' }) as { properties: Record<string, Json> };
  return Object.entries(shape.properties).map(([name, schema]) => {
    const { description, ...rest } = schema;
    return { name, in: 'query', required: false, description, schema: rest };
  });
}

const ADMIN_ERRORS: ErrorCode[] = ['invalid_admin_token', 'internal_error'];
const accountId = pathParam('id', 'Account id.');
const keyId = pathParam('keyId', 'Key id.');

const BUILT: Operation[] = [
  {
    method: 'post', route: '/api/v1/chat/completions', path: '/api/v1/chat/completions', operationId: 'createChatCompletion', tag: 'Chat', security: 'apiKey', scope: 'chat',
    summary: 'Create a chat completion',
    description: 'Order of checks: key, IP allowlist, scope, requests-per-minute limit; then body validation, model lookup, content support, credit hold, spending limits, key credit limits, trial rules, before any provider call. '
      + 'Non-stream answers slower than 25 s keep the connection alive with whitespace after a 200, so a later failure arrives as an `{error}` body with HTTP 200. '
      + 'With `stream: true` the answer is server-sent events (ChatCompletionChunk objects, `: keep-alive` comments at most every 15 s, `data: [DONE]`). The provider call times out after 85 s (504, refunded).',
    body: body(ref('ChatCompletionRequest')),
    ok: [{
      status: 200,
      description: 'The completion, or an event stream when `stream` is true.',
      headers: ['X-Service-Job-Id', 'X-Service-Ignored-Params', ...RATE_HEADERS],
      content: {
        ...json(ref('ChatCompletion')),
        'text/event-stream': { schema: { type: 'string', description: 'Server-sent events, each `data:` line one ChatCompletionChunk.', contentMediaType: 'application/json', contentSchema: ref('ChatCompletionChunk') } },
      },
    }],
    errors: ['invalid_json', 'invalid_request', 'model_not_supported', 'unsupported_content', 'provider_rejected_request', 'invalid_api_key', 'insufficient_credits', 'spending_limit_reached',
      'insufficient_scope', 'ip_not_allowed', 'model_not_found', 'payload_too_large', 'rate_limit_exceeded', 'api_key_limit_exceeded', 'trial_limit', 'upstream_rate_limited',
      'client_closed_request', 'internal_error', 'upstream_error', 'model_unavailable', 'provider_timeout'],
    errorHeaders: RATE_HEADERS,
  },
  {
    method: 'get', route: '/api/v1/models', path: '/api/v1/models', operationId: 'listModels', tag: 'Models', security: 'optionalApiKey', scope: 'read',
    summary: 'List models',
    description: 'Public and free. With a key, scope `read` is needed and the request counts toward the key\'s rate limit (no rate-limit headers are sent). Listed by default: priced, not duplicate, not removed, runnable models; deprecated ones are listed with their `lifecycle`. A key check call is `GET /models?limit=1`.',
    parameters: [...filterParameters(), IF_NONE_MATCH],
    ok: [
      { status: 200, description: 'The catalog list.', headers: ['ETag', 'Cache-Control'], content: json(ref('ModelList')) },
      { status: 304, description: 'Not modified (If-None-Match matched).', headers: ['ETag', 'Cache-Control'] },
    ],
    errors: ['invalid_category', 'invalid_provider', 'invalid_request', ...GATE, 'internal_error'],
  },
  {
    method: 'get', route: '/api/v1/models/*', path: '/api/v1/models/{slug}', operationId: 'getModel', tag: 'Models', security: 'optionalApiKey', scope: 'read',
    summary: 'Get a model',
    description: 'Same access rules as the list. Answers 200 with the same fields for every existing slug, including unavailable ones. A provider model id also resolves (the runnable, canonical match). Slugs may contain `/`.',
    parameters: [pathParam('slug', 'The model slug, or a provider model id.'), IF_NONE_MATCH],
    ok: [
      { status: 200, description: 'The model with its long description, configuration and examples.', headers: ['ETag', 'Cache-Control'], content: json(ref('ModelDetail')) },
      { status: 304, description: 'Not modified (If-None-Match matched).', headers: ['ETag', 'Cache-Control'] },
    ],
    errors: ['model_not_found', ...GATE, 'internal_error'],
  },
  {
    method: 'post', route: '/mcp', path: '/mcp', operationId: 'mcp', tag: 'MCP', security: 'optionalApiKey',
    summary: 'Model Context Protocol (Streamable HTTP, stateless)',
    description: 'JSON-RPC 2.0 messages of MCP; answers are JSON (no sessions, no event streams). Clients send `Accept: application/json, text/event-stream`. '
      + 'Tools (read-only): list_models, get_model, estimate_cost, search_docs, get_doc. '
      + 'Limits: without a key 30 requests per minute per client address and 600 per minute for all callers without a key together; with a valid key of any scope 300 per minute per account. Over a limit: 429 with a JSON-RPC error -32000.',
    body: { required: true, content: json({ oneOf: [ref('JsonRpcRequest'), { type: 'array', items: ref('JsonRpcRequest') }] }) },
    ok: [
      { status: 200, description: 'The JSON-RPC answer.', content: json(ref('JsonRpcResponse')) },
      { status: 202, description: 'A notification was accepted (no body).' },
      { status: 400, description: 'The body is not JSON (JSON-RPC -32700), or not a valid JSON-RPC message.', content: json(ref('JsonRpcResponse')) },
      { status: 406, description: 'The Accept header does not take both application/json and text/event-stream.', content: json(ref('JsonRpcResponse')) },
      { status: 429, description: 'Over a limit: `{"jsonrpc":"2.0","error":{"code":-32000,"message":…},"id":<the request\'s id or null>}`.', headers: ['Retry-After', ...RATE_HEADERS], content: json(ref('JsonRpcResponse')) },
    ],
    errors: ['invalid_api_key', 'ip_not_allowed', 'payload_too_large', 'internal_error'],
  },
  {
    method: 'get', route: '/api/v1/openapi.json', path: '/api/v1/openapi.json', operationId: 'getOpenApiDocument', tag: 'Documentation', security: 'none',
    summary: 'This OpenAPI document',
    description: 'Generated at start-up from the schemas the routes validate with.',
    ok: [{ status: 200, description: 'The OpenAPI 3.1 document.', content: json({ type: 'object' }) }, BEFORE_ROUTING],
    errors: ['internal_error'],
  },
  {
    method: 'get', route: '/docs', path: '/docs', operationId: 'getDocsPage', tag: 'Documentation', security: 'none',
    summary: 'The API reference, rendered',
    description: 'Swagger UI (served by the gateway itself, no CDN) over /api/v1/openapi.json.',
    ok: [{ status: 200, description: 'An HTML page.', content: { 'text/html': { schema: { type: 'string' } } } }, BEFORE_ROUTING],
    errors: ['internal_error'],
  },
  {
    method: 'get', route: '/docs/*', path: '/docs/{file}', operationId: 'getDocsAsset', tag: 'Documentation', security: 'none',
    summary: 'A file of the rendered reference',
    description: 'The Swagger UI files the page loads.',
    parameters: [pathParam('file', 'File name, e.g. swagger-ui.css.')],
    ok: [{ status: 200, description: 'The file.', content: { 'application/octet-stream': { schema: { type: 'string' } } } }],
    errors: ['not_found'],
  },
  {
    method: 'get', route: '/metrics', path: '/metrics', operationId: 'getMetrics', tag: 'Operations', security: 'metrics',
    summary: 'Prometheus metrics',
    description: 'The Prometheus text format. Registered only when METRICS_TOKEN or ADMIN_TOKEN is set (404 otherwise). Labels: route, status, code, provider, model; never a key, an account or an address.',
    ok: [{ status: 200, description: 'Metrics.', content: { 'text/plain': { schema: { type: 'string' } } } }],
    errors: ['invalid_metrics_token', 'internal_error'],
  },
  {
    method: 'post', route: '/admin/v1/accounts', path: '/admin/v1/accounts', operationId: 'adminCreateAccount', tag: 'Admin', security: 'admin',
    summary: 'Create an account', description: 'A new account without credits.',
    body: body(ref('NewAccount')),
    ok: [{ status: 201, description: 'The account.', content: json(ref('Account')) }],
    errors: ['validation_failed', 'invalid_json', ...ADMIN_ERRORS],
  },
  {
    method: 'get', route: '/admin/v1/accounts/:id', path: '/admin/v1/accounts/{id}', operationId: 'adminGetAccount', tag: 'Admin', security: 'admin',
    summary: 'Get an account', description: 'Balance, held, available, monthly limit and this month\'s spending.',
    parameters: [accountId],
    ok: [{ status: 200, description: 'The account.', content: json(ref('Account')) }],
    errors: ['account_not_found', ...ADMIN_ERRORS],
  },
  {
    method: 'patch', route: '/admin/v1/accounts/:id', path: '/admin/v1/accounts/{id}', operationId: 'adminUpdateAccount', tag: 'Admin', security: 'admin',
    summary: 'Edit an account', description: 'The monthly spending limit (null: none) and the billing e-mail switch.',
    parameters: [accountId],
    body: body(ref('AccountPatch')),
    ok: [{ status: 200, description: 'The account.', content: json(ref('Account')) }],
    errors: ['validation_failed', 'invalid_json', 'account_not_found', ...ADMIN_ERRORS],
  },
  {
    method: 'post', route: '/admin/v1/accounts/:id/credits', path: '/admin/v1/accounts/{id}/credits', operationId: 'adminAddCredits', tag: 'Admin', security: 'admin',
    summary: 'Add credits', description: '`purchase: true` is a paid top-up (lifts the trial rules); `false` is a grant.',
    parameters: [accountId],
    body: body(ref('CreditsRequest')),
    ok: [{ status: 200, description: 'The account.', content: json(ref('Account')) }],
    errors: ['validation_failed', 'invalid_json', 'account_not_found', ...ADMIN_ERRORS],
  },
  {
    method: 'get', route: '/admin/v1/accounts/:id/ledger', path: '/admin/v1/accounts/{id}/ledger', operationId: 'adminListLedger', tag: 'Admin', security: 'admin',
    summary: 'Ledger rows', description: 'Newest first.',
    parameters: [accountId, { name: 'limit', in: 'query', required: false, description: 'A positive integer or `all`; default 1000.', schema: { type: 'string', pattern: '^([1-9][0-9]*|all)$' } }],
    ok: [{ status: 200, description: 'Ledger rows.', content: json({ type: 'array', items: ref('LedgerEntry') }) }],
    errors: ['validation_failed', 'account_not_found', ...ADMIN_ERRORS],
  },
  {
    method: 'get', route: '/admin/v1/accounts/:id/notifications', path: '/admin/v1/accounts/{id}/notifications', operationId: 'adminListNotifications', tag: 'Admin', security: 'admin',
    summary: 'Limit notifications', description: 'Warnings (threshold crossed) and limits reached, per key.',
    parameters: [accountId],
    ok: [{ status: 200, description: 'Notifications.', content: json({ type: 'array', items: ref('Notification') }) }],
    errors: ['account_not_found', ...ADMIN_ERRORS],
  },
  {
    method: 'post', route: '/admin/v1/accounts/:id/keys', path: '/admin/v1/accounts/{id}/keys', operationId: 'adminCreateKey', tag: 'Admin', security: 'admin',
    summary: 'Create a key', description: 'The secret is in this answer only. At most 20 active keys per account.',
    parameters: [accountId],
    body: body(ref('NewKey')),
    ok: [{ status: 201, description: 'The key with its secret.', content: json(ref('IssuedKey')) }],
    errors: ['validation_failed', 'invalid_json', 'account_not_found', ...ADMIN_ERRORS],
  },
  {
    method: 'get', route: '/admin/v1/accounts/:id/keys', path: '/admin/v1/accounts/{id}/keys', operationId: 'adminListKeys', tag: 'Admin', security: 'admin',
    summary: 'List keys', description: 'The account\'s keys, without secrets.',
    parameters: [accountId],
    ok: [{ status: 200, description: 'Keys.', content: json({ type: 'array', items: ref('Key') }) }],
    errors: ['account_not_found', ...ADMIN_ERRORS],
  },
  {
    method: 'patch', route: '/admin/v1/keys/:keyId', path: '/admin/v1/keys/{keyId}', operationId: 'adminUpdateKey', tag: 'Admin', security: 'admin',
    summary: 'Edit a key', description: 'Scopes, rate limit, allowlist and expiry are fixed at creation (400 validation_failed if sent).',
    parameters: [keyId],
    body: body(ref('KeyPatch')),
    ok: [{ status: 200, description: 'The key.', content: json(ref('Key')) }],
    errors: ['validation_failed', 'invalid_json', 'key_not_found', ...ADMIN_ERRORS],
  },
  {
    method: 'post', route: '/admin/v1/keys/:keyId/revoke', path: '/admin/v1/keys/{keyId}/revoke', operationId: 'adminRevokeKey', tag: 'Admin', security: 'admin',
    summary: 'Revoke a key', description: 'Stops the key at once, in-flight runs included (401, nothing charged).',
    parameters: [keyId],
    ok: [{ status: 200, description: 'The key.', content: json(ref('Key')) }],
    errors: ['key_not_found', ...ADMIN_ERRORS],
  },
  {
    method: 'post', route: '/admin/v1/keys/:keyId/rotate', path: '/admin/v1/keys/{keyId}/rotate', operationId: 'adminRotateKey', tag: 'Admin', security: 'admin',
    summary: 'Rotate a key', description: 'A new key with the same settings; the old one stops at the same moment. This month\'s usage moves to the new key.',
    parameters: [keyId],
    ok: [{ status: 201, description: 'The new key with its secret.', content: json(ref('IssuedKey')) }],
    errors: ['key_not_found', ...ADMIN_ERRORS],
  },
  {
    method: 'get', route: '/admin/v1/keys/:keyId/usage', path: '/admin/v1/keys/{keyId}/usage', operationId: 'adminKeyUsage', tag: 'Admin', security: 'admin',
    summary: 'Key usage', description: 'Credits used today and this month (UTC), and when those reset.',
    parameters: [keyId],
    ok: [{ status: 200, description: 'Usage.', content: json(ref('KeyUsage')) }],
    errors: ['key_not_found', ...ADMIN_ERRORS],
  },
  {
    method: 'get', route: '/admin/v1/stats', path: '/admin/v1/stats', operationId: 'adminStats', tag: 'Admin', security: 'admin',
    summary: 'Process stats', description: 'Memory and event-loop delay since the last reset.',
    parameters: [{ name: 'reset', in: 'query', required: false, description: '`true` restarts the measurement.', schema: { type: 'string', enum: ['true', 'false'] } }],
    ok: [{ status: 200, description: 'Stats.', content: json(ref('Stats')) }],
    errors: ADMIN_ERRORS,
  },
  // The admin dashboard (README "Admin dashboard"): its page and assets, and the reads it shows.
  {
    method: 'get', route: '/admin', path: '/admin', operationId: 'getDashboardPage', tag: 'Admin', security: 'none',
    summary: 'The admin dashboard',
    description: 'The built dashboard page (dist/dashboard); 503 when it was not built. Everything it shows comes from /admin/v1 with the admin token.',
    ok: [
      { status: 200, description: 'An HTML page.', content: { 'text/html': { schema: { type: 'string' } } } },
      { status: 503, description: 'The dashboard is not built (`npm run build`).', content: { 'text/plain': { schema: { type: 'string' } } } },
      BEFORE_ROUTING,
    ],
    errors: ['internal_error'],
  },
  {
    method: 'get', route: '/admin/assets/*', path: '/admin/assets/{file}', operationId: 'getDashboardAsset', tag: 'Admin', security: 'none',
    summary: 'A file of the admin dashboard',
    description: 'The built scripts and styles the page loads (names carry a content hash; cached for good).',
    parameters: [pathParam('file', 'File name, as the page names it.')],
    ok: [
      { status: 200, description: 'The file.', content: { 'application/octet-stream': { schema: { type: 'string' } } } },
      { status: 404, description: 'No such file.', content: { 'text/plain': { schema: { type: 'string' } } } },
    ],
    errors: [],
  },
  {
    method: 'get', route: '/admin/v1/usage', path: '/admin/v1/usage', operationId: 'adminUsage', tag: 'Admin', security: 'admin',
    summary: 'Usage per hour or day',
    description: 'Requests, errors, credits and tokens per hour or UTC day, errors by code, top 10 models and keys, from the hourly rollups. Default: the last 24 hours; hourly ranges up to 36 days, daily up to 400.',
    parameters: [
      { name: 'from', in: 'query', required: false, description: 'Start (ISO date or date-time).', schema: { type: 'string' } },
      { name: 'to', in: 'query', required: false, description: 'End (ISO date or date-time); default now.', schema: { type: 'string' } },
      { name: 'bucket', in: 'query', required: false, description: 'Bucket size; default hour.', schema: { type: 'string', enum: ['hour', 'day'] } },
      { name: 'account_id', in: 'query', required: false, description: 'Only this account.', schema: { type: 'string' } },
      { name: 'key_id', in: 'query', required: false, description: 'Only this key.', schema: { type: 'string' } },
    ],
    ok: [{ status: 200, description: '`{from, to, bucket, totals, series, errors_by_code, top_models, top_keys}`.', content: json({ type: 'object' }) }],
    errors: ['validation_failed', ...ADMIN_ERRORS],
  },
  ...(['jobs', 'jobs.csv'] as const).map((name): Operation => ({
    method: 'get', route: `/admin/v1/${name}`, path: `/admin/v1/${name}`, operationId: name === 'jobs' ? 'adminJobLog' : 'adminJobLogCsv', tag: 'Admin', security: 'admin',
    summary: name === 'jobs' ? 'The request log' : 'The request log as CSV',
    description: name === 'jobs'
      ? 'Jobs newest first, `{data, next_cursor}`; pass `next_cursor` back as `cursor`.'
      : 'The same rows (same filters) as CSV, up to 100,000.',
    parameters: [
      ...['account_id', 'key_id', 'model', 'code', 'cursor'].map((param) => ({ name: param, in: 'query', required: false, description: `Filter or page: ${param}.`, schema: { type: 'string' } })),
      { name: 'status', in: 'query', required: false, description: 'Only jobs in this status.', schema: { type: 'string', enum: ['processing', 'succeeded', 'failed', 'canceled'] } },
      ...(name === 'jobs' ? [{ name: 'limit', in: 'query', required: false, description: 'Rows per page, 1–500 (default 50).', schema: { type: 'integer', minimum: 1, maximum: 500 } }] : []),
    ],
    ok: [name === 'jobs'
      ? { status: 200, description: 'A page of jobs.', content: json({ type: 'object' }) }
      : { status: 200, description: 'CSV with a header row.', content: { 'text/csv': { schema: { type: 'string' } } } }],
    errors: ['validation_failed', ...ADMIN_ERRORS],
  })),
  {
    method: 'get', route: '/admin/v1/accounts', path: '/admin/v1/accounts', operationId: 'adminSearchAccounts', tag: 'Admin', security: 'admin',
    summary: 'Search accounts',
    description: 'Accounts whose name, e-mail or id contains `q`, newest first.',
    parameters: [
      { name: 'q', in: 'query', required: false, description: 'Search text; empty: every account.', schema: { type: 'string' } },
      { name: 'limit', in: 'query', required: false, description: 'At most this many, 1–200 (default 50).', schema: { type: 'integer', minimum: 1, maximum: 200 } },
    ],
    ok: [{ status: 200, description: '`{data: [account…]}` (without `month_spent_credits`).', content: json({ type: 'object' }) }],
    errors: ['validation_failed', ...ADMIN_ERRORS],
  },
  {
    method: 'get', route: '/admin/v1/jobs/:jobId', path: '/admin/v1/jobs/{jobId}', operationId: 'adminJobDetail', tag: 'Admin', security: 'admin',
    summary: 'One request in detail',
    description: 'The request log row with its account name, the provider and provider model id it ran on (its last attempt), the message its client got (`error_message`) and the job\'s ledger rows (`ledger`).',
    parameters: [pathParam('jobId', 'Job id.')],
    ok: [{ status: 200, description: 'The request.', content: json({ type: 'object' }) }],
    errors: ['job_not_found', ...ADMIN_ERRORS],
  },
  {
    method: 'get', route: '/admin/v1/accounts/:id/statement', path: '/admin/v1/accounts/{id}/statement', operationId: 'adminAccountStatement', tag: 'Admin', security: 'admin',
    summary: 'An account\'s statement',
    description: 'The ledger rows that move the balance, newest first, each with its signed change and the balance after it: `{balance_credits, data: [entry + change_credits + balance_after_credits], next_before}`.',
    parameters: [
      accountId,
      { name: 'limit', in: 'query', required: false, description: 'At most this many rows, 1–500 (default 50).', schema: { type: 'integer', minimum: 1, maximum: 500 } },
      { name: 'before', in: 'query', required: false, description: 'Rows older than this ledger id (`next_before` of the previous page).', schema: { type: 'integer', minimum: 1 } },
    ],
    ok: [{ status: 200, description: 'The statement.', content: json({ type: 'object' }) }],
    errors: ['validation_failed', 'account_not_found', ...ADMIN_ERRORS],
  },
];

export const OPERATIONS: readonly Operation[] = [...BUILT, ...MESSAGES, ...RESPONSES, ...RUNS, ...FINE_TUNING, ...AUDIO, ...PORTAL];
