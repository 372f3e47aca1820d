/**
 * Everything before the provider call, in the spec's order: body validation, model
 * lookup, content support, then the quote the paid-run core holds (with the spending
 * limits, key credit limits and trial rules in the same atomic step).
 *
 * A request may run on more than its model (docs/decisions.md "Routing"): the model's
 * deployments, then its fallbacks (the request's `models`, else the catalog's `fallbacks`).
 * Each candidate is planned and checked here; the hold is the largest candidate's.
 */
import { deploymentsOf, modelUnavailable, type CatalogModel, type Catalog, type Deployment } from '../catalog/catalog.ts';
import type { TokenPrices } from '../catalog/pricing.ts';
import type { ProviderAdapter } from '../providers/adapter.ts';
import { prepareRoute, type CallCandidate, type CallTarget, type Deployed, type ProviderRoute } from '../providers/provider-call.ts';
import type { AdapterTable } from '../providers/registry.ts';
import type { CatalogEntry } from '../catalog/catalog-file.ts';
import { estimateInputTokens, holdOf } from './chat-quote.ts';
import { GatewayError } from '../shared/errors.ts';
import { parseChatRequest, type ChatRequest } from './chat-request.ts';
import { checkContentSupport } from './content-support.ts';
import { mediaHoldTokens, type MediaLimits, type MediaPart } from './media/media-hold.ts';
import { planProviderCall, type ProviderPlan } from './provider-plan.ts';

/** Categories whose slugs are not chat models at all (404 on chat). */
const NOT_CHAT = new Set(['image', 'video', 'audio', 'speech_tts', 'transcription_stt', 'embedding', 'vla_robotics']);

/** One candidate's view of the run: the model, its plan and prices, and what it would bill. */
export interface AdmittedChat {
  request: ChatRequest;
  model: CatalogModel;
  plan: ProviderPlan;
  prices: TokenPrices;
  jobId: string;
  /** The run's hold: the largest of its candidates'. */
  held: number;
  inputTokens: number;
}

/** One deployment of a candidate model: its adapter, and the run as that model answers and bills it. */
export interface ChatTarget extends CallTarget {
  adapter: ProviderAdapter;
  admitted: AdmittedChat;
}

/** A deployment the request can run on: its plan (the provider's F/S/D column) and adapter. */
export interface PlannedDeployment {
  deployment: Deployment;
  plan: ProviderPlan;
  adapter: ProviderAdapter;
}

export interface PreparedModel {
  model: CatalogModel;
  prices: TokenPrices;
  /** The images and PDFs to read and price before the hold. */
  media: MediaPart[];
  deployments: PlannedDeployment[];
}

export interface PreparedChat {
  request: ChatRequest;
  /** The model asked for (when it can run), then its fallbacks that can. */
  candidates: PreparedModel[];
  /** X-Service-Ignored-Params: every name any candidate's plan drops, in first-seen order. */
  ignored: string[];
}

export interface QuotedChat {
  /** The first candidate's view (the answering candidate's replaces it in the run). */
  admitted: AdmittedChat;
  route: ProviderRoute<ChatTarget>;
  held: number;
}

/** Validation, models, plans and content support: no money touched (their errors come before the hold). */
export function prepareChat(body: unknown, catalog: Catalog, adapters: AdapterTable): PreparedChat {
  return prepareChatRequest(parseChatRequest(body), catalog, adapters);
}

/** The same for a request another door (Messages, Responses) has parsed into the internal chat request. */
export function prepareChatRequest(request: ChatRequest, catalog: Catalog, adapters: AdapterTable): PreparedChat {
  const model = resolveChatModel(request.model, catalog, 'model');
  const fallbacks = request.models !== undefined
    ? request.models.map((slug, i) => resolveChatModel(slug, catalog, `models[${i}]`))
    : (model.entry.fallbacks ?? []).map((slug) => catalog.bySlug(slug)).filter((m): m is CatalogModel => m !== undefined);
  const candidates: PreparedModel[] = [];
  // The model asked for: its own refusals answer (unsupported content, no connected provider), unless it
  // cannot run now and a fallback can.
  let refusal: GatewayError | undefined;
  try {
    candidates.push(prepareModel(request, model, request.model, adapters));
  } catch (error) {
    if (!(error instanceof GatewayError) || error.code !== 'model_unavailable' || fallbacks.length === 0) throw error;
    refusal = error;
  }
  const seen = new Set([model.entry.slug]);
  for (const fallback of fallbacks) {
    if (seen.has(fallback.entry.slug)) continue;
    seen.add(fallback.entry.slug);
    try {
      candidates.push(prepareModel(request, fallback, fallback.entry.slug, adapters));
    } catch (error) {
      // A fallback that cannot run now, or cannot take this request's content, is left out.
      if (!(error instanceof GatewayError)) throw error;
    }
  }
  const first = candidates[0];
  if (first === undefined) throw refusal ?? modelUnavailable(request.model, model);
  const ignored = [...new Set(candidates.flatMap((c) => c.deployments.flatMap((d) => d.plan.ignored)))];
  return { request, candidates, ignored };
}

