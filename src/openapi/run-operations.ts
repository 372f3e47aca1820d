/** The billed routes beyond chat (embeddings, images, videos), the job record, and the calling key's own view. */
import { z } from 'zod';
import { embeddingsBodySchema } from '../embeddings/embeddings-request.ts';
import type { ErrorCode } from '../shared/errors.ts';
import { body, GATE, pathParam, RATE_HEADERS, type Json, type Operation } from './operation-parts.ts';

export const MONEY: ErrorCode[] = ['insufficient_credits', 'monthly_limit_exceeded', 'api_key_limit_exceeded', 'trial_limit'];
export const UPSTREAM: ErrorCode[] = ['upstream_rate_limited', 'upstream_error', 'model_unavailable', 'provider_timeout', 'internal_error'];
/** A zod request schema as JSON Schema 2020-12 (what the route validates with). */
export function inputSchema(schema: z.ZodType): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as Json;
  return rest;
}
export const strictBody = (schema: Json) => body(schema, 'Strict: an unknown or invalid field answers 400 validation_failed with `param` and `details {formErrors, fieldErrors}`.');

/** The billed routes beyond chat, the job record, and the calling key's own view. */
export const RUNS: Operation[] = [
  {
    method: 'get', route: '/api/v1/key', path: '/api/v1/key', operationId: 'getOwnKey', tag: 'Jobs', security: 'apiKey',
    summary: "The calling key's settings and usage",
    description: "Any valid key, whatever its scopes; never another key's data or a secret. `{object:'api_key', id, name, key_prefix, scopes, requests_per_minute, ip_allowlist, daily_limit_credits, monthly_limit_credits, warning_threshold, expires_at, created_at, usage:{day_credits, month_credits, day_resets_at, month_resets_at}}`. The request counts toward the key's requests-per-minute window.",
    ok: [{ status: 200, description: 'The key.', headers: RATE_HEADERS }],
    errors: ['invalid_api_key', 'ip_not_allowed', 'rate_limit_exceeded', 'internal_error'],
  },
  {
    method: 'post', route: '/api/v1/embeddings', path: '/api/v1/embeddings', operationId: 'createEmbedding', tag: 'Embeddings', security: 'apiKey', scope: 'embeddings',
    summary: 'Create embeddings',
    description: 'Synchronous: the vectors exist only in this answer. At most 2,000,000 values (inputs × dimensions) per request (413 too_many_embedding_values, nothing charged). Rate-limit headers on the 200 and on the answers of the generation step, not on 400 validation or 404 model errors.',
    body: strictBody(inputSchema(embeddingsBodySchema)),
    ok: [{ status: 200, description: '`{object:"list", data:[{object:"embedding", index, embedding}], model, usage:{prompt_tokens, total_tokens}}`; `embedding` is an array of floats, or a base64 string of little-endian float32 with `encoding_format: "base64"`.', headers: ['X-Job-Id', ...RATE_HEADERS] }],
    errors: ['invalid_json', 'validation_failed', 'invalid_value', 'unsupported_parameter', 'model_not_found', 'too_many_embedding_values', 'provider_rejected_input', ...GATE, ...MONEY, ...UPSTREAM],
  },
  {
    method: 'post', route: '/api/v1/images/generations', path: '/api/v1/images/generations', operationId: 'createImage', tag: 'Media', security: 'apiKey', scope: 'images',
    summary: 'Generate images',
    description: 'Body: `model`, `prompt`, `n` (1–10, default 1) and the model\'s own inputs as `GET /models/{slug}` shows them in `configuration.input_schema`. `n > 1` runs all images or none. 200 within MEDIA_SYNC_WAIT_MS, else 202 and the job goes on.',
    body: strictBody({ type: 'object', required: ['model', 'prompt'], properties: { model: { type: 'string' }, prompt: { type: 'string' }, n: { type: 'integer', minimum: 1, maximum: 10 } }, additionalProperties: true }),
    ok: [
      { status: 200, description: '`{created, data:[{url}]}`.', headers: ['X-Job-Id', ...RATE_HEADERS] },
      { status: 202, description: '`{job_id, status:"processing"}`: poll the job.', headers: ['Location', 'X-Job-Id'] },
    ],
    errors: ['invalid_json', 'validation_failed', 'model_not_found', 'provider_rejected_request', ...GATE, ...MONEY, ...UPSTREAM],
  },
  {
    method: 'post', route: '/api/v1/videos/generations', path: '/api/v1/videos/generations', operationId: 'createVideo', tag: 'Media', security: 'apiKey', scope: 'video',
    summary: 'Generate a video',
    description: 'Always 202: poll the job. Body: `model`, `prompt`, and the model\'s own inputs (`image`, `end_image` only with `image`, `duration`, …) as `configuration.input_schema` shows them.',
    body: strictBody({ type: 'object', required: ['model', 'prompt'], properties: { model: { type: 'string' }, prompt: { type: 'string' } }, additionalProperties: true }),
    ok: [{ status: 202, description: '`{job_id, status:"processing"}`.', headers: ['Location', 'X-Job-Id', ...RATE_HEADERS] }],
    errors: ['invalid_json', 'validation_failed', 'model_not_found', 'provider_rejected_request', ...GATE, ...MONEY, ...UPSTREAM],
    errorHeaders: RATE_HEADERS,
  },
  {
    method: 'get', route: '/api/v1/jobs/:id', path: '/api/v1/jobs/{id}', operationId: 'getJob', tag: 'Jobs', security: 'apiKey', scope: 'jobs',
    summary: 'Get a job',
    description: 'Scope `jobs` for any job of the account; without it, jobs of a kind the key may create. No rate-limit headers, though the request counts.',
    parameters: [pathParam('id', 'Job id (UUID).', { type: 'string', format: 'uuid' })],
    ok: [{ status: 200, description: '`{id, object:"job", kind, status (processing|succeeded|failed|canceled), model, created_at, finished_at, usage, cost_credits, output?, error?}`; for embeddings `output` is `{count, dimensions}`, never the vectors; for media, the output URLs.' }],
    errors: ['forbidden', 'job_not_found', ...GATE, 'internal_error'],
  },
];
