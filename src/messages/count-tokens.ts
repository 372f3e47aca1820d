/**
 * POST /api/v1/messages/count_tokens: the input tokens a Messages request would be held for (the
 * model's tokenizer estimate with its images and PDF pages, as the hold counts them). Free: no
 * job, no hold; the request still counts toward the key's requests per minute.
 */
import { prepareChatRequest, priceCandidates } from '../chat/admission.ts';
import type { MediaLimits } from '../chat/media/media-hold.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { AdapterTable } from '../providers/registry.ts';
import { isObject, parseMessagesRequest } from './messages-request.ts';
import { toChatRequest } from './to-chat.ts';
import { namedAsSent } from './admission.ts';

export async function countTokens(body: unknown, catalog: Catalog, adapters: AdapterTable, media: MediaLimits): Promise<number> {
  // The body has no max_tokens; the count never depends on it.
  const request = parseMessagesRequest(isObject(body) ? { ...body, max_tokens: 1, stream: false } : body);
  const translation = toChatRequest(request);
  const { priced } = await namedAsSent(translation, async () => priceCandidates(prepareChatRequest(translation.chat, catalog, adapters), media));
  return priced[0]?.inputTokens ?? 0;
}
