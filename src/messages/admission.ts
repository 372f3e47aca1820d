/**
 * Everything before the provider call on the Messages route, in the spec's order: the body
 * validated in its own format, then translated into the internal chat request, which chat's
 * admission takes from there (model lookup, fallbacks, deployments, content support, the quote
 * with the largest candidate's hold). Each deployment then gets its leg (legs.ts): provider_2's
 * passthrough or the translation through its chat adapter. A refused block is named as the
 * client sent it (`messages[i].content[j]`).
 */
import { prepareChatRequest, quoteRun, type AdmittedChat, type PlannedDeployment, type PreparedChat, type QuotedRun } from '../chat/admission.ts';
import type { MediaLimits } from '../chat/media/media-hold.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { PassthroughHeaders } from '../providers/anthropic/passthrough.ts';
import type { CallTarget } from '../providers/provider-call.ts';
import type { AdapterTable } from '../providers/registry.ts';
import { GatewayError } from '../shared/errors.ts';
import { legFor, type MessagesLeg } from './legs.ts';
import { parseMessagesRequest, type MessagesRequest } from './messages-request.ts';
import { toChatRequest, type ChatTranslation } from './to-chat.ts';

/** One deployment of a candidate model, with the leg that reaches it and the run as that model answers and bills it. */
export interface MessagesTarget extends CallTarget {
  leg: MessagesLeg;
  admitted: AdmittedChat;
}

export interface PreparedMessages {
  request: MessagesRequest;
  translation: ChatTranslation;
  chat: PreparedChat;
  /** X-Service-Ignored-Params: unknown fields, then what any deployment's leg drops. */
  ignored: string[];
  headers: PassthroughHeaders;
}

export type QuotedMessages = QuotedRun<MessagesTarget>;

/** Validation, translation, models, plans and content support: no money touched. */
export function prepareMessages(body: unknown, headers: PassthroughHeaders, catalog: Catalog, adapters: AdapterTable): PreparedMessages {
  const request = parseMessagesRequest(body);
  const translation = toChatRequest(request);
  const chat = renamedOnRefusal(translation, () => prepareChatRequest(translation.chat, catalog, adapters));
  return { request, translation, chat, ignored: [...request.unknown], headers };
}

/** The quote, and every deployment's leg and provider request, built before the hold. */
export async function quoteMessages(prepared: PreparedMessages, jobId: string, media: MediaLimits): Promise<QuotedMessages> {
  const ignored = new Set(prepared.ignored);
  const target = ({ deployment, plan, adapter }: PlannedDeployment, admitted: AdmittedChat): MessagesTarget => {
    const leg = legFor(deployment.provider, { request: prepared.request, plan, adapter, headers: prepared.headers });
    for (const name of leg.ignored) ignored.add(name);
    return {
      provider: deployment.provider,
      providerModelId: deployment.providerModelId,
      leg,
      admitted,
      build: (apiKey) => leg.build(apiKey),
      mapError: (status, body, text) => adapter.mapError(status, body, text),
      retryDelayMs: (body) => adapter.retryDelayMs?.(body),
    };
  };
  const quoted = await namedAsSent(prepared.translation, () => quoteRun(prepared.chat, jobId, media, target));
  prepared.ignored = [...ignored];
  return quoted;
}

const CHAT_PART = /^messages\[(\d+)\]\.content\[(\d+)\]|^messages\[(\d+)\]/;

/** A refusal that names a part of the internal request, renamed to the block the client sent. */
function renamed(error: GatewayError, translation: ChatTranslation): GatewayError {
  const param = error.param;
  if (typeof param !== 'string') return error;
  const match = CHAT_PART.exec(param);
  if (match === null) return error;
  const message = Number(match[1] ?? match[3]);
  const part = match[2] === undefined ? 0 : Number(match[2]);
  const origin = translation.origins[message]?.[part] ?? translation.origins[message]?.[0];
  if (origin === undefined) return error;
  const renamedParam = origin + param.slice(match[0].length);
  return new GatewayError(error.code, error.message.split(param).join(renamedParam), { param: renamedParam, ...(error.headers === undefined ? {} : { headers: error.headers }) });
}

/** Runs `work`; a refusal naming a part of the internal request is renamed to the block the client sent. */
export async function namedAsSent<T>(translation: ChatTranslation, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw error instanceof GatewayError ? renamed(error, translation) : error;
  }
}

function renamedOnRefusal<T>(translation: ChatTranslation, work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw error instanceof GatewayError ? renamed(error, translation) : error;
  }
}
