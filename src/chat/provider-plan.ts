/**
 * The provider plan: which request fields reach the provider, per the spec's
 * per-provider F/S/D table and the model's routing facts. Everything dropped is
 * named for X-Service-Ignored-Params.
 */
import type { ChatProviderId, OptionalChatParam } from '../catalog/catalog-file.ts';
import type { CatalogModel } from '../catalog/catalog.ts';
import type { ProviderCall } from '../providers/adapter.ts';
import type { ChatRequest } from './chat-request.ts';

/** F: forwarded; S: forwarded when the model takes it; D: dropped. */
type Cell = 'F' | 'S' | 'D';
type PlannedParam = 'temperature' | 'top_p' | 'seed' | 'frequency_penalty' | 'presence_penalty' | 'logit_bias' | 'parallel_tool_calls' | 'user' | 'reasoning_effort' | 'verbosity';

const TABLE: Record<PlannedParam, Record<ChatProviderId, Cell>> = {
  temperature: { provider_1: 'S', provider_2: 'S', provider_3: 'F', provider_7: 'F' },
  top_p: { provider_1: 'S', provider_2: 'S', provider_3: 'F', provider_7: 'F' },
  seed: { provider_1: 'F', provider_2: 'D', provider_3: 'F', provider_7: 'D' },
  frequency_penalty: { provider_1: 'S', provider_2: 'D', provider_3: 'F', provider_7: 'F' },
  presence_penalty: { provider_1: 'S', provider_2: 'D', provider_3: 'F', provider_7: 'F' },
  logit_bias: { provider_1: 'S', provider_2: 'D', provider_3: 'D', provider_7: 'D' },
  parallel_tool_calls: { provider_1: 'F', provider_2: 'F', provider_3: 'D', provider_7: 'D' },
  user: { provider_1: 'F', provider_2: 'D', provider_3: 'D', provider_7: 'D' },
  reasoning_effort: { provider_1: 'S', provider_2: 'D', provider_3: 'D', provider_7: 'D' },
  verbosity: { provider_1: 'S', provider_2: 'D', provider_3: 'D', provider_7: 'D' },
};

export const DEFAULT_MAX_TOKENS = 4096;

export interface ProviderPlan {
  provider: ChatProviderId;
  call: ProviderCall;
  /** Names for X-Service-Ignored-Params, in request order then table order. */
  ignored: string[];
}

export function planProviderCall(request: ChatRequest, model: CatalogModel): ProviderPlan {
  const entry = model.entry;
  const routing = entry.chat;
  if (routing === undefined) throw new Error(`planProviderCall: ${entry.slug} has no chat routing facts`);
  const provider = entry.provider as ChatProviderId;
  const requested = request.maxTokens ?? DEFAULT_MAX_TOKENS;
  const call: ProviderCall = {
    providerModelId: entry.provider_model_id,
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
  for (const name of Object.keys(TABLE) as PlannedParam[]) {
    const value = request[name];
    if (value === undefined) continue;
    const cell = TABLE[name][provider];
    const takes = cell === 'F' || (cell === 'S' && routing.params.includes(name as OptionalChatParam));
    // Models that refuse temperature and top_p together keep temperature.
    const excluded = name === 'top_p' && routing.exclusive_sampling && call.temperature !== undefined;
    if (takes && !excluded) (call as unknown as Record<string, unknown>)[name] = value;
    else ignored.push(name);
  }
  return { provider, call, ignored };
}
