/**
 * What every door onto a chat run (chat completions, Messages, Responses) does once its request is
 * quoted, written once: the answer's headers decided and checked, the paid-run core's hold, the
 * request's log fields, the run under the core (settle or refund exactly once), and a last-resort
 * answer if the run ended without one. And, inside the run, the provider call through the one glue,
 * noting the model that answered when a fallback did.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { payingKeyOf, type PaidRun, type PaidRuns } from '../billing/paid-run.ts';
import type { RefusalCodes } from '../billing/hold-refusal.ts';
import type { Config } from '../config.ts';
import { answerHeaders } from '../http/answer-headers.ts';
import { ignoredParamsHeader } from '../http/ignored-params-header.ts';
import { endUnfinishedAnswer } from '../http/last-resort.ts';
import { callProvider, type Answered, type CallTarget, type ProviderRoute, type ReadAnswer } from '../providers/provider-call.ts';
import type { UpstreamClient } from '../providers/upstream-client.ts';
import type { Routing } from '../routing/routing.ts';
import { invalidApiKey, type GatewayError } from '../shared/errors.ts';
import { NO_RUN_METRICS, noteOutcome, type RunMetrics } from '../shared/run-metrics.ts';
import type { JobKind } from '../store/money-contract.ts';

/** What a run inside a door needs. */
export interface DoorRunDeps {
  upstream: UpstreamClient;
  routing: Routing;
  timeouts: { nonstreamKeepaliveMs: number; streamKeepaliveMs: number };
  logger: FastifyBaseLogger;
  now: () => number;
  metrics: RunMetrics;
  /** When the request arrived (performance.now()), for time to first token. */
  arrivedAt: number;
}

/** What a door's route was given. */
export interface DoorRouteDeps {
  config: Config;
  upstream: UpstreamClient;
  routing: Routing;
  runs: PaidRuns;
  metrics?: RunMetrics;
}

/** The quoted request, as the hold and the request's log line take it. */
export interface DoorQuote {
  jobId: string;
  kind: JobKind;
  /** The catalog slug of the first candidate. */
  model: string;
  held: number;
  ignored: string[];
  refusal: RefusalCodes;
}

/** How the door answers an error no run answered: chat's error object with `param`, or the door's envelope. */
export interface DoorEnding {
  withParam: boolean;
  envelope?: (error: GatewayError) => unknown;
}

/** Where a door's run writes its answer. */
export interface DoorAnswer {
  res: ServerResponse;
  /** Headers decided and checked before the hold (rate limit, job id, ignored params). */
  headers: Record<string, string>;
}

/** Holds, runs and closes a quoted door request; `run` answers the client inside the paid-run core. */
export async function runThroughDoor(
  request: FastifyRequest, reply: FastifyReply, deps: DoorRouteDeps, now: () => number,
  quote: DoorQuote, ending: DoorEnding, run: (paid: PaidRun, answer: DoorAnswer, runDeps: DoorRunDeps) => Promise<void>,
): Promise<void> {
  const pass = request.gate;
  if (pass === undefined) throw invalidApiKey();
  const { jobId, model } = quote;
  const headers = answerHeaders(
    reply.getHeaders(),
    { 'x-service-job-id': jobId, 'x-service-ignored-params': ignoredParamsHeader(quote.ignored) },
    (header, err) => request.log.error({ err, header }, 'answer header dropped'),
  );
  const key = pass.key.record;
  const paid = await deps.runs.admit({
    jobId, kind: quote.kind, model, key: payingKeyOf(key), quote: quote.held, clientAddress: pass.clientAddress(), refusal: quote.refusal,
  });
  noteOutcome(reply.raw, { jobId, keyId: key.id, model });
  reply.hijack();
  const runDeps: DoorRunDeps = {
    upstream: deps.upstream,
    routing: deps.routing,
    timeouts: { nonstreamKeepaliveMs: deps.config.nonstreamKeepaliveMs, streamKeepaliveMs: deps.config.streamKeepaliveMs },
    logger: request.log,
    now,
    metrics: deps.metrics ?? NO_RUN_METRICS,
    arrivedAt: performance.now() - reply.elapsedTime,
  };
  const answer = { res: reply.raw, headers };
  try {
    await deps.runs.execute(paid, (p) => run(p, answer, runDeps));
  } catch (err) {
    request.log.error({ err, jobId }, `${quote.kind} run failed outside its error handling`);
  } finally {
    endUnfinishedAnswer(reply.raw, headers, ending.withParam, ending.envelope);
  }
}

/** The provider's answer through the one glue; from a fallback on, the request's log line names the model that answered. */
export async function callDoorProvider<T extends CallTarget, R>(
  run: PaidRun, route: ProviderRoute<T>, res: ServerResponse, deps: DoorRunDeps, read: ReadAnswer<T, R>,
): Promise<Answered<T, R>> {
  const answered = await callProvider(run, route, { upstream: deps.upstream, logger: deps.logger, routing: deps.routing, response: res }, read);
  if (answered.model !== route.candidates[0]?.model) noteOutcome(res, { model: answered.model });
  return answered;
}
