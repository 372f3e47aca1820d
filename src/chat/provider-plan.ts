/**
 * The provider plan: which request fields reach the provider, per the spec's
 * per-provider F/S/D table and the model's routing facts. Everything dropped is
 * named for X-Service-Ignored-Params, except `cache_control`, which only the providers
 * that cache where asked read, and the others drop quietly (DECISIONS.md).
 */
import type { OptionalChatParam, ProviderId } from '../catalog/catalog-file.ts';
import type { CatalogModel, Deployment } from '../catalog/catalog.ts';
import type { ProviderCall } from '../providers/adapter.ts';
import { PLANNED_PARAMS, type ChatCapability, type ParamColumn } from '../providers/descriptor.ts';
import type { CacheTtl } from '../shared/chat-wire.ts';
import { chatTable, PROVIDERS, type ChatProviderId } from '../providers/descriptors.ts';
import { requestedCacheTtls } from './cache-control.ts';
import type { ChatRequest } from './chat-request.ts';

/** The spec's table: each chat provider's column, written as literal rows in its descriptor. */
export type PlanTable = Partial<Record<ProviderId, ParamColumn>>;
const TABLE: PlanTable = chatTable(PROVIDERS, (chat) => chat.params);
const CACHE_WRITES: Partial<Record<ProviderId, ChatCapability['cacheWrites']>> = chatTable(PROVIDERS, (chat) => chat.cacheWrites);

export const DEFAULT_MAX_TOKENS = 4096;

export interface ProviderPlan {
  provider: ChatProviderId;
  call: ProviderCall;
  /** Names for X-Service-Ignored-Params, in request order then table order. */
  ignored: string[];
  /** The cache-write lifetimes this run may be billed for (the hold prices its input at the dearest). */
  cacheWrites: CacheTtl[];
}

/** The plan for one deployment of the model (by default, its provider under its provider model id). */
export function planProviderCall(request: ChatRequest, model: CatalogModel, table: PlanTable = TABLE, deployment?: Pick<Deployment, 'provider' | 'providerModelId'>): ProviderPlan {
  const entry = model.entry;
  const routing = entry.chat;
  if (routing === undefined) throw new Error(`planProviderCall: ${entry.slug} has no chat routing facts`);
  const at = deployment ?? { provider: entry.provider, providerModelId: entry.provider_model_id };
  const column = table[at.provider];
  // The catalog lets chat routing facts and deployments only on chat providers, so this is a wiring error.
  if (column === undefined) throw new Error(`planProviderCall: ${at.provider} has no chat descriptor`);
  const provider = at.provider as ChatProviderId;
  const requested = request.maxTokens ?? DEFAULT_MAX_TOKENS;
  const call: ProviderCall = {
    providerModelId: at.providerModelId,
    routing,
    messages: request.messages,
    maxTokens: entry.max_output_tokens === null ? requested : Math.min(requested, entry.max_output_tokens),
    stream: request.stream,
  };
  if (request.stop !== undefined) call.stop = request.stop;
  if (request.tools !== undefined) call.tools = request.tools;
  if (request.tool_choice !== undefined) call.tool_choice = request.tool_choice;
  if (request.response_format !== undefined) call.response_format = request.response_format;

  const ignored = [...request.ignored];
  for (const name of PLANNED_PARAMS) {
    const value = request[name];
    if (value === undefined) continue;
    const cell = column[name];
    const takes = cell === 'F' || (cell === 'S' && routing.params.includes(name as OptionalChatParam));
    // Models that refuse temperature and top_p together keep temperature.
    const excluded = name === 'top_p' && routing.exclusive_sampling && call.temperature !== undefined;
    if (takes && !excluded) (call as unknown as Record<string, unknown>)[name] = value;
    else ignored.push(name);
  }
  // A provider that caches by itself may write on any run, at its default lifetime; one that caches
  // where asked writes at the request's breakpoints, with their lifetimes.
  const cacheWrites: CacheTtl[] = CACHE_WRITES[at.provider] === 'automatic' ? ['5m'] : requestedCacheTtls(request.messages, request.tools);
  return { provider, call, ignored, cacheWrites };
}
