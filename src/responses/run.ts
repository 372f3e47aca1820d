/**
 * The Responses run inside the paid-run core, as the chat run: the provider call through the
 * one glue (retries, fallbacks, the run's abort signal), the answer (JSON, or the event stream
 * with its sequence numbers), the usage billed at the answering model's prices, a refund on
 * every failure, and what a client that closes a stream leaves billed (what was generated).
 * A completed or incomplete response is kept when the request asked to store it.
 */
import type { ServerResponse } from 'node:http';
import type { PaidRun } from '../billing/paid-run.ts';
import { refundFailedRun, settleTokens, usageSoFar } from '../billing/token-settlement.ts';
import { chatErrorBody, type ChatRunDeps } from '../chat/chat-run.ts';
import { callDoorProvider } from '../chat/door-run.ts';
import type { AdmittedChat } from '../chat/admission.ts';
import { JsonAnswer } from '../http/json-answer.ts';
import { SseWriter } from '../http/sse-writer.ts';
import { asResponse, runFailure, type Answered, type ProviderRoute, type ReadAnswer } from '../providers/provider-call.ts';
import { readJsonBody } from '../providers/upstream-client.ts';
import type { Usage } from '../shared/chat-wire.ts';
import type { GatewayError } from '../shared/errors.ts';
import type { ResponsesAnswer } from '../shared/responses-wire.ts';
import type { ResponsesTarget } from './legs.ts';
import { responseView, type ResponseIdentity, type ResponseState } from './response-view.ts';
import { ResponseEvents } from './stream-events.ts';

export interface ResponsesRunContext {
  admitted: AdmittedChat;
  res: ServerResponse;
  headers: Record<string, string>;
  route: ProviderRoute<ResponsesTarget>;
  who: ResponseIdentity;
  /** Keeps a finished response (when the request stores it); never fails the answer. */
  keep: (state: ResponseState) => Promise<void>;
}

async function call<R>(run: PaidRun, ctx: ResponsesRunContext, deps: ChatRunDeps, read: ReadAnswer<ResponsesTarget, R>): Promise<Answered<ResponsesTarget, R>> {
  const answered = await callDoorProvider(run, ctx.route, ctx.res, deps, read);
  ctx.admitted = answered.target.admitted;
  return answered;
}

const readAnswer: ReadAnswer<ResponsesTarget, ResponsesAnswer> = async (response, target) => target.leg.answer(await readJsonBody(response));

/** Bills the usage at the answering model's prices; reported on the metrics and the request's log line. */
function settle(run: PaidRun, ctx: ResponsesRunContext, deps: ChatRunDeps, usage: Usage, status: 'succeeded' | 'canceled', upstreamMs: number): Promise<number> {
  const { admitted } = ctx;
  return settleTokens(run, { metrics: deps.metrics, res: ctx.res }, { provider: admitted.plan.provider, model: admitted.model.entry.slug }, admitted.prices, usage, status, upstreamMs);
}

function refund(run: PaidRun, ctx: ResponsesRunContext, deps: ChatRunDeps, error: GatewayError): Promise<void> {
  return refundFailedRun(run, { metrics: deps.metrics, res: ctx.res }, ctx.admitted.plan.provider, error);
}

function finalState(answer: ResponsesAnswer, usage: ResponseState['usage']): ResponseState {
  return { status: answer.status, output: answer.output, ...(usage === undefined ? {} : { usage }), ...(answer.incompleteReason === undefined ? {} : { incompleteReason: answer.incompleteReason }) };
}

export async function runNonStream(run: PaidRun, ctx: ResponsesRunContext, deps: ChatRunDeps): Promise<void> {
  const answer = new JsonAnswer(ctx.res, ctx.headers, deps.timeouts.nonstreamKeepaliveMs);
  const start = performance.now();
  try {
    const got = (await call(run, ctx, deps, readAnswer)).value;
    run.throwIfStopped();
    const usage = usageSoFar(got.usage, ctx.admitted.inputTokens, got.outputChars, got.outputChars);
    await settle(run, ctx, deps, usage, 'succeeded', performance.now() - start);
    const state = finalState(got, usage);
    await ctx.keep(state);
    answer.send(200, responseView(ctx.who, state));
  } catch (thrown) {
    const error = runFailure(run, thrown);
    await refund(run, ctx, deps, error);
    answer.send(error.status, chatErrorBody(error));
  }
}

export async function runStream(run: PaidRun, ctx: ResponsesRunContext, deps: ChatRunDeps): Promise<void> {
  const sse = new SseWriter(ctx.res, ctx.headers, deps.timeouts.streamKeepaliveMs);
  const offClose = sse.onClientClose(() => run.stop('client_closed'));
  const events = new ResponseEvents(sse, ctx.who);
  const start = performance.now();
  let leg: ReturnType<ResponsesTarget['leg']['stream']> | undefined;
  try {
    const { value: response, target } = await call(run, ctx, deps, asResponse);
    sse.open();
    deps.metrics.streamOpened();
    events.start();
    sse.flush();
    leg = target.leg.stream(events);
    const text = new TextDecoder();
    for await (const piece of response.body) {
      run.armTimeout();
      try {
        leg.push(text.decode(piece as Buffer, { stream: true }));
      } finally {
        sse.flush();
      }
    }
    const got = leg.end();
    run.throwIfStopped();
    const usage = usageSoFar(got.usage, ctx.admitted.inputTokens, got.outputChars, got.outputChars);
    await settle(run, ctx, deps, usage, 'succeeded', performance.now() - start);
    const state = finalState(got, usage);
    await ctx.keep(state);
    events.finish(state);
    sse.end();
  } catch (thrown) {
    const sofar = leg?.sofar();
    if (run.stopReason === 'client_closed') {
      // What was generated is billed and the rest released; before the first event, all of it is refunded (499).
      if (sse.started) await settle(run, ctx, deps, usageSoFar(sofar?.usage, ctx.admitted.inputTokens, sofar?.outputChars ?? 0, sofar?.charsCounted ?? 0), 'canceled', performance.now() - start);
      else await run.refund('client_closed_request', 'canceled');
      sse.stop();
      return;
    }
    const error = runFailure(run, thrown);
    await refund(run, ctx, deps, error);
    if (sse.started) {
      events.fail(error, sofar?.output ?? []);
      sse.end();
    } else {
      sse.fail(error.status, chatErrorBody(error));
    }
  } finally {
    if (sse.started) deps.metrics.streamClosed();
    sse.stop();
    offClose();
  }
}

