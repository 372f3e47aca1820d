/**
 * How the Messages door reaches each provider, one row per provider that speaks this format
 * natively (door × provider): provider_2 receives the client's body as sent (passthrough);
 * every other provider is reached through the internal chat request and its chat adapter, and its
 * answers are rendered back (render.ts). The run (messages-run.ts) never knows which.
 */
import type { ProviderId } from '../catalog/catalog-file.ts';
import type { ProviderAdapter, UpstreamRequest } from '../providers/adapter.ts';
import { passthroughAnswer, passthroughRequest, PassthroughRelay, type MessageIdentity, type PassthroughHeaders } from '../providers/anthropic/passthrough.ts';
import type { ProviderPlan } from '../chat/provider-plan.ts';
import type { Usage } from '../shared/chat-wire.ts';
import type { MessagesRequest } from './messages-request.ts';
import { EventRenderer, renderCompletion } from './render.ts';

type Json = Record<string, unknown>;

/** A 2xx answer read: the usage it reports, its output length, and the message to send once the usage billed is known. */
export interface ReadMessage {
  usage: Usage | undefined;
  outputChars: number;
  render(billed: Usage): Json;
}

/** An upstream event stream turned into this API's events. */
export interface MessagesRelay {
  /** The events before the first upstream one. */
  start(inputTokens: number): string;
  /** Raw upstream text → events to send (throws the provider's error event). */
  push(text: string): string;
  /** The upstream body ended: its last events. */
  drain(): string;
  /** True when the provider's own end was seen. */
  readonly complete: boolean;
  readonly usage: Usage | undefined;
  readonly outputChars: number;
  /** Of outputChars: those received when the provider's last counts came. */
  readonly charsCounted: number;
  /** The closing events, with the usage billed. */
  close(billed: Usage): string;
}

export interface MessagesLeg {
  build(apiKey: string): UpstreamRequest;
  /** Messages field names this leg drops (X-Service-Ignored-Params). */
  ignored: string[];
  read(body: unknown, who: MessageIdentity): ReadMessage;
  relay(who: MessageIdentity): MessagesRelay;
}

/** What a leg is made from: the request, its plan for this deployment, the provider's chat adapter and the client's headers. */
export interface LegInput {
  request: MessagesRequest;
  plan: ProviderPlan;
  adapter: ProviderAdapter;
  headers: PassthroughHeaders;
}

/** The door × provider rows that go native; any provider not listed is translated. */
const NATIVE: Partial<Record<ProviderId, (input: LegInput) => MessagesLeg>> = {
  provider_2: anthropicNative,
};

export function legFor(provider: ProviderId, input: LegInput): MessagesLeg {
  return (NATIVE[provider] ?? translated)(input);
}

/**
 * Sampling fields the model does not take (its catalog `chat.params`, as the plan decided them);
 * `top_k` goes with `top_p`. The gateway's own `models` and unknown fields never travel.
 */
function nativeDrops(input: LegInput): { drop: Set<string>; ignored: string[] } {
  const { request, plan } = input;
  const ignored = ['temperature', 'top_p'].filter((name) => plan.ignored.includes(name));
  if (request.topK !== undefined && !plan.call.routing.params.includes('top_p')) ignored.push('top_k');
  return { drop: new Set([...ignored, ...request.unknown, 'models']), ignored };
}

function anthropicNative(input: LegInput): MessagesLeg {
  const { drop, ignored } = nativeDrops(input);
  return {
    ignored,
    build: (apiKey) => passthroughRequest(input.request.body, input.plan.call.providerModelId, drop, input.headers, apiKey),
    read(body, who) {
      const { message, usage, outputChars } = passthroughAnswer(body, who);
      return { usage, outputChars, render: () => message };
    },
    relay(who) {
      const relay = new PassthroughRelay(who);
      return {
        start: () => '',
        push: (text) => relay.push(text),
        drain: () => relay.end(),
        get complete() {
          return relay.complete;
        },
        get usage() {
          return relay.usage;
        },
        get outputChars() {
          return relay.outputChars;
        },
        get charsCounted() {
          return relay.charsCounted;
        },
        close: () => '',
      };
    },
  };
}

/** The plan's dropped chat fields, by their Messages names; those that came from a hint (thinking, effort) are dropped quietly. */
const MESSAGES_NAME: Record<string, string | undefined> = {
  temperature: 'temperature',
  top_p: 'top_p',
  parallel_tool_calls: 'tool_choice.disable_parallel_tool_use',
};

function translated(input: LegInput): MessagesLeg {
  const { request, plan, adapter } = input;
  const ignored = plan.ignored.flatMap((name) => MESSAGES_NAME[name] ?? []);
  // No chat counterpart: top_k is named; metadata, context_management and the rest of output_config are hints, dropped quietly.
  if (request.topK !== undefined) ignored.push('top_k');
  return {
    ignored,
    build: (apiKey) => adapter.buildRequest(plan.call, apiKey),
    read(body, who) {
      const completion = adapter.parseResponse(body);
      const outputChars = (completion.content ?? '').length + (completion.reasoning ?? '').length + completion.toolCalls.reduce((n, c) => n + c.name.length + c.arguments.length, 0);
      return { usage: completion.usage, outputChars, render: (billed) => renderCompletion(who, completion, billed) };
    },
    relay(who) {
      const decoder = adapter.streamDecoder();
      const renderer = new EventRenderer(who);
      let complete = false;
      return {
        start: (inputTokens) => renderer.start(inputTokens),
        push: (text) => renderer.push(decoder.push(text)),
        drain() {
          const ending = decoder.end();
          const out = renderer.push(ending.events);
          complete = ending.complete && renderer.finished;
          return out;
        },
        get complete() {
          return complete;
        },
        get usage() {
          return renderer.usage;
        },
        get outputChars() {
          return renderer.outputChars;
        },
        get charsCounted() {
          return renderer.charsCounted;
        },
        close: (billed) => renderer.end(billed),
      };
    },
  };
}
