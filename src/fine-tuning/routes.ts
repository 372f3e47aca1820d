/**
 * The fine-tuning routes (scope fine_tuning, rate-limit headers on every answer after the
 * key check), on provider_1's files and fine-tuning jobs protocol:
 *   POST /fine_tuning/jobs                 validation → model → key without credit limits
 *                                          (403 api_key_limit_unsupported) → files read and
 *                                          counted → the hold (never counting toward key
 *                                          limits) → files uploaded, job created → 200 job
 *   GET  /fine_tuning/jobs                 the account's jobs, newest first (after, limit)
 *   GET  /fine_tuning/jobs/{id}            one job (another account's → 403 forbidden, unknown → 404)
 *   POST /fine_tuning/jobs/{id}/cancel     cancels at the provider; what was trained is billed
 *   GET  /fine_tuning/jobs/{id}/events     the provider's events
 *   GET  /fine_tuning/jobs/{id}/checkpoints
 * Ids are the gateway's job UUIDs; the job is also GET /jobs/{id} with kind fine_tuning.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { HOLD_LIMITS, limitSettings, settingOf, type HoldLimit } from '../store/limits.ts';
import type { RefusalCodes } from '../billing/hold-refusal.ts';
import { payingKeyOf, type PaidRuns } from '../billing/paid-run.ts';
import { ceilDiv, SCALE } from '../catalog/decimal.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { KeyPass } from '../gate/access-gate.ts';
import { parseStrictBody } from '../http/strict-body.ts';
import { FineTuningProviderError, type PageQuery } from '../providers/fine-tuning.ts';
import { apiKeyVariable } from '../config.ts';
import { GatewayError, invalidApiKey } from '../shared/errors.ts';
import type { FineTuningJob, FineTuningJobStore } from '../store/fine-tuning-jobs.ts';
import { parseCreateJob, providerHyperparameters, resolveFineTunable } from './request.ts';
import type { FineTuningPlan, FineTuningRunner } from './runner.ts';
import type { FileReader, TrainingFile } from './training-file.ts';
import { fineTuningJobView } from './view.ts';

export interface FineTuningRouteDeps {
  catalog: Catalog;
  runs: PaidRuns;
  runner: FineTuningRunner;
  jobs: FineTuningJobStore;
  files: FileReader;
  /** The limit table whose key limits bar a key from fine-tuning (default the shipped one: src/store/limits.ts). */
  limits?: readonly HoldLimit[];
}

const REFUSAL: RefusalCodes = { spendingLimit: 'monthly_limit_exceeded', holdMadeOf: "the file's training tokens × epochs at the model's training price", lowerBy: 'train fewer epochs or on a smaller file' };
const ACCESS = { access: { scope: 'fine_tuning', auth: 'required', rateHeaders: 'always' } } as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** How long a cancel waits for this process to settle the job before answering. */
const CANCEL_SETTLE_WAIT_MS = 5_000;

const listQuery = z.object({
  after: z.string().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(100).optional(),
});

function keyPassOf(request: FastifyRequest): KeyPass {
  const pass = request.keyPass ?? request.gate;
  if (pass === undefined) throw invalidApiKey();
  return pass;
}

/** What the job names as a file: the https URL, or a short note of a data: URL (never the bytes). */
function fileLabel(value: string, file: TrainingFile): string {
  return value.startsWith('data:') ? `data: (${file.bytes.length} bytes, ${file.examples} examples)` : value;
}

