/**
 * POST /api/v1/images/generations (scope images) and POST /api/v1/videos/generations
 * (scope video): validation and model → the plan and its quote (n outputs, all or none)
 * → the paid-run core's atomic hold → a media job at the host.
 * Images wait up to MEDIA_SYNC_WAIT_MS for the files (200), else answer 202 and the job
 * goes on; videos always answer 202 once the host has taken the run.
 * Rate-limit headers (spec "Where the headers are sent"): images on the 200 and on the
 * generation step's errors, not on 202 nor on validation or model errors; videos on every
 * answer after the key check (the gate sets them).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RefusalCodes } from '../billing/hold-refusal.ts';
import { payingKeyOf, type PaidRuns } from '../billing/paid-run.ts';
import type { Catalog } from '../catalog/catalog.ts';
import { apiKeyVariable } from '../config.ts';
import { rateLimitHeaders } from '../gate/access-gate.ts';
import type { GatePass } from '../gate/access-gate.ts';
import { GatewayError, invalidApiKey } from '../shared/errors.ts';
import type { MediaJobRunner, MediaOutcome, MediaPlan } from './job-runner.ts';
import { priceTerms, quoteOf } from './media-price.ts';
import { IMAGE_ROUTE, prepareMedia, VIDEO_ROUTE, type MediaKind, type MediaRoute } from './media-request.ts';

export interface MediaRouteDeps {
  catalog: Catalog;
  runs: PaidRuns;
  runner: MediaJobRunner;
  /** How long the image route waits for the files before answering 202. */
  syncWaitMs: number;
  /** The provider wait: a `Prefer: wait` longer than it is not asked for. */
  providerTimeoutMs: number;
  now?: () => number;
}

const REFUSAL: Record<MediaKind, RefusalCodes> = {
  image: { spendingLimit: 'monthly_limit_exceeded', holdMadeOf: "n images at the model's price", lowerBy: 'lower n' },
  video: { spendingLimit: 'monthly_limit_exceeded', holdMadeOf: "the video at the model's price", lowerBy: 'ask for a shorter video' },
};

const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];

interface Prepared {
  pass: GatePass;
  plan: MediaPlan;
  inputs: Record<string, unknown>[];
  quote: number;
  model: string;
}

/** Validation, model, plan and quote: nothing held yet, every refusal here is free. */
function prepare(request: FastifyRequest, route: MediaRoute, deps: MediaRouteDeps): Prepared {
  const pass = request.gate;
  if (pass === undefined) throw invalidApiKey();
  const media = prepareMedia(request.body, route, deps.catalog);
  const slug = media.model.entry.slug;
  if (deps.runner.endpoint(media.host) === undefined) throw operatorError(request.log, slug, `its host ${media.host} has no API key: the operator must set ${apiKeyVariable(media.host)}`);
  const parts = media.countIsInput ? 1 : media.count;
  const input = media.countIsInput ? { ...media.input, n: media.count } : media.input;
  const defaultDuration = media.model.entry.configuration.default_params.duration;
  const terms = priceTerms(media.pricing, {
    input,
    defaultSeconds: typeof defaultDuration === 'number' ? defaultDuration : undefined,
    characters: typeof input.prompt === 'string' ? [...input.prompt].length : 0,
    outputs: media.count,
    parts,
  });
  if (typeof terms === 'string') throw operatorError(request.log, slug, terms);
  const plan: MediaPlan = { kind: route.kind, host: media.host, model: media.model.entry.provider_model_id, terms };
  return { pass, plan, inputs: Array.from({ length: parts }, () => input), quote: quoteOf(terms), model: slug };
}

function operatorError(log: FastifyBaseLogger, slug: string, why: string): GatewayError {
  log.error({ model: slug, why }, 'media model cannot run (operator error)');
  return new GatewayError('model_unavailable', `The model '${slug}' cannot run now: ${why}. Choose another model until the gateway's operator fixes it.`, { param: 'model' });
}

async function admit(prepared: Prepared, kind: MediaKind, deps: MediaRouteDeps, jobId: string) {
  const key = prepared.pass.key.record;
  return deps.runs.admit({
    jobId,
    kind,
    model: prepared.model,
    key: payingKeyOf(key),
    quote: prepared.quote,
    clientAddress: prepared.pass.clientAddress(),
    refusal: REFUSAL[kind],
  });
}

function accepted(reply: FastifyReply, jobId: string) {
  return reply.code(202).header('location', `/api/v1/jobs/${jobId}`).header('x-job-id', jobId).send({ job_id: jobId, status: 'processing' });
}

/** The first of the job's end and the sync wait; undefined when the wait ran out first. */
async function within(finished: Promise<MediaOutcome>, ms: number): Promise<MediaOutcome | undefined> {
  const timer = new AbortController();
  try {
    return await Promise.race([finished, sleep(ms, undefined, { signal: timer.signal }).then(() => undefined)]);
  } finally {
    timer.abort();
  }
}

export function registerMediaRoutes(app: FastifyInstance, deps: MediaRouteDeps): void {
  const now = deps.now ?? Date.now;
  // `Prefer: wait` lets a fast image come back in the create call itself (1–60 s, and within the provider wait).
  const waitSeconds = Math.min(60, Math.max(1, Math.ceil(deps.syncWaitMs / 1000)));
  const preferWait = deps.syncWaitMs > 0 && waitSeconds * 1000 < deps.providerTimeoutMs ? waitSeconds : undefined;

  app.post('/api/v1/images/generations', { config: { access: { scope: 'images', auth: 'required', rateHeaders: 'route' } } }, async (request, reply) => {
    const prepared = prepare(request, IMAGE_ROUTE, deps);
    // From here on the answers belong to the generation step.
    reply.headers(rateLimitHeaders(prepared.pass.rate));
    const jobId = randomUUID();
    const run = await admit(prepared, 'image', deps, jobId);
    reply.header('x-job-id', jobId);
    const job = deps.runner.start({ run, plan: prepared.plan, inputs: prepared.inputs, ...(preferWait === undefined ? {} : { waitSeconds: preferWait }) });
    const outcome = await within(job.finished, deps.syncWaitMs);
    if (outcome === undefined || outcome.kind === 'left') {
      for (const name of RATE_HEADERS) reply.removeHeader(name);
      return accepted(reply, jobId);
    }
    if (outcome.kind === 'failed') throw outcome.error;
    return reply.code(200).send({ created: Math.floor(now() / 1000), data: outcome.urls.map((url) => ({ url })) });
  });

  app.post('/api/v1/videos/generations', { config: { access: { scope: 'video', auth: 'required', rateHeaders: 'always' } } }, async (request, reply) => {
    const prepared = prepare(request, VIDEO_ROUTE, deps);
    const jobId = randomUUID();
    const run = await admit(prepared, 'video', deps, jobId);
    reply.header('x-job-id', jobId);
    const job = deps.runner.start({ run, plan: prepared.plan, inputs: prepared.inputs });
    const failed = await job.created;
    if (failed !== undefined) throw failed;
    return accepted(reply, jobId);
  });
}
