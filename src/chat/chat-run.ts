/**
 * The provider run with money: the upstream call, the answer (JSON or event stream),
 * then exactly one of settle (usage billed, rest refunded) or refund (in full).
 * Stops early on timeout, on the key being revoked, or (streams only) on the client
 * closing; a non-stream run whose client left runs to the end and is billed.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import { charsToTokens, costOf } from '../billing/chat-cost.ts';
import type { ProviderEndpoint } from '../config.ts';
import { GatewayError, internalError, invalidApiKey } from '../http/errors.ts';
import type { Completion, FinishReason, ProviderAdapter, UpstreamRequest, Usage } from '../providers/adapter.ts';
import { StreamingFenceStripper, stripFences } from '../providers/structured-output.ts';
import { connectionFailed, streamBroken } from '../providers/upstream-errors.ts';
import type { UpstreamClient } from '../providers/upstream-client.ts';
import type { Store } from '../store/types.ts';
import type { AdmittedChat } from './admission.ts';
import { ChunkWriter, completionView, type AnswerIdentity } from './completion-view.ts';
import type { InFlightRuns, StopReason } from './in-flight.ts';

export interface RunDeps {
  store: Store;
  upstream: UpstreamClient;
  adapter: ProviderAdapter;
  endpoint: ProviderEndpoint;
  inFlight: InFlightRuns;
  timeouts: { providerMs: number; nonstreamKeepaliveMs: number; streamKeepaliveMs: number };
  logger: FastifyBaseLogger;
  now: () => number;
}

export interface RunContext {
  admitted: AdmittedChat;
  keyId: string;
  keyExpiresAt: number | null;
  res: ServerResponse;
  /** Headers already decided and checked (rate limit, job id, ignored params). */
  headers: Record<string, string>;
  /** The provider request, built before the hold. */
  upstreamRequest: UpstreamRequest;
}

const STOP_ERRORS: Record<StopReason, () => GatewayError> = {
  timeout: () => new GatewayError('provider_timeout', 'The model provider gave no answer in time. Nothing was charged; retry.'),
  revoked: invalidApiKey,
  client_closed: () => new GatewayError('client_closed_request', 'The client closed the request.'),
};

/** Shared state of one run: its abort signal, why it stopped, and the money outcome (settled once). */
class Run {
  readonly controller = new AbortController();
  stopReason: StopReason | undefined;
  private closed = false;
  private readonly unregister: () => void;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly ctx: RunContext, private readonly deps: RunDeps) {
    this.unregister = deps.inFlight.register(ctx.keyId, ctx.keyExpiresAt, (reason) => this.stop(reason));
    this.armTimeout();
  }

  /** (Re)starts the provider wait; re-arming refreshes the one timer instead of making a new one per chunk. */
  armTimeout(): void {
    if (this.timer === undefined) this.timer = setTimeout(() => this.stop('timeout'), this.deps.timeouts.providerMs);
    else this.timer.refresh();
  }

  stop(reason: StopReason): void {
    if (this.stopReason !== undefined || this.closed) return;
    this.stopReason = reason;
    this.controller.abort();
  }

  /** The error to answer with: the stop reason's, else the thrown one, else a connection failure. */
  errorFor(thrown: unknown): GatewayError {
    if (this.stopReason !== undefined) return STOP_ERRORS[this.stopReason]();
    if (thrown instanceof GatewayError) return thrown;
    if (thrown instanceof SyntaxError) return new GatewayError('upstream_error', 'The model provider sent an unreadable answer.');
    if (thrown instanceof Error && /ECONN|socket|UND_ERR|ENOTFOUND|EPIPE|other side closed/i.test(`${thrown.name} ${thrown.message} ${(thrown as { code?: string }).code ?? ''}`)) {
      return connectionFailed();
    }
    this.deps.logger.error({ err: thrown }, 'chat run failed');
    return internalError();
  }

  async settle(usage: Usage, status: 'succeeded' | 'client_closed'): Promise<void> {
    this.finish();
    const cost = costOf(this.ctx.admitted.prices, usage);
    await this.deps.store.settle(this.ctx.admitted.jobId, { cost, promptTokens: usage.promptTokens, completionTokens: usage.completionTokens, status, at: this.deps.now() });
  }

  async refund(code: string): Promise<void> {
    this.finish();
    await this.deps.store.refund(this.ctx.admitted.jobId, code, this.deps.now());
  }

  private finish(): void {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.unregister();
  }
}

