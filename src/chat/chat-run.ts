/**
 * The chat run inside the paid-run core: the upstream call, the answer (JSON or event
 * stream), and the usage it bills. The core owns the abort signal (timeout, key
 * revoked, client close) and the exactly-once settle or refund.
 * A non-stream run whose client left runs to the end and is billed; a stream the client
 * closes bills what was generated so far (refunded before the first chunk).
 */
import type { ServerResponse } from 'node:http';
import type { PaidRun } from '../billing/paid-run.ts';
import { refundFailedRun, settleTokens, usageOrEstimate, usageSoFar, type RunReport } from '../billing/token-settlement.ts';
import { JsonAnswer } from '../http/json-answer.ts';
import { SseWriter } from '../http/sse-writer.ts';
import { StreamingFenceStripper, stripFences } from '../providers/structured-output.ts';
import { streamBroken } from '../providers/upstream-errors.ts';
import { asResponse, runFailure, type Answered, type ProviderRoute, type ReadAnswer } from '../providers/provider-call.ts';
import { readJsonBody, type UpstreamResponse } from '../providers/upstream-client.ts';
import type { Completion, FinishReason, Usage } from '../shared/chat-wire.ts';
import { GatewayError } from '../shared/errors.ts';
import type { AdmittedChat, ChatTarget } from './admission.ts';
import { ChunkWriter, completionView, type AnswerIdentity } from './completion-view.ts';
import { callDoorProvider, type DoorRunDeps } from './door-run.ts';

/** What a chat run needs: a door's run deps (door-run.ts). */
export type ChatRunDeps = DoorRunDeps;

export interface ChatRunContext {
  admitted: AdmittedChat;
  res: ServerResponse;
  /** Headers decided and checked before the hold (rate limit, job id, ignored params). */
  headers: Record<string, string>;
  /** The candidates and their provider requests, built before the hold. */
  route: ProviderRoute<ChatTarget>;
}

function identity(admitted: AdmittedChat, now: number): AnswerIdentity {
  return { id: `chatcmpl-${admitted.jobId}`, created: Math.floor(now / 1000), model: admitted.request.model, fingerprint: `svc-${admitted.model.entry.slug}` };
}

/** Chat's error object, with `param` (null when the error names none). */
export function chatErrorBody(error: GatewayError) {
  const body = error.body();
  body.error.param = error.param ?? null;
  return body;
}

/** The provider's answer, read by `read`; from here on the run is the answering model's (its prices, its name). */
async function callChatProvider<R>(run: PaidRun, ctx: ChatRunContext, deps: ChatRunDeps, read: ReadAnswer<ChatTarget, R>): Promise<Answered<ChatTarget, R>> {
  const answered = await callDoorProvider(run, ctx.route, ctx.res, deps, read);
  ctx.admitted = answered.target.admitted;
  return answered;
}

/**
 * Code fences around a JSON answer are removed where the format travelled as an
 * instruction: json_schema on models without native schemas, and json_object (an
 * instruction on providers without a JSON-object mode; harmless elsewhere, as only a
 * whole fenced answer is stripped).
 */
export function stripsFences(admitted: AdmittedChat): boolean {
  const format = admitted.request.response_format;
  if (format === undefined || format.type === 'text') return false;
  return format.type === 'json_object' || admitted.plan.call.routing.json_schema === 'instruction';
}

/** Where the run reports (metrics, the request's log line) and what it bills at. */
function reportOf(ctx: ChatRunContext, deps: ChatRunDeps): RunReport {
  return { metrics: deps.metrics, res: ctx.res };
}

function labelsOf(admitted: AdmittedChat) {
  return { provider: admitted.plan.provider, model: admitted.model.entry.slug };
}


function settleChat(run: PaidRun, ctx: ChatRunContext, deps: ChatRunDeps, usage: Usage, status: 'succeeded' | 'canceled', upstreamMs: number): Promise<number> {
  return settleTokens(run, reportOf(ctx, deps), labelsOf(ctx.admitted), ctx.admitted.prices, usage, status, upstreamMs);
}

function refundChat(run: PaidRun, ctx: ChatRunContext, deps: ChatRunDeps, error: GatewayError): Promise<void> {
  return refundFailedRun(run, reportOf(ctx, deps), ctx.admitted.plan.provider, error);
}

function usageOf(usage: Usage | undefined, admitted: AdmittedChat, outputChars: number): Usage {
  return usageOrEstimate(usage, admitted.inputTokens, outputChars);
}

async function readCompletion(response: UpstreamResponse, target: ChatTarget): Promise<Completion> {
  return target.adapter.parseResponse(await readJsonBody(response));
}

