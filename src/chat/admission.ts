/**
 * Everything before the provider call, in the spec's order: body validation, model
 * lookup, content support, then the quote the paid-run core holds (with the spending
 * limits, key credit limits and trial rules in the same atomic step).
 */
import { modelUnavailable, type CatalogModel, type Catalog } from '../catalog/catalog.ts';
import type { TokenPrices } from '../catalog/pricing.ts';
import { estimateInputTokens, holdOf } from './chat-quote.ts';
import { GatewayError } from '../shared/errors.ts';
import { parseChatRequest, type ChatRequest } from './chat-request.ts';
import { checkContentSupport } from './content-support.ts';
import { mediaHoldTokens, type MediaLimits, type MediaPart } from './media/media-hold.ts';
import { planProviderCall, type ProviderPlan } from './provider-plan.ts';

/** Categories whose slugs are not chat models at all (404 on chat). */
const NOT_CHAT = new Set(['image', 'video', 'audio', 'speech_tts', 'transcription_stt', 'embedding', 'vla_robotics']);

export interface AdmittedChat {
  request: ChatRequest;
  model: CatalogModel;
  plan: ProviderPlan;
  prices: TokenPrices;
  jobId: string;
  held: number;
  inputTokens: number;
}

export interface PreparedChat {
  request: ChatRequest;
  model: CatalogModel;
  plan: ProviderPlan;
  prices: TokenPrices;
  /** The images and PDFs to read and price before the hold. */
  media: MediaPart[];
}

/** Validation, model, plan and content support: no money touched (their errors come before the hold). */
export function prepareChat(body: unknown, catalog: Catalog): PreparedChat {
  const request = parseChatRequest(body);
  const model = resolveChatModel(request.model, catalog);
  const plan = planProviderCall(request, model);
  const media = checkContentSupport(request.messages, plan.provider, plan.call.routing);
  return { request, model, plan, prices: model.prices as TokenPrices, media: media.parts };
}

export function resolveChatModel(name: string, catalog: Catalog): CatalogModel {
  const model = catalog.resolve(name);
  if (model === undefined || NOT_CHAT.has(model.entry.category)) {
    throw new GatewayError('model_not_found', `The model '${name}' does not exist or is not a chat model.`, { param: 'model' });
  }
  if (model.entry.chat === undefined) {
    throw new GatewayError('model_not_supported', `The model '${name}' is not served by any chat provider.`, { param: 'model' });
  }
  if (!model.available || model.prices === undefined) throw modelUnavailable(name, model);
  return model;
}

/**
 * The quote: input estimate (real tokenizer) plus every image and PDF page read and priced
 * (content support, continued, with the media limits), plus the capped output, at the model's prices
 * (the input at a cache-write price where the run may write the cache at it).
 */
export async function quoteChat(prepared: PreparedChat, jobId: string, media: MediaLimits): Promise<AdmittedChat> {
  const mediaTokens = await mediaHoldTokens(prepared.media, prepared.plan.call.routing.images, media);
  const inputTokens = (await estimateInputTokens(prepared.request)) + mediaTokens;
  const held = holdOf(prepared.prices, inputTokens, prepared.plan.call.maxTokens, prepared.plan.cacheWrites);
  return { request: prepared.request, model: prepared.model, plan: prepared.plan, prices: prepared.prices, jobId, held, inputTokens };
}
