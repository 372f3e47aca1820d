/**
 * One JSON call to an upstream over its keep-alive pool, for the clients that poll jobs
 * (media hosts, fine-tuning): the answer's status, text and JSON (undefined when not JSON).
 * An abort is the caller's and is rethrown as is; a broken connection becomes
 * upstream_error (transportFailure).
 */
import type { UpstreamPools } from './upstream-pools.ts';
import { transportFailure } from './upstream-client.ts';

export interface JsonCall {
  method: 'GET' | 'POST';
  /** Appended to the base URL's path. */
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  signal?: AbortSignal;
  /** Headers and body timeout (0: none). */
  timeoutMs: number;
}

export interface JsonAnswer {
  status: number;
  text: string;
  json: unknown;
}

export async function callJson(pools: UpstreamPools, baseUrl: string, call: JsonCall): Promise<JsonAnswer> {
  const base = new URL(baseUrl);
  let status: number;
  let text: string;
  try {
    const response = await pools.of(base.origin).request({
      method: call.method,
      path: base.pathname.replace(/\/$/, '') + call.path,
      headers: call.headers,
      body: call.body,
      signal: call.signal,
      headersTimeout: call.timeoutMs,
      bodyTimeout: call.timeoutMs,
    });
    status = response.statusCode;
    text = await response.body.text();
  } catch (thrown) {
    // An abort is the caller's (its stop reason answers); a broken connection is the upstream's.
    if (call.signal?.aborted === true) throw thrown;
    throw transportFailure(thrown) ?? thrown;
  }
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status, text, json };
}
