/**
 * The Responses door × provider table: for each deployment of a candidate model, the request
 * and how its answer is read. A provider that serves the format itself (its descriptor's
 * `responses` capability: provider_1) is a passthrough row: the client's body, with the
 * context, `store: false` and the held output cap, to its own Responses endpoint. Every other
 * provider is a translated row: the internal chat request through its chat adapter, and the
 * completion or stream rendered back as output items.
 */
import type { AdmittedChat, PlannedDeployment } from '../chat/admission.ts';
import { stripsFences } from '../chat/chat-run.ts';
import type { Json } from '../chat/chat-request.ts';
import type { ProviderAdapter } from '../providers/adapter.ts';
import type { NativeResponsesAdapter } from '../providers/openai-responses/adapter.ts';
import type { CallTarget } from '../providers/provider-call.ts';
import type { NativeResponsesTable } from '../providers/registry.ts';
import { StreamingFenceStripper, stripFences } from '../providers/structured-output.ts';
import { streamBroken } from '../providers/upstream-errors.ts';
import type { Usage } from '../shared/chat-wire.ts';
import type { ResponsesAnswer } from '../shared/responses-wire.ts';
import type { InputItem } from './input-items.ts';
import type { ResponsesRequest } from './request.ts';
import { answerOfCompletion, ENCRYPTED_REASONING, INCOMPLETE } from './response-view.ts';
import type { ResponseEvents } from './stream-events.ts';
import { StreamItems } from './stream-items.ts';
import type { ToolTable } from './tools.ts';

/** A stream being read: `push` writes the client's events; `end` gives the answer (or throws when the stream broke). */
export interface LegStream {
  push(text: string): void;
  end(): ResponsesAnswer;
  /** What was generated so far (a client that closes is billed for it): the provider's last counts, and the output characters then and now. */
  sofar(): { usage: Usage | undefined; outputChars: number; charsCounted: number; output: Json[] };
}

/** How one row reads its provider's answer. */
export interface Leg {
  answer(body: unknown): ResponsesAnswer;
  stream(events: ResponseEvents): LegStream;
}

export interface ResponsesTarget extends CallTarget {
  admitted: AdmittedChat;
  leg: Leg;
}

/** What the targets are built from: the request, its whole context, its tools. */
export interface ResponsesRun {
  /** The request's own tools for a native provider (tools.ts ToolTable.native before any additional_tools item). */
  nativeTools: Json[];
  request: ResponsesRequest;
  context: readonly InputItem[];
  tools: ToolTable;
}

/** The door's target maker for `quoteRun`: the passthrough row where the provider has one, else the translated row. */
export function responsesTarget(natives: NativeResponsesTable, run: ResponsesRun) {
  return (d: PlannedDeployment, admitted: AdmittedChat): ResponsesTarget => {
    const { deployment, plan, adapter } = d;
    const where = { provider: deployment.provider, providerModelId: deployment.providerModelId, admitted };
    const native = natives[deployment.provider];
    if (native !== undefined) {
      const body = nativeBody(run, plan.call.maxTokens, plan.ignored, plan.call.routing.reasoning);
      return {
        ...where,
        leg: nativeLeg(native),
        build: (apiKey) => native.buildRequest(body, deployment.providerModelId, apiKey),
        mapError: (status, errorBody, text) => native.mapError(status, errorBody, text),
      };
    }
    return {
      ...where,
      leg: translatedLeg(adapter, run.tools, stripsFences(admitted)),
      build: (apiKey) => adapter.buildRequest(plan.call, apiKey),
      mapError: (status, errorBody, text) => adapter.mapError(status, errorBody, text),
      retryDelayMs: (errorBody) => adapter.retryDelayMs?.(errorBody),
    };
  };
}

/** Fields of the client's body the native provider never receives (the gateway's own, or answered here). */
const NOT_FORWARDED = new Set(['models', 'previous_response_id', 'background', 'store', 'input', 'tools', 'max_output_tokens', 'stream']);

/** The plan's dropped parameters, where the Responses body keeps them. */
const BODY_PLACE: Record<string, readonly string[]> = {
  temperature: ['temperature'],
  top_p: ['top_p'],
  user: ['user'],
  parallel_tool_calls: ['parallel_tool_calls'],
  reasoning_effort: ['reasoning', 'effort'],
  verbosity: ['text', 'verbosity'],
};

/** Item types a provider's Responses endpoint takes from a client (built-in tools' items are never sent). */
const NATIVE_ITEMS = new Set(['message', 'function_call', 'function_call_output', 'custom_tool_call', 'custom_tool_call_output', 'reasoning', 'additional_tools']);

/**
 * The passthrough body: the client's fields as sent (known and quiet ones: `ignored` names are
 * left out), the whole context as `input`, its tools without built-ins, `store: false`, and the
 * output cap the hold was made for.
 */