export function registerFineTuningRoutes(app: FastifyInstance, deps: FineTuningRouteDeps): void {
  /** The caller's own job: unknown → 404 job_not_found, another account's → 403 forbidden. */
  const ownJob = async (request: FastifyRequest): Promise<FineTuningJob> => {
    const { id } = request.params as { id: string };
    const job = UUID.test(id) ? await deps.jobs.get(id.toLowerCase()) : undefined;
    if (job === undefined) throw new GatewayError('job_not_found', `No fine-tuning job has the id '${id}'.`);
    if (job.money.accountId !== keyPassOf(request).key.record.accountId) throw new GatewayError('forbidden', 'This job belongs to another account.');
    return job;
  };

  app.post('/api/v1/fine_tuning/jobs', { config: ACCESS }, async (request) => {
    const pass = keyPassOf(request);
    const body = parseCreateJob(request.body);
    const { model, price } = resolveFineTunable(body.model, deps.catalog);
    const slug = model.entry.slug;
    const provider = deps.runner.provider(model.entry.provider);
    if (provider === undefined) {
      request.log.error({ model: slug, provider: model.entry.provider }, 'fine-tunable model cannot run: its provider does not fine-tune here or has no API key (operator error)');
      throw new GatewayError('model_unavailable', `The model '${slug}' cannot run now: its provider ${model.entry.provider} does not fine-tune here or has no API key (the operator must set ${apiKeyVariable(model.entry.provider)}).`, { param: 'model' });
    }
    const key = pass.key.record;
    if (limitSettings(deps.limits ?? HOLD_LIMITS, 'key').some((s) => (settingOf(key, s) ?? null) !== null)) {
      throw new GatewayError('api_key_limit_unsupported', 'This API key has a daily or monthly credit limit, so it cannot create fine-tuning jobs (they do not count toward key limits). Use a key without credit limits. Nothing was charged.');
    }
    const training = await deps.files.read('training_file', body.training_file);
    const validation = body.validation_file == null ? undefined : await deps.files.read('validation_file', body.validation_file);
    const { epochs, sent } = providerHyperparameters(body.hyperparameters);
    const quote = Number(ceilDiv(BigInt(training.tokens) * BigInt(epochs) * price, SCALE));
    const plan: FineTuningPlan = {
      provider: model.entry.provider,
      model: model.entry.provider_model_id,
      pricePerToken: price.toString(),
      epochs,
      fileTokens: training.tokens,
      trainingFile: fileLabel(body.training_file, training),
      validationFile: body.validation_file == null || validation === undefined ? null : fileLabel(body.validation_file, validation),
      hyperparameters: sent,
      suffix: body.suffix ?? null,
      seed: body.seed ?? null,
    };
    const jobId = randomUUID();
    const run = await deps.runs.admit({
      jobId,
      kind: 'fine_tuning',
      model: slug,
      key: payingKeyOf(key),
      quote,
      clientAddress: pass.clientAddress(),
      countsTowardKeyLimits: false,
      refusal: REFUSAL,
    });
    await deps.runner.start(run, plan, { training, validation });
    const job = await deps.jobs.get(jobId);
    if (job === undefined) throw new GatewayError('internal_error', 'The job was created but cannot be read back.');
    return fineTuningJobView(job);
  });

  app.get('/api/v1/fine_tuning/jobs', { config: ACCESS }, async (request) => {
    const pass = keyPassOf(request);
    const query = parseStrictBody(listQuery, request.query);
    const after = query.after?.toLowerCase();
    // A cursor that is not a job of the account is refused: ignoring it would answer the first page again, for ever.
    if (after !== undefined) {
      const cursor = UUID.test(after) ? await deps.jobs.get(after) : undefined;
      if (cursor === undefined || cursor.money.accountId !== pass.key.record.accountId) {
        const why = 'not a fine-tuning job of this account';
        throw new GatewayError('validation_failed', `after: ${why}.`, { param: 'after', details: { formErrors: [], fieldErrors: { after: [why] } } });
      }
    }
    const page = await deps.jobs.list(pass.key.record.accountId, { limit: query.limit ?? 20, ...(after === undefined ? {} : { after }) });
    return { object: 'list', data: page.jobs.map(fineTuningJobView), has_more: page.hasMore };
  });

  app.get('/api/v1/fine_tuning/jobs/:id', { config: ACCESS }, async (request) => fineTuningJobView(await ownJob(request)));

  app.post('/api/v1/fine_tuning/jobs/:id/cancel', { config: ACCESS }, async (request) => {
    const job = await ownJob(request);
    const plan = job.record.plan as FineTuningPlan;
    const providerJobId = job.record.providerJobId;
    if (job.money.status !== 'processing' || providerJobId === null) {
      throw new GatewayError('invalid_request', `The job cannot be cancelled: it is ${fineTuningJobView(job).status as string}.`);
    }
    const provider = deps.runner.provider(plan.provider);
    if (provider === undefined) throw new GatewayError('model_unavailable', `The job cannot be cancelled now: its provider has no API key (the operator must set ${apiKeyVariable(plan.provider)}).`);
    let cancelled: unknown;
    try {
      cancelled = await provider.client.cancelJob(provider.endpoint, providerJobId);
    } catch (error) {
      // The provider refuses: most likely the job ended there since we last polled. Poll now; a job that has ended is
      // answered as every ended job is (400 invalid_request), anything else as the provider's failure.
      if (!(error instanceof FineTuningProviderError) || error.providerStatus < 400 || error.providerStatus >= 500) throw error;
      await deps.runner.wake(job.record.jobId, CANCEL_SETTLE_WAIT_MS);
      const now = await deps.jobs.get(job.record.jobId);
      if (now !== undefined && now.money.status !== 'processing') {
        throw new GatewayError('invalid_request', `The job cannot be cancelled: it is ${fineTuningJobView(now).status as string}.`);
      }
      throw error;
    }
    await deps.jobs.saveSnapshot(job.record.jobId, cancelled, Date.now());
    await deps.runner.wake(job.record.jobId, CANCEL_SETTLE_WAIT_MS);
    return fineTuningJobView((await deps.jobs.get(job.record.jobId)) ?? job);
  });

  const providerList = (list: 'listEvents' | 'listCheckpoints', defaultLimit: number) => async (request: FastifyRequest) => {
    const job = await ownJob(request);
    const query = parseStrictBody(listQuery, request.query);
    const providerJobId = job.record.providerJobId;
    if (providerJobId === null) return { object: 'list', data: [], has_more: false };
    const provider = deps.runner.provider((job.record.plan as FineTuningPlan).provider);
    const planned = (job.record.plan as FineTuningPlan).provider;
    if (provider === undefined) throw new GatewayError('model_unavailable', `The job cannot be read now: its provider has no API key (the operator must set ${apiKeyVariable(planned)}).`);
    const pageQuery: PageQuery = { limit: query.limit ?? defaultLimit, ...(query.after === undefined ? {} : { after: query.after }) };
    const page = await provider.client[list](provider.endpoint, providerJobId, pageQuery);
    const data = page.data.map((item) => ('fine_tuning_job_id' in item ? { ...item, fine_tuning_job_id: job.record.jobId } : item));
    return { object: 'list', data, has_more: page.hasMore };
  };
  app.get('/api/v1/fine_tuning/jobs/:id/events', { config: ACCESS }, providerList('listEvents', 20));
  app.get('/api/v1/fine_tuning/jobs/:id/checkpoints', { config: ACCESS }, providerList('listCheckpoints', 10));
}