function identity(admitted: AdmittedChat, now: number): AnswerIdentity {
  return { id: `chatcmpl-${admitted.jobId}`, created: Math.floor(now / 1000), model: admitted.request.model, fingerprint: `svc-${admitted.model.entry.slug}` };
}

async function callProvider(run: Run, ctx: RunContext, deps: RunDeps) {
  const upstreamRequest = ctx.upstreamRequest;
  const response = await deps.upstream.post(deps.endpoint.baseUrl, upstreamRequest.path, upstreamRequest.headers, upstreamRequest.body, run.controller.signal);
  if (response.status >= 200 && response.status < 300) return response;
  const text = await response.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const error = deps.adapter.mapError(response.status, json, text);
  if (error.code === 'model_unavailable') deps.logger.error({ status: response.status, provider: ctx.admitted.plan.provider }, 'provider refused the gateway (operator error)');
  throw error;
}

/**
 * Code fences around a JSON answer are removed where the format travelled as an
 * instruction: json_schema on models without native schemas, and json_object (an
 * instruction on providers without a JSON-object mode; harmless elsewhere, as only a
 * whole fenced answer is stripped).
 */
function stripsFences(admitted: AdmittedChat): boolean {
  const format = admitted.request.response_format;
  if (format === undefined || format.type === 'text') return false;
  return format.type === 'json_object' || admitted.plan.call.routing.json_schema === 'instruction';
}

/** Usage from the provider, or about 4 characters per token where it reports none. */
function usageOrEstimate(usage: Usage | undefined, admitted: AdmittedChat, outputChars: number): Usage {
  return usage ?? { promptTokens: admitted.inputTokens, completionTokens: charsToTokens(outputChars) };
}

