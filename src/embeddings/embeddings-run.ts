/**
 * The embeddings run inside the paid-run core: the hold (a real token count of the
 * inputs), the upstream call, the vectors checked against what was asked, and the
 * settlement on the provider's reported usage. The answer is synchronous: the vectors
 * exist only in it. A failure is refunded in full; the core owns the abort signal
 * (timeout, key revoked) and the exactly-once settle or refund.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { PaidRun } from '../billing/paid-run.ts';
import { countTextTokens, tokenCost } from '../billing/tokens.ts';
import type { EmbeddingsAdapter } from '../providers/embeddings-adapter.ts';
import { callProvider, prepareRoute, runFailure, type CallTarget, type ProviderRoute } from '../providers/provider-call.ts';
import { readJsonBody, type UpstreamClient, type UpstreamResponse } from '../providers/upstream-client.ts';
import type { Routing } from '../routing/routing.ts';
import type { EmbeddingsInput, Vector } from '../shared/embeddings-wire.ts';
import { GatewayError } from '../shared/errors.ts';
import type { RunnableEmbeddings } from './embeddings-request.ts';

export interface EmbeddingsAnswer {
  object: 'list';
  data: { object: 'embedding'; index: number; embedding: Vector }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

export type EmbeddingsOutcome = { ok: true; answer: EmbeddingsAnswer } | { ok: false; error: GatewayError };

export interface EmbeddingsRunDeps {
  upstream: UpstreamClient;
  routing: Routing;
  logger: FastifyBaseLogger;
  /** The request's raw response: its log line lists the attempts. */
  response: object;
}

interface EmbeddingsTarget extends CallTarget {
  adapter: EmbeddingsAdapter;
}

/** The texts of the input (token ids are counted, not read). */
function textsOf(input: EmbeddingsInput): string[] {
  if (typeof input === 'string') return [input];
  return typeof input[0] === 'string' ? (input as string[]) : [];
}

function tokenIdsIn(input: EmbeddingsInput): number {
  if (typeof input === 'string' || typeof input[0] === 'string') return 0;
  if (typeof input[0] === 'number') return input.length;
  return (input as number[][]).reduce((n, ids) => n + ids.length, 0);
}

export interface QuotedEmbeddings extends RunnableEmbeddings {
  /** Input tokens by a real tokenizer (token ids as they are): what is held. */
  inputTokens: number;
  /** The hold in micro-credits. */
  quote: number;
  /** The provider request, built before the hold. */
  route: ProviderRoute<EmbeddingsTarget>;
}

/** The provider request (built here, before the hold) and the hold: input tokens by a real tokenizer (token ids as they are) at the model's input price. */
export async function quoteEmbeddings(job: RunnableEmbeddings): Promise<QuotedEmbeddings> {
  const call = { providerModelId: job.model.entry.provider_model_id, input: job.request.input, encoding: job.request.encoding, dimensions: job.request.dimensions, user: job.request.user };
  const adapter = job.adapter;
  const target: EmbeddingsTarget = {
    provider: job.model.entry.provider,
    providerModelId: call.providerModelId,
    adapter,
    build: (apiKey) => adapter.buildRequest(call, apiKey),
    mapError: (status, body, text) => adapter.mapError(status, body, text),
  };
  const route = prepareRoute('embeddings', job.request.model, [{ model: job.model.entry.slug, deployments: [{ target, weight: 1, priority: 0 }] }]);
  const inputTokens = (await countTextTokens(textsOf(job.request.input))) + tokenIdsIn(job.request.input);
  return { ...job, inputTokens, quote: tokenCost(job.prices, { input: inputTokens, output: 0 }), route };
}

/**
 * Where the provider reports no usage: about 4 characters per token (DECISIONS.md
 * Billing), token ids as they are, never above what was held (the charge is capped
 * there anyway, and the usage shown is what was billed).
 */
function estimatedTokens(job: QuotedEmbeddings): number {
  const chars = textsOf(job.request.input).reduce((n, text) => n + text.length, 0);
  return Math.min(job.inputTokens, Math.ceil(chars / 4) + tokenIdsIn(job.request.input));
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function base64Bytes(text: string): number | undefined {
  if (text.length % 4 !== 0 || !BASE64.test(text)) return undefined;
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return (text.length / 4) * 3 - padding;
}

/** Every vector readable and of the asked size and encoding, one per input; otherwise 502 upstream_error. */
function checkVectors(vectors: Vector[], job: RunnableEmbeddings): void {
  const unreadable = (why: string) => new GatewayError('upstream_error', `The model provider sent an answer without readable vectors (${why}). Nothing was charged; retry.`);
  if (vectors.length !== job.count) throw unreadable(`${vectors.length} vectors for ${job.count} inputs`);
  const size = job.dimensions;
  vectors.forEach((vector, index) => {
    if (job.request.encoding === 'base64') {
      if (typeof vector !== 'string' || base64Bytes(vector) !== size * 4) throw unreadable(`vector ${index} is not ${size} base64 float32 values`);
      return;
    }
    if (!Array.isArray(vector) || vector.length !== size || !vector.every((x) => typeof x === 'number')) {
      throw unreadable(`vector ${index} is not ${size} numbers`);
    }
  });
}

async function readEmbeddings(response: UpstreamResponse, target: EmbeddingsTarget) {
  return target.adapter.parseResponse(await readJsonBody(response));
}

/** The run: answered and settled, or failed and refunded in full (the error to answer with). */
export async function runEmbeddings(run: PaidRun, job: QuotedEmbeddings, deps: EmbeddingsRunDeps): Promise<EmbeddingsOutcome> {
  try {
    const embeddings = (await callProvider(run, job.route, deps, readEmbeddings)).value;
    run.throwIfStopped();
    checkVectors(embeddings.vectors, job);
    const promptTokens = embeddings.promptTokens ?? estimatedTokens(job);
    await run.settle(
      tokenCost(job.prices, { input: promptTokens, output: 0 }),
      { prompt_tokens: promptTokens, total_tokens: promptTokens },
      'succeeded',
      { count: job.count, dimensions: job.dimensions },
    );
    return {
      ok: true,
      answer: {
        object: 'list',
        data: embeddings.vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
        model: job.model.entry.provider_model_id,
        usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
      },
    };
  } catch (thrown) {
    const error = runFailure(run, thrown);
    await run.refund(error);
    return { ok: false, error };
  }
}
