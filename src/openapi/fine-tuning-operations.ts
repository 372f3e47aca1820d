/** The fine-tuning routes (docs/api/fine-tuning.md), on provider_1's fine-tuning protocol. */
import { createJobSchema } from '../fine-tuning/request.ts';
import type { ErrorCode } from '../shared/errors.ts';
import { GATE, pathParam, RATE_HEADERS, type Json, type Operation } from './operation-parts.ts';
import { inputSchema, MONEY, strictBody, UPSTREAM } from './run-operations.ts';

const JOB_ID = [pathParam('id', 'Fine-tuning job id: the gateway job UUID.', { type: 'string', format: 'uuid' })];
const PAGE: Json[] = [
  { name: 'after', in: 'query', required: false, description: 'The id of the last item of the previous page.', schema: { type: 'string' } },
  { name: 'limit', in: 'query', required: false, description: 'Items per page (1–100).', schema: { type: 'integer', minimum: 1, maximum: 100 } },
];
const JOB_OBJECT = '`{object:"fine_tuning.job", id (our job UUID), model (catalog slug), created_at, finished_at, fine_tuned_model, organization_id, result_files, status (validating_files|queued|running|succeeded|failed|cancelled), training_file, validation_file, hyperparameters, trained_tokens, error, seed, estimated_finish, integrations, user_provided_suffix, method, metadata, cost_credits}`; an ended status shows once the job is settled or refunded.';
const OWN: ErrorCode[] = ['forbidden', 'job_not_found'];

function op(method: 'get' | 'post', route: string, operationId: string, summary: string, description: string, ok: string, errors: ErrorCode[], extra: Partial<Operation> = {}): Operation {
  return {
    method, route, path: route.replace(/:(\w+)/g, '{$1}'), operationId, summary, description, tag: 'Fine-tuning', security: 'apiKey', scope: 'fine_tuning',
    ok: [{ status: 200, description: ok, headers: RATE_HEADERS }],
    errors: [...errors, ...GATE, 'internal_error'],
    errorHeaders: RATE_HEADERS,
    ...extra,
  };
}

export const FINE_TUNING: Operation[] = [
  op('post', '/api/v1/fine_tuning/jobs', 'createFineTuningJob', 'Create a fine-tuning job',
    'A file is an https URL (fetched by the gateway, at most 64 MB) or a `data:` URL of JSONL chat examples; the gateway uploads it to the provider. The model is a text model tagged `fine-tunable` with `pricing.training_credits_per_1m`. Held: the file\'s training tokens × epochs (`hyperparameters.n_epochs`, default 3) × the training price; settled on the provider\'s trained tokens; a failed job is refunded. A key with a daily or monthly credit limit: 403 api_key_limit_unsupported, nothing charged; fine-tuning never counts toward key limits.',
    JOB_OBJECT, ['invalid_json', 'validation_failed', 'model_not_found', 'api_key_limit_unsupported', 'provider_rejected_request', ...MONEY.filter((c) => c !== 'api_key_limit_exceeded'), ...UPSTREAM],
    { body: strictBody(inputSchema(createJobSchema)) }),
  op('get', '/api/v1/fine_tuning/jobs', 'listFineTuningJobs', 'List fine-tuning jobs', "The account's jobs, newest first.", '`{object:"list", data:[job], has_more}`.', ['validation_failed'], { parameters: PAGE }),
  op('get', '/api/v1/fine_tuning/jobs/:id', 'getFineTuningJob', 'Get a fine-tuning job', 'One job of the account.', JOB_OBJECT, OWN, { parameters: JOB_ID }),
  op('post', '/api/v1/fine_tuning/jobs/:id/cancel', 'cancelFineTuningJob', 'Cancel a fine-tuning job', 'Cancels the job at the provider; what was trained until then is billed, the rest of the hold released. A job that has ended: 400 invalid_request.', JOB_OBJECT, [...OWN, 'invalid_request', ...UPSTREAM], { parameters: JOB_ID }),
  op('get', '/api/v1/fine_tuning/jobs/:id/events', 'listFineTuningEvents', 'Fine-tuning job events', "The provider's events of the job, newest first.", '`{object:"list", data:[{object:"fine_tuning.job.event", id, created_at, level, message, type, data}], has_more}`.', [...OWN, 'validation_failed', ...UPSTREAM], { parameters: [...JOB_ID, ...PAGE] }),
  op('get', '/api/v1/fine_tuning/jobs/:id/checkpoints', 'listFineTuningCheckpoints', 'Fine-tuning job checkpoints', "The job's checkpoints, newest first.", '`{object:"list", data:[{object:"fine_tuning.job.checkpoint", id, created_at, fine_tuned_model_checkpoint, fine_tuning_job_id, step_number, metrics}], has_more}`.', [...OWN, 'validation_failed', ...UPSTREAM], { parameters: [...JOB_ID, ...PAGE] }),
];
