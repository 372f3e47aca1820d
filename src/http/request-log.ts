/**
 * One onResponse hook per request: the structured log line (docs/operations.md lists its
 * fields) and the HTTP metrics. Both read what the route noted (shared/run-metrics.ts
 * `noteOutcome`); neither ever sees a header, so no secret can reach them. So the line is
 * built here in one JSON.stringify, as pino would write it at level info (its base fields,
 * the request id the request's child logger would add), without pino's per-field and
 * redaction passes, and handed to the log destination every other line goes to.
 */
import { hostname } from 'node:os';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { levels, type DestinationStream } from 'pino';
import { outcomeOf } from '../shared/run-metrics.ts';
import type { GatewayMetrics } from './metrics.ts';

const MAX_MODEL_CHARS = 128;

const INFO = 30;

/** Where request lines go, when the log level lets info lines through. */
export interface RequestLines {
  destination: DestinationStream;
  /** pino's level name (LOG_LEVEL). */
  level: string;
}

export function observeRequests(app: FastifyInstance, metrics: GatewayMetrics | undefined, lines: RequestLines): void {
  const enabled = (levels.values[lines.level] ?? Infinity) <= INFO;
  const pid = process.pid;
  const host = hostname();
  app.addHook('onResponse', (request, reply, done) => {
    const ms = reply.elapsedTime;
    const outcome = outcomeOf(reply.raw);
    const pattern = request.routeOptions.url;
    const route = pattern === undefined ? 'unmatched' : `${request.method} ${pattern}`;
    const status = reply.statusCode;
    const jobId = outcome?.jobId ?? header(reply, 'x-service-job-id') ?? header(reply, 'x-job-id');
    // The gateway's own time: all of it for requests without a provider call; for runs, once the run reported its provider time.
    const addedMs = outcome?.upstreamMs !== undefined ? ms - outcome.upstreamMs : jobId === undefined ? ms : undefined;
    const code = outcome?.code;
    metrics?.observeRequest({ route, status, code, seconds: ms / 1000, addedSeconds: addedMs === undefined ? undefined : addedMs / 1000 });
    if (enabled) {
      lines.destination.write(`${JSON.stringify({
        level: INFO,
        time: Date.now(),
        pid,
        hostname: host,
        reqId: request.id,
        route,
        status,
        code,
        cause: outcome?.cause,
        job_id: jobId,
        key_id: request.gate?.key.record.id ?? outcome?.keyId,
        model: outcome?.model ?? modelOf(request.body),
        input_tokens: outcome?.inputTokens,
        output_tokens: outcome?.outputTokens,
        cache_read_tokens: outcome?.cacheReadTokens,
        cache_write_tokens: outcome?.cacheWrite5mTokens,
        cache_write_1h_tokens: outcome?.cacheWrite1hTokens,
        reasoning_tokens: outcome?.reasoningTokens,
        credits: outcome?.microCredits === undefined ? undefined : outcome.microCredits / 1_000_000,
        attempts: outcome?.attempts,
        duration_ms: round(ms),
        added_ms: addedMs === undefined ? undefined : round(addedMs),
        msg: 'request',
      })}\n`);
    }
    done();
  });
}

function header(reply: FastifyReply, name: string): string | undefined {
  const value = reply.getHeader(name);
  return typeof value === 'string' ? value : undefined;
}

/** The model the client asked for, until the route notes the catalog slug. */
function modelOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const model = (body as { model?: unknown }).model;
  return typeof model === 'string' ? model.slice(0, MAX_MODEL_CHARS) : undefined;
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
