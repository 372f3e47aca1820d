/**
 * The OpenAI Embeddings wire format (provider_1): `POST {base}/embeddings` with
 * `{model, input, encoding_format, dimensions?, user?}`, answered with
 * `{object:'list', data:[{object:'embedding', index, embedding}], model, usage}`.
 */
import { GatewayError } from '../../shared/errors.ts';
import type { Vector } from '../../shared/embeddings-wire.ts';
import type { UpstreamRequest } from '../adapter.ts';
import type { EmbeddingsAdapter, EmbeddingsCall, ProviderEmbeddings } from '../embeddings-adapter.ts';
import { providerMessage, upstreamError } from '../upstream-errors.ts';

const unreadable = (why: string) => new GatewayError('upstream_error', `The model provider sent an answer without readable vectors (${why}). Nothing was charged; retry.`);

export class OpenAiEmbeddingsAdapter implements EmbeddingsAdapter {
  buildRequest(call: EmbeddingsCall, apiKey: string): UpstreamRequest {
    const body: Record<string, unknown> = { model: call.providerModelId, input: call.input, encoding_format: call.encoding };
    if (call.dimensions !== undefined) body.dimensions = call.dimensions;
    if (call.user !== undefined) body.user = call.user;
    return {
      path: '/embeddings',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    };
  }

  parseResponse(body: unknown): ProviderEmbeddings {
    if (typeof body !== 'object' || body === null) throw unreadable('not a JSON object');
    const data = (body as { data?: unknown }).data;
    if (!Array.isArray(data)) throw unreadable('no data list');
    // Items are placed by their index: each of 0 … n−1 exactly once.
    const vectors = new Array<Vector | undefined>(data.length);
    for (const item of data as unknown[]) {
      const index = (item as { index?: unknown } | null)?.index;
      const embedding = (item as { embedding?: unknown } | null)?.embedding;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= data.length || vectors[index] !== undefined) {
        throw unreadable('item indexes are not 0 … n−1');
      }
      if (typeof embedding !== 'string' && !Array.isArray(embedding)) throw unreadable(`item ${index} has no embedding`);
      vectors[index] = embedding as Vector;
    }
    const usage = (body as { usage?: { prompt_tokens?: unknown } }).usage;
    const prompt = usage?.prompt_tokens;
    return {
      vectors: vectors as Vector[],
      promptTokens: typeof prompt === 'number' && Number.isInteger(prompt) && prompt >= 0 ? prompt : undefined,
    };
  }

  mapError(status: number, body: unknown, text: string): GatewayError {
    return upstreamError(status, providerMessage(body, text), 'provider_rejected_input');
  }
}
