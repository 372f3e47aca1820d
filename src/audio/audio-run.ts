/**
 * The paid run of speech and transcription, on the media hosts like images and videos:
 * the quote from the model's price → the paid-run core's atomic hold with every limit
 * (402 insufficient_credits, 402 monthly_limit_exceeded, 429 api_key_limit_exceeded,
 * 429 trial_limit) → one prediction through the media job runner, waited for (these routes
 * answer the result itself) → settled on what the host reports, or refunded. What the route
 * answers with is collected by the runner through the job kind's output check
 * (output-checks.ts), the same check a process that resumes the job after a crash runs.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RefusalCodes } from '../billing/hold-refusal.ts';
import { payingKeyOf, type PaidRuns } from '../billing/paid-run.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { MediaJobRunner, MediaOutcome, MediaPlan } from '../media/job-runner.ts';
import { priceTerms, quoteOf, type PricedInput, type PriceTerms } from '../media/media-price.ts';
import type { PreparedMedia } from '../media/media-request.ts';
import { apiKeyVariable } from '../config.ts';
import { GatewayError, invalidApiKey } from '../shared/errors.ts';

export interface AudioRouteDeps {
  catalog: Catalog;
  runs: PaidRuns;
  runner: MediaJobRunner;
}

export interface AudioRun {
  kind: 'speech' | 'transcription';
  media: PreparedMedia;
  input: Record<string, unknown>;
  terms: PriceTerms;
  output: MediaPlan['output'];
  refusal: RefusalCodes;
}

/** The model's host must have a key configured: otherwise 503 model_unavailable (an operator error), before any hold. */
export function checkHost(request: FastifyRequest, deps: AudioRouteDeps, media: PreparedMedia): void {
  if (deps.runner.endpoint(media.host) !== undefined) return;
  const slug = media.model.entry.slug;
  request.log.error({ model: slug, host: media.host }, 'audio model cannot run: no API key is configured for its host (operator error)');
  throw new GatewayError('model_unavailable', `The model '${slug}' cannot run now: its host ${media.host} has no API key: the operator must set ${apiKeyVariable(media.host)}.`, { param: 'model' });
}

/** The price terms of one prediction, or 503 model_unavailable when the model's price cannot apply (an operator error). */
export function termsOf(request: FastifyRequest, media: PreparedMedia, priced: Pick<PricedInput, 'input' | 'characters'>): PriceTerms {
  const terms = priceTerms(media.pricing, { ...priced, defaultSeconds: undefined, outputs: 1, parts: 1 });
  if (typeof terms !== 'string') return terms;
  const slug = media.model.entry.slug;
  request.log.error({ model: slug, why: terms }, 'audio model cannot run (operator error)');
  throw new GatewayError('model_unavailable', `The model '${slug}' cannot run now: ${terms}.`, { param: 'model' });
}

/** Holds, runs and waits; the outcome is settled or refunded by the runner. `X-Job-Id` is set once the hold is made. */
export async function runAudio(request: FastifyRequest, reply: FastifyReply, deps: AudioRouteDeps, job: AudioRun): Promise<MediaOutcome> {
  const pass = request.gate;
  if (pass === undefined) throw invalidApiKey();
  const key = pass.key.record;
  const jobId = randomUUID();
  const run = await deps.runs.admit({
    jobId,
    kind: job.kind,
    model: job.media.model.entry.slug,
    key: payingKeyOf(key),
    quote: quoteOf(job.terms),
    clientAddress: pass.clientAddress(),
    refusal: job.refusal,
  });
  reply.header('x-job-id', jobId);
  const plan: MediaPlan = { kind: job.kind, host: job.media.host, model: job.media.model.entry.provider_model_id, terms: job.terms, output: job.output };
  return deps.runner.start({ run, plan, inputs: [job.input] }).finished;
}

/** A run that did not deliver: its error, or (the process is stopping) 202 with the job to poll. */
export function undelivered(reply: FastifyReply, outcome: Exclude<MediaOutcome, { kind: 'delivered' }>): FastifyReply {
  if (outcome.kind === 'failed') throw outcome.error;
  const jobId = reply.getHeader('x-job-id');
  return reply.code(202).header('location', `/api/v1/jobs/${String(jobId)}`).send({ job_id: jobId, status: 'processing' });
}