/** A model's runnable deployments, planned; throws the model's refusal when there is none. */
function prepareModel(request: ChatRequest, model: CatalogModel, asked: string, adapters: AdapterTable): PreparedModel {
  if (!model.available || model.prices === undefined) throw modelUnavailable(asked, model);
  const deployments: PlannedDeployment[] = [];
  let media: MediaPart[] | undefined;
  let refusal: GatewayError | undefined;
  for (const deployment of deploymentsOf(model.entry)) {
    const adapter = adapters[deployment.provider];
    if (adapter === undefined) continue;
    const plan = planProviderCall(request, model, undefined, deployment);
    try {
      const parts = checkContentSupport(request.messages, plan.provider, plan.call.routing).parts;
      media ??= parts;
    } catch (error) {
      // A deployment whose provider cannot take the content is left out; none left: the first refusal answers.
      if (!(error instanceof GatewayError)) throw error;
      refusal ??= error;
      continue;
    }
    deployments.push({ deployment, plan, adapter });
  }
  if (deployments.length === 0) {
    throw refusal ?? new GatewayError('model_unavailable', `The model '${asked}' cannot run now: its provider is not connected yet.`, { param: 'model' });
  }
  return { model, prices: model.prices as TokenPrices, media: media ?? [], deployments };
}

/** Whether the chat route runs the entry at all (the catalog's availability reads it). */
export function chatRouteRuns(entry: CatalogEntry): boolean {
  return !NOT_CHAT.has(entry.category) && entry.chat !== undefined;
}

export function resolveChatModel(name: string, catalog: Catalog, param = 'model'): CatalogModel {
  const model = catalog.resolve(name);
  if (model === undefined || NOT_CHAT.has(model.entry.category)) {
    throw new GatewayError('model_not_found', `The model '${name}' does not exist or is not a chat model.`, { param });
  }
  if (model.entry.chat === undefined) {
    throw new GatewayError('model_not_supported', `The model '${name}' is not served by any chat provider.`, { param });
  }
  return model;
}

/** The quote (priceCandidates) and the provider requests, built here, before the hold. */
export async function quoteChat(prepared: PreparedChat, jobId: string, media: MediaLimits): Promise<QuotedChat> {
  return quoteRun(prepared, jobId, media, chatTarget);
}

/** The chat door's request for a deployment: its adapter's chat request. */
function chatTarget(d: PlannedDeployment, admitted: AdmittedChat): ChatTarget {
  const { deployment, plan, adapter } = d;
  return {
    provider: deployment.provider,
    providerModelId: deployment.providerModelId,
    adapter,
    admitted,
    build: (apiKey) => adapter.buildRequest(plan.call, apiKey),
    mapError: (status, body, text) => adapter.mapError(status, body, text),
    retryDelayMs: (body) => adapter.retryDelayMs?.(body),
  };
}

/** What a door quotes and routes: the first candidate's view, the route of its targets, the hold. */
export interface QuotedRun<T extends CallTarget> {
  admitted: AdmittedChat;
  route: ProviderRoute<T>;
  held: number;
}

/**
 * The quote of any door: as `quoteChat`, with the door's own request for each deployment
 * (`target`: the chat request, a translated one, or a native passthrough).
 */
export async function quoteRun<T extends CallTarget & { admitted: AdmittedChat }>(
  prepared: PreparedChat, jobId: string, media: MediaLimits, target: (d: PlannedDeployment, admitted: AdmittedChat) => T,
): Promise<QuotedRun<T>> {
  const { priced, held } = await priceCandidates(prepared, media);
  const candidates: CallCandidate<T>[] = priced.map(({ candidate, inputTokens }) => ({
    model: candidate.model.entry.slug,
    deployments: candidate.deployments.map((d): Deployed<T> => ({
      weight: d.deployment.weight,
      priority: d.deployment.priority,
      target: target(d, { request: prepared.request, model: candidate.model, plan: d.plan, prices: candidate.prices, jobId, held, inputTokens }),
    })),
  }));
  const route = prepareRoute('chat', prepared.request.model, candidates);
  const admitted = (candidates[0]?.deployments[0] as Deployed<T>).target.admitted;
  return { admitted, route, held };
}

/** A candidate with its input estimate (text and media) and its hold. */
export interface PricedCandidate {
  candidate: PreparedModel;
  inputTokens: number;
  held: number;
}

/**
 * Every candidate priced (any door that runs the internal chat request): input estimate (real
 * tokenizer) plus every image and PDF page read and priced (content support, continued, with the
 * media limits), plus the capped output, at its prices (the input at a cache-write price where
 * the run may write the cache at it); the run's hold is the largest.
 */
export async function priceCandidates(prepared: PreparedChat, media: MediaLimits): Promise<{ priced: PricedCandidate[]; held: number }> {
  const textTokens = await estimateInputTokens(prepared.request);
  const priced: PricedCandidate[] = [];
  for (const candidate of prepared.candidates) {
    const first = candidate.deployments[0] as PlannedDeployment;
    const inputTokens = textTokens + (await mediaHoldTokens(candidate.media, first.plan.call.routing.images, media));
    const held = Math.max(...candidate.deployments.map((d) => holdOf(candidate.prices, inputTokens, d.plan.call.maxTokens, d.plan.cacheWrites)));
    priced.push({ candidate, inputTokens, held });
  }
  return { priced, held: Math.max(...priced.map((p) => p.held)) };
}
