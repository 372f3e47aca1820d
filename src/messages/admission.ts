/**
 * Everything before the provider call on the Messages route, in the spec's order: the body
 * validated in its own format, then translated into the internal chat request, which chat's
 * admission takes from there (model lookup, fallbacks, deployments, content support, the quote
 * with the largest candidate's hold). Each deployment then gets its leg (legs.ts): provider_2's
 * passthrough or the translation through its chat adapter. A refused block is named as the
 * client sent it (`messages[i].content[j]`).
 */
import { prepareChatRequest, priceCandidates, type PreparedChat } from '../chat/admission.ts';
import type { MediaLimits } from '../chat/media/media-hold.ts';
import type { Catalog, CatalogModel } from '../catalog/catalog.ts';
import type { TokenPrices } from '../catalog/pricing.ts';
import type { PassthroughHeaders } from '../providers/anthropic/passthrough.ts';
import { prepareRoute, type CallCandidate, type CallTarget, type Deployed, type ProviderRoute } from '../providers/provider-call.ts';
import type { AdapterTable } from '../providers/registry.ts';
import { GatewayError } from '../shared/errors.ts';
import { legFor, type MessagesLeg } from './legs.ts';
import { parseMessagesRequest, type MessagesRequest } from './messages-request.ts';
import { toChatRequest, type ChatTranslation } from './to-chat.ts';

/** One deployment of a candidate model, with the leg that reaches it and what the run bills if it answers. */
export interface MessagesTarget extends CallTarget {
  leg: MessagesLeg;
  model: CatalogModel;
  prices: TokenPrices;
  inputTokens: number;
}

export interface PreparedMessages {
  request: MessagesRequest;
  translation: ChatTranslation;
  chat: PreparedChat;
  /** X-Service-Ignored-Params: unknown fields, then what any deployment's leg drops. */
  ignored: string[];
  headers: PassthroughHeaders;
}

export interface QuotedMessages {
  route: ProviderRoute<MessagesTarget>;
  held: number;
  /** The first candidate's first deployment (its provider counts a failure before any answer). */
  first: MessagesTarget;
}

/** Validation, translation, models, plans and content support: no money touched. */
export function prepareMessages(body: unknown, headers: PassthroughHeaders, catalog: Catalog, adapters: AdapterTable): PreparedMessages {
  const request = parseMessagesRequest(body);
  const translation = toChatRequest(request);
  const chat = renamedOnRefusal(translation, () => prepareChatRequest(translation.chat, catalog, adapters));
  return { request, translation, chat, ignored: [...request.unknown], headers };
}

/** The quote, and every deployment's leg and provider request, built before the hold. */
export async function quoteMessages(prepared: PreparedMessages, media: MediaLimits): Promise<QuotedMessages> {
  const { priced, held } = await namedAsSent(prepared.translation, () => priceCandidates(prepared.chat, media));
  const ignored = new Set(prepared.ignored);
  const candidates: CallCandidate<MessagesTarget>[] = priced.map(({ candidate, inputTokens }) => ({
    model: candidate.model.entry.slug,
    deployments: candidate.deployments.map(({ deployment, plan, adapter }): Deployed<MessagesTarget> => {
      const leg = legFor(deployment.provider, { request: prepared.request, plan, adapter, headers: prepared.headers });
      for (const name of leg.ignored) ignored.add(name);
      return {
        weight: deployment.weight,
        priority: deployment.priority,
        target: {
          provider: deployment.provider,
          providerModelId: deployment.providerModelId,
          leg,
          model: candidate.model,
          prices: candidate.prices,
          inputTokens,
          build: (apiKey) => leg.build(apiKey),
          mapError: (status, body, text) => adapter.mapError(status, body, text),
          retryDelayMs: (body) => adapter.retryDelayMs?.(body),
        },
      };
    }),
  }));
  prepared.ignored = [...ignored];
  const route = prepareRoute('chat', prepared.request.model, candidates);
  const first = (candidates[0]?.deployments[0] as Deployed<MessagesTarget>).target;
  return { route, held, first };
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
