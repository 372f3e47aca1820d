/**
 * The Messages run inside the paid-run core, as chat's: the provider call through the glue
 * (provider-call.ts: keys, retries, fallbacks, the abort signal), the answer or the event stream
 * through the answering deployment's leg, the usage billed at the answering model's prices. A
 * failure is refunded; after the first byte it is one `event: error` and nothing after it. A
 * stream the client closes bills what was generated (refunded before the first event).
 */
import type { ServerResponse } from 'node:http';
import type { PaidRun } from '../billing/paid-run.ts';
import { refundFailedRun, settleTokens, usageOrEstimate, usageSoFar, type RunReport } from '../billing/token-settlement.ts';
import { JsonAnswer } from '../http/json-answer.ts';
import { SseWriter } from '../http/sse-writer.ts';
import type { MessageIdentity } from '../providers/anthropic/passthrough.ts';
import { asResponse, runFailure, type Answered, type ProviderRoute, type ReadAnswer } from '../providers/provider-call.ts';
import { streamBroken } from '../providers/upstream-errors.ts';
import { readJsonBody } from '../providers/upstream-client.ts';
import type { Usage } from '../shared/chat-wire.ts';
import type { GatewayError } from '../shared/errors.ts';
import { callDoorProvider, type DoorRunDeps } from '../chat/door-run.ts';
import type { MessagesTarget } from './admission.ts';
import { errorEnvelope } from './envelope.ts';
import type { ReadMessage } from './legs.ts';

/** What a Messages run needs: a door's run deps (chat/door-run.ts). */
export type MessagesRunDeps = DoorRunDeps;

export interface MessagesRunContext {
  res: ServerResponse;
  headers: Record<string, string>;
  route: ProviderRoute<MessagesTarget>;
  who: MessageIdentity;
  /** The target whose provider a failure before any answer is counted against. */
  first: MessagesTarget;
}

function reportOf(ctx: MessagesRunContext, deps: MessagesRunDeps): RunReport {
  return { metrics: deps.metrics, res: ctx.res };
}

function settle(run: PaidRun, ctx: MessagesRunContext, deps: MessagesRunDeps, target: MessagesTarget, usage: Usage, status: 'succeeded' | 'canceled', upstreamMs: number) {
  return settleTokens(run, reportOf(ctx, deps), { provider: target.provider, model: target.admitted.model.entry.slug }, target.admitted.prices, usage, status, upstreamMs);
}

function refund(run: PaidRun, ctx: MessagesRunContext, deps: MessagesRunDeps, target: MessagesTarget, error: GatewayError) {
  return refundFailedRun(run, reportOf(ctx, deps), target.provider, error);
}

async function call<R>(run: PaidRun, ctx: MessagesRunContext, deps: MessagesRunDeps, read: ReadAnswer<MessagesTarget, R>): Promise<Answered<MessagesTarget, R>> {
  return callDoorProvider(run, ctx.route, ctx.res, deps, read);
}

export async function runMessage(run: PaidRun, ctx: MessagesRunContext, deps: MessagesRunDeps): Promise<void> {
  const answer = new JsonAnswer(ctx.res, ctx.headers, deps.timeouts.nonstreamKeepaliveMs);
  const upstreamStart = performance.now();
  let target = ctx.first;
  try {
    const answered = await call(run, ctx, deps, async (response, t): Promise<ReadMessage> => t.leg.read(await readJsonBody(response), ctx.who));
    target = answered.target;
    const read = answered.value;
    run.throwIfStopped();
    const usage = usageOrEstimate(read.usage, target.admitted.inputTokens, read.outputChars);
    await settle(run, ctx, deps, target, usage, 'succeeded', performance.now() - upstreamStart);
    answer.send(200, read.render(usage));
  } catch (thrown) {
    const error = runFailure(run, thrown);
    await refund(run, ctx, deps, target, error);
    answer.send(error.status, errorEnvelope(error));
  }
}

export async function runMessageStream(run: PaidRun, ctx: MessagesRunContext, deps: MessagesRunDeps): Promise<void> {
  const sse = new SseWriter(ctx.res, ctx.headers, deps.timeouts.streamKeepaliveMs);
  const offClose = sse.onClientClose(() => run.stop('client_closed'));
  const upstreamStart = performance.now();
  let target = ctx.first;
  let relay: ReturnType<MessagesTarget['leg']['relay']> | undefined;
  // The provider's last counts plus the output after them (provider_2 counts the input, cache parts apart, before any text).
  const billed = () => usageSoFar(relay?.usage, target.admitted.inputTokens, relay?.outputChars ?? 0, relay?.charsCounted ?? 0);
  try {
    const answered = await call(run, ctx, deps, asResponse);
    target = answered.target;
    relay = target.leg.relay(ctx.who);
    const labels = { provider: target.provider, model: target.admitted.model.entry.slug };
    sse.open();
    deps.metrics.streamOpened();
    sse.write(relay.start(target.admitted.inputTokens));
    sse.flush();
    const text = new TextDecoder();
    let firstToken = true;
    for await (const piece of answered.value.body) {
      run.armTimeout();
      try {
        sse.write(relay.push(text.decode(piece as Buffer, { stream: true })));
      } finally {
        sse.flush();
      }
      if (firstToken && relay.outputChars > 0) {
        firstToken = false;
        deps.metrics.firstToken(labels, performance.now() - deps.arrivedAt);
      }
    }
    sse.write(relay.drain());
    run.throwIfStopped();
    if (!relay.complete) throw streamBroken();
    const usage = billed();
    await settle(run, ctx, deps, target, usage, 'succeeded', performance.now() - upstreamStart);
    sse.end(relay.close(usage));
  } catch (thrown) {
    if (run.stopReason === 'client_closed') {
      // Tokens generated so far are billed and the rest released; before the first event, all of it is refunded (499).
      if (sse.started) await settle(run, ctx, deps, target, billed(), 'canceled', performance.now() - upstreamStart);
      else await run.refund('client_closed_request', 'canceled');
      sse.stop();
      return;
    }
    const error = runFailure(run, thrown);
    await refund(run, ctx, deps, target, error);
    if (sse.started) sse.end(`event: error\ndata: ${JSON.stringify(errorEnvelope(error))}\n\n`);
    else sse.fail(error.status, errorEnvelope(error));
  } finally {
    if (sse.started) deps.metrics.streamClosed();
    sse.stop();
    offClose();
  }
}
