/**
 * The OpenAPI 3.1 document of every route the gateway registers, built once at start-up.
 * Request schemas are the zod schemas the routes validate with (chat request, catalog
 * filters, admin bodies), converted by `z.toJSONSchema`; answers use the shapes in
 * catalog/model-schema.ts and openapi/schemas.ts. The operations themselves are a table
 * (operations.ts) that openapi.test.ts holds against the registered routes.
 */
import { z } from 'zod';
import { ERROR_CODES, statusOf, typeOf, type ErrorCode } from '../shared/errors.ts';
import { OPERATIONS, TAGS, type Operation } from './operations.ts';
import { HOLD_LIMITS, type HoldLimit } from '../store/limits.ts';
import { componentSchemas } from './components.ts';

type Json = Record<string, unknown>;

/** A zod schema as an OpenAPI 3.1 (JSON Schema 2020-12) schema object. */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json;
  return rest;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const HEADERS: Record<string, { description: string; schema: Json }> = {
  'X-RateLimit-Limit': { description: "The key's requests per minute.", schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current 60-second window.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Seconds until the window has room: 60 on an allowed request; on a 429, until the oldest request leaves the window.', schema: { type: 'integer' } },
  'X-Service-Job-Id': { description: 'The job id (UUID), also in `id` after `chatcmpl-` (`msg_` on the Messages route). Sent once the credits were reserved.', schema: { type: 'string', format: 'uuid' } },
  'X-Service-Ignored-Params': { description: 'Only when something was dropped: comma-separated names of unknown top-level fields, tool_choice / parallel_tool_calls without tools, and parameters the provider or model does not take.', schema: { type: 'string' } },
  'X-Key-Limit-Reset': { description: "On 429 api_key_limit_exceeded: the instant the key's credit limit frees up (ISO 8601, UTC).", schema: { type: 'string', format: 'date-time' } },
  'X-Job-Id': { description: 'The job id (UUID) of an embeddings or media run.', schema: { type: 'string', format: 'uuid' } },
  Location: { description: 'On 202: `/api/v1/jobs/<id>`, the job to poll.', schema: { type: 'string' } },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
  ETag: { description: 'Entity tag of the answer; send it back in If-None-Match for a 304.', schema: { type: 'string' } },
  'Cache-Control': { description: 'public, max-age=300 on catalog answers.', schema: { type: 'string' } },
};

const RATE_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

function headers(names: string[] | undefined): Json | undefined {
  if (names === undefined || names.length === 0) return undefined;
  return Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
}

/** Error answers of an operation, one per status, naming the codes that status carries there. */
function errorResponses(op: Operation): Json {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of op.errors) byStatus.set(statusOf(code), [...(byStatus.get(statusOf(code)) ?? []), code]);
  const answers: Json = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const names = status === 401 ? [] : [...(op.errorHeaders ?? [])];
    if (codes.includes('rate_limit_exceeded') && !names.includes('X-RateLimit-Limit')) names.push(...RATE_HEADERS);
    if (codes.includes('api_key_limit_exceeded')) names.push('X-Key-Limit-Reset');
    if (codes.includes('upload_limit_exceeded')) names.push('Retry-After');
    answers[String(status)] = {
      description: codes.map((c) => `\`${c}\``).join(', '),
      headers: headers(names),
      content: { 'application/json': { schema: ref(op.errorSchema ?? 'Error') } },
    };
  }
  return answers;
}

function operationObject(op: Operation): Json {
  const responses: Json = {};
  for (const ok of op.ok) {
    responses[String(ok.status)] = {
      description: ok.description,
      headers: headers(ok.headers),
      content: ok.content,
    };
  }
  Object.assign(responses, errorResponses(op));
  const security = {
    none: [],
    apiKey: [{ apiKey: [] }],
    optionalApiKey: [{}, { apiKey: [] }],
    admin: [{ adminToken: [] }],
    metrics: [{ metricsToken: [] }, { adminToken: [] }],
    portal: [{ portalSession: [] }],
    messagesKey: [{ apiKey: [] }, { anthropicApiKey: [] }],
  }[op.security];
  return {
    operationId: op.operationId,
    summary: op.summary,
    description: op.description,
    tags: [op.tag],
    security,
    parameters: op.parameters,
    requestBody: op.body,
    responses,
    ...(op.scope !== undefined ? { 'x-scope': op.scope } : {}),
  };
}

function errorTable(): string {
  const rows = ERROR_CODES.map((code) => `| \`${code}\` | ${statusOf(code)} | \`${typeOf(code)}\` |`);
  return ['Every error answer is `{"error": {message, type, code}}`, plus `param` on chat and `details` on strict-schema routes. Clients switch on `code`.', '', '| code | HTTP | type |', '|---|---|---|', ...rows].join('\n');
}

/** The whole document; `limits`: the limit table whose settings the account and key schemas carry (src/store/limits.ts). */
export function buildOpenApiDocument(version: string, limits: readonly HoldLimit[] = HOLD_LIMITS): Json {
  const paths: Record<string, Json> = {};
  for (const op of OPERATIONS) {
    const item = (paths[op.path] ??= {});
    item[op.method] = operationObject(op);
  }
  const schemas: Json = Object.fromEntries(componentSchemas(limits).map(([name, schema, io]) => [name, jsonSchema(schema, io)]));
  (schemas.Error as Json).description = errorTable();
  return {
    openapi: '3.1.0',
    info: {
      title: 'Model Gateway API',
      version,
      summary: 'One API key and one prepaid credit balance for the models of many providers.',
      description: [
        'A paid, OpenAI-compatible model gateway. Every run is billed in credits (1 credit = USD 0.01): the gateway holds credits before a run, bills the real usage after it and refunds the rest.',
        '',
        'Authentication: `Authorization: Bearer svc_live_…` on every route except the public catalog and the MCP endpoint. A missing, unknown, revoked or expired key answers 401 `invalid_api_key`; a key reaches only the routes of its scopes (403 `insufficient_scope`).',
        '',
        'The guide for each route, limit and header is in the API docs pages (also readable through the MCP tools `search_docs` and `get_doc`).',
      ].join('\n'),
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: '/', description: 'The gateway that serves this document.' }],
    tags: TAGS,
    paths,
    components: {
      schemas,
      headers: Object.fromEntries(Object.entries(HEADERS).map(([name, h]) => [name, h])),
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', bearerFormat: 'svc_live_ followed by 64 hex characters', description: 'An API key.' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN of the gateway (operators).' },
        metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN of the gateway (ADMIN_TOKEN works too).' },
        anthropicApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'An API key as the Anthropic SDKs send it (the Messages route).' },
        portalSession: { type: 'apiKey', in: 'cookie', name: 'mg_portal', description: 'The portal session cookie (sign-in by e-mail link or OpenID Connect); changes also send X-CSRF-Token.' },
      },
    },
  };
}
