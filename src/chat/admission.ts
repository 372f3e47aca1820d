/**
 * Everything before the provider call, in the spec's order: body validation, model
 * lookup, content support, credit hold (then spending limits, key credit limits and
 * trial rules as they land). Nothing is reserved unless every check passes.
 */
import type { CatalogModel, Catalog } from '../catalog/catalog.ts';
import type { TokenPrices } from '../catalog/pricing.ts';
import { estimateInputTokens, holdOf } from '../billing/chat-cost.ts';
import { microToCredits } from '../billing/money.ts';
import type { GatePass } from '../gate/access-gate.ts';
import { GatewayError } from '../http/errors.ts';
import type { Store } from '../store/types.ts';
import { parseChatRequest, type ChatRequest } from './chat-request.ts';
import { checkContentSupport } from './content-support.ts';
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

export interface AdmissionDeps {
  catalog: Catalog;
  store: Store;
  instanceId: string;
  now: () => number;
}

/** Validation, model and plan: no money touched (their errors come before the hold). */
export function prepareChat(body: unknown, catalog: Catalog): { request: ChatRequest; model: CatalogModel; plan: ProviderPlan; prices: TokenPrices; mediaTokens: number } {
  const request = parseChatRequest(body);
  const model = resolveChatModel(request.model, catalog);
  const plan = planProviderCall(request, model);
  const media = checkContentSupport(request.messages, plan.provider, plan.call.routing);
  return { request, model, plan, prices: model.prices as TokenPrices, mediaTokens: media.tokens };
}

export function resolveChatModel(name: string, catalog: Catalog): CatalogModel {
  const model = catalog.resolve(name);
  if (model === undefined || NOT_CHAT.has(model.entry.category)) {
    throw new GatewayError('model_not_found', `The model '${name}' does not exist or is not a chat model.`, { param: 'model' });
  }
  if (model.entry.chat === undefined) {
    throw new GatewayError('model_not_supported', `The model '${name}' is not served by any chat provider.`, { param: 'model' });
  }
  if (!model.available || model.prices === undefined) {
    const reason = model.unavailableReason ?? 'It has no price.';
    const instead = model.useInstead === undefined ? '' : ` Use '${model.useInstead}' instead.`;
    throw new GatewayError('model_unavailable', `The model '${name}' cannot run now. ${reason}${instead}`, { param: 'model' });
  }
  return model;
}

export type PreparedChat = ReturnType<typeof prepareChat>;

/** The credit hold of a prepared request under `jobId` (decided by the caller, so the answer's headers exist before money moves). */
export async function holdChat(prepared: PreparedChat, pass: GatePass, deps: AdmissionDeps, jobId: string): Promise<AdmittedChat> {
  const inputTokens = (await estimateInputTokens(prepared.request)) + prepared.mediaTokens;
  const held = holdOf(prepared.prices, inputTokens, prepared.plan.call.maxTokens);
  const key = pass.key.record;
  const result = await deps.store.hold({
    jobId,
    accountId: key.accountId,
    keyId: key.id,
    keyFamilyId: key.familyId,
    kind: 'chat',
    model: prepared.model.entry.slug,
    amount: held,
    at: deps.now(),
    instanceId: deps.instanceId,
  });
  if (!result.ok) {
    throw new GatewayError(
      'insufficient_credits',
      `Insufficient credits: this request holds ${microToCredits(held)} credits (input estimate plus max_tokens output) and ${microToCredits(Math.max(0, result.available))} are available. Top up, or lower max_tokens.`,
    );
  }
  return { ...prepared, jobId, held, inputTokens };
}