function nativeBody(run: ResponsesRun, maxTokens: number, dropped: readonly string[], reasons: boolean): Json {
  const { request } = run;
  const body: Json = {};
  for (const [name, value] of Object.entries(request.body)) {
    if (!NOT_FORWARDED.has(name) && !request.ignored.includes(name)) body[name] = value;
  }
  for (const name of dropped) {
    const place = BODY_PLACE[name];
    if (place === undefined) continue;
    if (place.length === 1) delete body[place[0] as string];
    else if (typeof body[place[0] as string] === 'object' && body[place[0] as string] !== null) {
      const parent = { ...(body[place[0] as string] as Json) };
      delete parent[place[1] as string];
      body[place[0] as string] = parent;
    }
  }
  body.input = run.context.filter((item) => NATIVE_ITEMS.has(item.type) && (item.type !== 'reasoning' || typeof item.encrypted_content === 'string')).map(nativeItem);
  if (run.nativeTools.length > 0) body.tools = run.nativeTools;
  body.max_output_tokens = maxTokens;
  body.store = false;
  // A stored response of a reasoning model keeps its reasoning (encrypted, as store: false gives it) to continue with;
  // the client sees it only when it asked (response-view.ts).
  if (request.store && reasons && !request.include.includes(ENCRYPTED_REASONING)) body.include = [...request.include, ENCRYPTED_REASONING];
  if (request.stream) body.stream = true;
  return body;
}

/** An `additional_tools` item keeps only the tools a provider is sent. */
function nativeItem(item: InputItem): Json {
  if (item.type !== 'additional_tools' || !Array.isArray(item.tools)) return item;
  return { ...item, tools: item.tools.filter((t) => typeof t === 'object' && t !== null && ['function', 'custom', 'namespace'].includes(String((t as Json).type))) };
}

function nativeLeg(adapter: NativeResponsesAdapter): Leg {
  return {
    answer: (body) => adapter.parseResponse(body),
    stream(events) {
      const decoder = adapter.streamDecoder();
      const output: Json[] = [];
      let final: ResponsesAnswer | undefined;
      let outputChars = 0;
      const handle = (list: ReturnType<typeof decoder.push>) => {
        for (const event of list) {
          if (event.type === 'error') throw event.error;
          if (event.type === 'done') {
            final = event.answer;
            continue;
          }
          const e = event.event;
          if (typeof e.delta === 'string') outputChars += e.delta.length;
          if (e.type === 'response.output_item.done' && typeof e.item === 'object' && e.item !== null) output.push(e.item as Json);
          events.relay(e);
        }
      };
      return {
        push: (text) => handle(decoder.push(text)),
        end() {
          const ending = decoder.end();
          handle(ending.events);
          if (!ending.complete || final === undefined) throw streamBroken();
          return final;
        },
        sofar: () => ({ usage: final?.usage, outputChars, charsCounted: outputChars, output }),
      };
    },
  };
}

function translatedLeg(adapter: ProviderAdapter, tools: ToolTable, fences: boolean): Leg {
  return {
    answer(body) {
      const completion = adapter.parseResponse(body);
      if (fences && completion.content !== null) completion.content = stripFences(completion.content);
      return answerOfCompletion(completion, completion.usage, tools);
    },
    stream(events) {
      const decoder = adapter.streamDecoder();
      const items = new StreamItems(events, tools);
      const stripper = fences ? new StreamingFenceStripper() : undefined;
      let usage: Usage | undefined;
      let charsCounted = 0;
      let finish: keyof typeof INCOMPLETE | 'stop' | 'tool_calls' | undefined;
      const handle = (list: ReturnType<typeof decoder.push>) => {
        for (const event of list) {
          switch (event.type) {
            case 'content':
              items.text(stripper === undefined ? event.text : stripper.push(event.text));
              break;
            case 'finish':
              if (stripper !== undefined) items.text(stripper.end());
              finish ??= event.reason;
              break;
            case 'usage':
              usage = event.usage;
              charsCounted = items.outputChars;
              break;
            case 'error':
              throw event.error;
            default:
              items.take(event);
          }
        }
      };
      return {
        push: (text) => handle(decoder.push(text)),
        end() {
          const ending = decoder.end();
          handle(ending.events);
          if (!ending.complete || finish === undefined) throw streamBroken();
          const output = items.end();
          const reason = INCOMPLETE[finish];
          return { output, status: reason === undefined ? 'completed' : 'incomplete', ...(reason === undefined ? {} : { incompleteReason: reason }), usage, outputChars: items.outputChars };
        },
        sofar: () => ({ usage, outputChars: items.outputChars, charsCounted, output: items.output }),
      };
    },
  };
}
