/**
 * The predictions protocol over HTTP: one keep-alive undici pool per host origin.
 *   create  POST {base}/models/{owner}/{name}/predictions  {input}   (Prefer: wait=N)
 *   poll    GET  {base}/predictions/{id}
 *   cancel  POST {base}/predictions/{id}/cancel
 */
import { UpstreamPools } from '../upstream-pools.ts';
import { GatewayError } from '../../shared/errors.ts';
import { callJson } from '../json-call.ts';
import { upstreamError } from '../upstream-errors.ts';
import { HostError, type CreateOptions, type HostEndpoint, type MediaHost, type Prediction } from './media-host.ts';
import { hostMessage, readPrediction } from './wire.ts';

/** A poll or cancel that takes longer than this failed (creates are bounded by the run's provider wait instead). */
const POLL_TIMEOUT_MS = 30_000;

interface Call {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  timeoutMs: number;
}

export class PredictionsClient implements MediaHost {
  private readonly pools = new UpstreamPools();

  create(endpoint: HostEndpoint, model: string, input: Record<string, unknown>, options: CreateOptions = {}): Promise<Prediction> {
    const path = `/models/${model.split('/').map(encodeURIComponent).join('/')}/predictions`;
    const headers: Record<string, string> = {};
    if (options.waitSeconds !== undefined) headers.prefer = `wait=${Math.min(60, Math.max(1, Math.ceil(options.waitSeconds)))}`;
    return this.call(endpoint, { method: 'POST', path, body: { input }, headers, signal: options.signal, timeoutMs: 0 });
  }

  get(endpoint: HostEndpoint, id: string, signal?: AbortSignal): Promise<Prediction> {
    return this.call(endpoint, { method: 'GET', path: `/predictions/${encodeURIComponent(id)}`, signal, timeoutMs: POLL_TIMEOUT_MS });
  }

  cancel(endpoint: HostEndpoint, id: string, signal?: AbortSignal): Promise<Prediction> {
    return this.call(endpoint, { method: 'POST', path: `/predictions/${encodeURIComponent(id)}/cancel`, signal, timeoutMs: POLL_TIMEOUT_MS });
  }

  async close(): Promise<void> {
    await this.pools.close();
  }

  private async call(endpoint: HostEndpoint, call: Call): Promise<Prediction> {
    const headers: Record<string, string> = { authorization: `Bearer ${endpoint.apiKey}`, accept: 'application/json', ...call.headers };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    const { status, text, json } = await callJson(this.pools, endpoint.baseUrl, { method: call.method, path: call.path, headers, body, signal: call.signal, timeoutMs: call.timeoutMs });
    if (status < 200 || status >= 300) throw new HostError(status, upstreamError(status, hostMessage(json, text)));
    const prediction = readPrediction(json);
    if (prediction === undefined) throw new GatewayError('upstream_error', 'The media host sent an unreadable answer. Retry with backoff.');
    return prediction;
  }

}
