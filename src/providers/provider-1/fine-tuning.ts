/**
 * provider_1's files and fine-tuning jobs over HTTP (reference/providers.md §8):
 *   POST {base}/files                             multipart purpose=fine-tune, file
 *   POST {base}/fine_tuning/jobs                  create
 *   GET  {base}/fine_tuning/jobs/{id}             poll
 *   POST {base}/fine_tuning/jobs/{id}/cancel
 *   GET  {base}/fine_tuning/jobs/{id}/events       (after, limit)
 *   GET  {base}/fine_tuning/jobs/{id}/checkpoints  (after, limit)
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { GatewayError } from '../../shared/errors.ts';
import {
  FineTuningProviderError,
  type FineTuningEndpoint,
  type FineTuningProvider,
  type NewProviderJob,
  type PageQuery,
  type ProviderJob,
  type ProviderPage,
} from '../fine-tuning.ts';
import { callJson } from '../json-call.ts';
import { providerMessage, upstreamError } from '../upstream-errors.ts';
import { UpstreamPools } from '../upstream-pools.ts';

/** A call other than an upload that takes longer than this failed. */
const CALL_TIMEOUT_MS = 30_000;
/** An upload may take longer (files of tens of MB). */
const UPLOAD_TIMEOUT_MS = 300_000;

const jobSchema = z.object({
  id: z.string().min(1),
  status: z.enum(['validating_files', 'queued', 'running', 'succeeded', 'failed', 'cancelled']),
  trained_tokens: z.number().int().nonnegative().nullish(),
  fine_tuned_model: z.string().nullish(),
  finished_at: z.number().nullish(),
  error: z.object({ code: z.string().nullish(), message: z.string().nullish(), param: z.string().nullish() }).nullish(),
  hyperparameters: z.record(z.string(), z.unknown()).nullish(),
  seed: z.number().nullish(),
  estimated_finish: z.number().nullish(),
  result_files: z.array(z.string()).nullish(),
});

const fileSchema = z.object({ id: z.string().min(1) });
const pageSchema = z.object({ data: z.array(z.record(z.string(), z.unknown())), has_more: z.boolean().optional() });

function readJob(body: unknown): ProviderJob | undefined {
  const parsed = jobSchema.safeParse(body);
  if (!parsed.success) return undefined;
  const j = parsed.data;
  const error = j.error === null || j.error === undefined || (j.error.code == null && j.error.message == null)
    ? null
    : { code: j.error.code ?? 'error', message: j.error.message ?? '', param: j.error.param ?? null };
  return {
    id: j.id,
    status: j.status,
    trainedTokens: j.trained_tokens ?? null,
    fineTunedModel: j.fine_tuned_model ?? null,
    finishedAt: j.finished_at ?? null,
    error,
    hyperparameters: j.hyperparameters ?? {},
    seed: j.seed ?? null,
    estimatedFinish: j.estimated_finish ?? null,
    resultFiles: j.result_files ?? [],
  };
}

interface Call {
  method: 'GET' | 'POST';
  path: string;
  body?: string | Buffer;
  contentType?: string;
  signal?: AbortSignal;
  timeoutMs: number;
}

export class OpenAiFineTuningClient implements FineTuningProvider {
  private readonly pools = new UpstreamPools();

  async uploadFile(endpoint: FineTuningEndpoint, filename: string, bytes: Buffer, signal?: AbortSignal): Promise<string> {
    const boundary = `----gateway${randomBytes(12).toString('hex')}`;
    const safeName = filename.replace(/["\r\n]/g, '_');
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nfine-tune\r\n`),
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${safeName}"\r\nContent-Type: application/jsonl\r\n\r\n`),
      bytes,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const answer = await this.call(endpoint, { method: 'POST', path: '/files', body, contentType: `multipart/form-data; boundary=${boundary}`, signal, timeoutMs: UPLOAD_TIMEOUT_MS });
    const file = fileSchema.safeParse(answer);
    if (!file.success) throw unreadable();
    return file.data.id;
  }

  async createJob(endpoint: FineTuningEndpoint, job: NewProviderJob, signal?: AbortSignal): Promise<ProviderJob> {
    const body: Record<string, unknown> = { model: job.model, training_file: job.trainingFile, hyperparameters: job.hyperparameters };
    if (job.validationFile !== undefined) body.validation_file = job.validationFile;
    if (job.suffix !== undefined) body.suffix = job.suffix;
    if (job.seed !== undefined) body.seed = job.seed;
    return this.job(endpoint, { method: 'POST', path: '/fine_tuning/jobs', body: JSON.stringify(body), contentType: 'application/json', signal, timeoutMs: CALL_TIMEOUT_MS });
  }

  getJob(endpoint: FineTuningEndpoint, id: string, signal?: AbortSignal): Promise<ProviderJob> {
    return this.job(endpoint, { method: 'GET', path: `/fine_tuning/jobs/${encodeURIComponent(id)}`, signal, timeoutMs: CALL_TIMEOUT_MS });
  }

  cancelJob(endpoint: FineTuningEndpoint, id: string): Promise<ProviderJob> {
    return this.job(endpoint, { method: 'POST', path: `/fine_tuning/jobs/${encodeURIComponent(id)}/cancel`, timeoutMs: CALL_TIMEOUT_MS });
  }

  listEvents(endpoint: FineTuningEndpoint, id: string, query: PageQuery): Promise<ProviderPage> {
    return this.page(endpoint, `/fine_tuning/jobs/${encodeURIComponent(id)}/events`, query);
  }

  listCheckpoints(endpoint: FineTuningEndpoint, id: string, query: PageQuery): Promise<ProviderPage> {
    return this.page(endpoint, `/fine_tuning/jobs/${encodeURIComponent(id)}/checkpoints`, query);
  }

  async close(): Promise<void> {
    await this.pools.close();
  }

  private async job(endpoint: FineTuningEndpoint, call: Call): Promise<ProviderJob> {
    const job = readJob(await this.call(endpoint, call));
    if (job === undefined) throw unreadable();
    return job;
  }

  private async page(endpoint: FineTuningEndpoint, path: string, query: PageQuery): Promise<ProviderPage> {
    const search = new URLSearchParams();
    if (query.after !== undefined) search.set('after', query.after);
    if (query.limit !== undefined) search.set('limit', String(query.limit));
    const qs = search.size === 0 ? '' : `?${search.toString()}`;
    const parsed = pageSchema.safeParse(await this.call(endpoint, { method: 'GET', path: path + qs, timeoutMs: CALL_TIMEOUT_MS }));
    if (!parsed.success) throw unreadable();
    return { data: parsed.data.data, hasMore: parsed.data.has_more ?? false };
  }

  private async call(endpoint: FineTuningEndpoint, call: Call): Promise<unknown> {
    const headers: Record<string, string> = { authorization: `Bearer ${endpoint.apiKey}`, accept: 'application/json' };
    if (call.contentType !== undefined) headers['content-type'] = call.contentType;
    const { status, text, json } = await callJson(this.pools, endpoint.baseUrl, { method: call.method, path: call.path, headers, body: call.body, signal: call.signal, timeoutMs: call.timeoutMs });
    if (status < 200 || status >= 300) throw new FineTuningProviderError(status, upstreamError(status, providerMessage(json, text)));
    return json;
  }
}

function unreadable(): GatewayError {
  return new GatewayError('upstream_error', 'The fine-tuning provider sent an unreadable answer. Retry with backoff.');
}