export async function runNonStream(run: PaidRun, ctx: ChatRunContext, deps: ChatRunDeps): Promise<void> {
  const answer = new JsonAnswer(ctx.res, ctx.headers, deps.timeouts.nonstreamKeepaliveMs);
  const upstreamStart = performance.now();
  try {
    const completion = (await callChatProvider(run, ctx, deps, readCompletion)).value;
    const who = identity(ctx.admitted, deps.now());
    const upstreamMs = performance.now() - upstreamStart;
    run.throwIfStopped();
    if (stripsFences(ctx.admitted) && completion.content !== null) completion.content = stripFences(completion.content);
    const outputChars = (completion.content ?? '').length + (completion.reasoning ?? '').length + completion.toolCalls.reduce((n, c) => n + c.name.length + c.arguments.length, 0);
    const usage = usageOf(completion.usage, ctx.admitted, outputChars);
    await settleChat(run, ctx, deps, usage, 'succeeded', upstreamMs);
    answer.send(200, completionView(who, completion, usage));
  } catch (thrown) {
    const error = runFailure(run, thrown);
    await refundChat(run, ctx, deps, error);
    answer.send(error.status, chatErrorBody(error));
  }
}

export async function runStream(run: PaidRun, ctx: ChatRunContext, deps: ChatRunDeps): Promise<void> {
  let admitted = ctx.admitted;
  const sse = new SseWriter(ctx.res, ctx.headers, deps.timeouts.streamKeepaliveMs);
  const offClose = sse.onClientClose(() => run.stop('client_closed'));
  let outputChars = 0;
  let usage: Usage | undefined;
  /** The output characters sent when the provider's last counts came. */
  let charsCounted = 0;
  let finish: FinishReason | undefined;
  const upstreamStart = performance.now();
  let firstToken = true;
  try {
    const { value: response, target } = await callChatProvider(run, ctx, deps, asResponse);
    admitted = ctx.admitted;
    const chunks = new ChunkWriter(identity(admitted, deps.now()), admitted.request.includeUsage);
    const labels = { provider: admitted.plan.provider, model: admitted.model.entry.slug };
    sse.open();
    deps.metrics.streamOpened();
    sse.write(chunks.first());
    sse.flush();
    const decoder = target.adapter.streamDecoder();
    const text = new TextDecoder();
    const fences = stripsFences(admitted) ? new StreamingFenceStripper() : undefined;
    const content = (piece: string) => {
      if (piece === '') return;
      if (firstToken) {
        firstToken = false;
        deps.metrics.firstToken(labels, performance.now() - deps.arrivedAt);
      }
      sse.write(chunks.delta({ content: piece }));
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
            sse.write(chunks.delta({ reasoning_content: event.text }));
            break;
          case 'refusal':
            outputChars += event.text.length;
            sse.write(chunks.delta({ refusal: event.text }));
            break;
          case 'tool_call':
            outputChars += event.name.length;
            sse.write(chunks.delta({ tool_calls: [{ index: event.index, id: event.id, type: 'function', function: { name: event.name, arguments: '' } }] }));
            break;
          case 'tool_arguments':
            outputChars += event.fragment.length;
            sse.write(chunks.delta({ tool_calls: [{ index: event.index, function: { arguments: event.fragment } }] }));
            break;
          case 'finish':
            if (fences !== undefined) content(fences.end());
            if (finish === undefined) {
              finish = event.reason;
              sse.write(chunks.finish(event.reason));
            }
            break;
          case 'usage':
            usage = event.usage;
            charsCounted = outputChars;
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
        sse.flush();
      }
    }
    const ending = decoder.end();
    handle(ending.events);
    run.throwIfStopped();
    if (!ending.complete || finish === undefined) throw streamBroken();
    const billed = usageSoFar(usage, admitted.inputTokens, outputChars, charsCounted);
    await settleChat(run, ctx, deps, billed, 'succeeded', performance.now() - upstreamStart);
    if (admitted.request.includeUsage) sse.write(chunks.usage(billed));
    sse.end('data: [DONE]\n\n');
  } catch (thrown) {
    if (run.stopReason === 'client_closed') {
      // Tokens generated so far are billed and the rest released; before the first chunk, all of it is refunded (499).
      if (sse.started) await settleChat(run, ctx, deps, usageSoFar(usage, admitted.inputTokens, outputChars, charsCounted), 'canceled', performance.now() - upstreamStart);
      else await run.refund('client_closed_request', 'canceled');
      sse.stop();
      return;
    }
    const error = runFailure(run, thrown);
    await refundChat(run, ctx, deps, error);
    sse.fail(error.status, chatErrorBody(error));
  } finally {
    if (sse.started) deps.metrics.streamClosed();
    sse.stop();
    offClose();
  }
}