export async function runNonStream(ctx: RunContext, deps: RunDeps): Promise<void> {
  const run = new Run(ctx, deps);
  const res = ctx.res;
  const who = identity(ctx.admitted, deps.now());
  // Slow answers: send the 200 and whitespace so the connection stays open.
  let keepalive: NodeJS.Timeout | undefined;
  const startKeepalive = () => {
    if (!res.headersSent && !res.destroyed) res.writeHead(200, { ...ctx.headers, 'content-type': 'application/json; charset=utf-8' });
    if (!res.destroyed) res.write(' ');
    keepalive = setTimeout(startKeepalive, deps.timeouts.nonstreamKeepaliveMs);
  };
  keepalive = setTimeout(startKeepalive, deps.timeouts.nonstreamKeepaliveMs);
  const answer = (status: number, body: unknown) => {
    clearTimeout(keepalive);
    if (res.destroyed) return;
    if (!res.headersSent) res.writeHead(status, { ...ctx.headers, 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(body));
  };
  try {
    const response = await callProvider(run, ctx, deps);
    const completion: Completion = deps.adapter.parseResponse(await response.body.json());
    if (run.stopReason !== undefined) throw new Error('stopped');
    if (stripsFences(ctx.admitted) && completion.content !== null) {
      completion.content = stripFences(completion.content);
    }
    const outputChars = (completion.content ?? '').length + (completion.reasoning ?? '').length + completion.toolCalls.reduce((n, c) => n + c.name.length + c.arguments.length, 0);
    const usage = usageOrEstimate(completion.usage, ctx.admitted, outputChars);
    await run.settle(usage, 'succeeded');
    answer(200, completionView(who, completion, usage));
  } catch (thrown) {
    const error = run.errorFor(thrown);
    await run.refund(error.code);
    const body = error.body();
    body.error.param = error.param ?? null;
    answer(error.status, body);
  }
}

export async function runStream(ctx: RunContext, deps: RunDeps): Promise<void> {
  const run = new Run(ctx, deps);
  const res = ctx.res;
  const admitted = ctx.admitted;
  const who = identity(admitted, deps.now());
  const chunks = new ChunkWriter(who, admitted.request.includeUsage);
  let started = false;
  let outputChars = 0;
  let usage: Usage | undefined;
  let finish: FinishReason | undefined;
  let lastWrite = Date.now();
  // Events decoded from one upstream read leave in one socket write.
  let out = '';
  const write = (text: string) => {
    out += text;
  };
  const flush = () => {
    if (out === '') return;
    lastWrite = Date.now();
    if (!res.destroyed) res.write(out);
    out = '';
  };
  const keepalive = setInterval(() => {
    if (started && Date.now() - lastWrite >= deps.timeouts.streamKeepaliveMs) {
      write(': keep-alive\n\n');
      flush();
    }
  }, Math.max(10, Math.floor(deps.timeouts.streamKeepaliveMs / 2)));
  const onClose = () => {
    if (!res.writableFinished) run.stop('client_closed');
  };
  res.on('close', onClose);

  try {
    const response = await callProvider(run, ctx, deps);
    res.writeHead(200, { ...ctx.headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    write(chunks.first());
    flush();
    started = true;
    const decoder = deps.adapter.streamDecoder();
    const text = new TextDecoder();
    const fences = stripsFences(admitted) ? new StreamingFenceStripper() : undefined;
    const content = (piece: string) => {
      if (piece !== '') write(chunks.delta({ content: piece }));
    };
    const handle = (events: ReturnType<typeof decoder.push>) => {
      for (const event of events) {
        switch (event.type) {
          case 'content':
            outputChars += event.text.length;
            content(fences === undefined ? event.text : fences.push(event.text));
            break;
          case 'reasoning':
            outputChars += event.text.length;
            write(chunks.delta({ reasoning_content: event.text }));
            break;
          case 'refusal':
            outputChars += event.text.length;
            write(chunks.delta({ refusal: event.text }));
            break;
          case 'tool_call':
            outputChars += event.name.length;
            write(chunks.delta({ tool_calls: [{ index: event.index, id: event.id, type: 'function', function: { name: event.name, arguments: '' } }] }));
            break;
          case 'tool_arguments':
            outputChars += event.fragment.length;
            write(chunks.delta({ tool_calls: [{ index: event.index, function: { arguments: event.fragment } }] }));
            break;
          case 'finish':
            if (fences !== undefined) content(fences.end());
            if (finish === undefined) {
              finish = event.reason;
              write(chunks.finish(event.reason));
            }
            break;
          case 'usage':
            usage = event.usage;
            break;
          case 'error':
            throw event.error;
        }
      }
    };
    for await (const piece of response.body) {
      run.armTimeout();
      try {
        handle(decoder.push(text.decode(piece as Buffer, { stream: true })));
      } finally {
        flush();
      }
    }
    const ending = decoder.end();
    handle(ending.events);
    if (run.stopReason !== undefined) throw new Error('stopped');
    if (!ending.complete || finish === undefined) throw streamBroken();
    const billed = usageOrEstimate(usage, admitted, outputChars);
    await run.settle(billed, 'succeeded');
    if (admitted.request.includeUsage) write(chunks.usage(billed));
    write('data: [DONE]\n\n');
    if (!res.destroyed) res.end(out);
    out = '';
  } catch (thrown) {
    if (run.stopReason === 'client_closed') {
      if (started) {
        // Tokens generated so far are billed; the rest of the hold is refunded.
        await run.settle(usageOrEstimate(usage, admitted, outputChars), 'client_closed');
      } else {
        await run.refund('client_closed_request');
      }
      return;
    }
    const error = run.errorFor(thrown);
    await run.refund(error.code);
    const body = error.body();
    body.error.param = error.param ?? null;
    if (!started) {
      if (!res.destroyed) {
        res.writeHead(error.status, { ...ctx.headers, 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify(body));
      }
      return;
    }
    // After the first byte: one error event, no [DONE].
    write(`data: ${JSON.stringify(body)}\n\n`);
    if (!res.destroyed) res.end(out);
    out = '';
  } finally {
    clearInterval(keepalive);
    res.off('close', onClose);
  }
}
