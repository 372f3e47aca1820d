/**
 * Upstream failures → our error codes (spec chat error table, DECISIONS.md Errors):
 * 400/413/422 → provider_rejected_request (embeddings: provider_rejected_input; message
 * passed through, ≤ 500 characters);
 * 429 → upstream_rate_limited; 5xx (Anthropic's 529 too) → upstream_error;
 * our credentials refused or the model unknown upstream (401, 402, 403, 404) →
 * model_unavailable, an operator error the client cannot fix.
 */
import { GatewayError } from '../shared/errors.ts';

export const MAX_PASSED_MESSAGE = 500;

/** Errors made for a provider refusing the gateway's key (401, 403, or an adapter's equivalent): the key rests, the next one is tried. */
const REFUSED_KEYS = new WeakSet<GatewayError>();

export function isKeyRefusal(error: GatewayError): boolean {
  return REFUSED_KEYS.has(error);
}

/**
 * `rejected` is the code of a provider's 400/413/422: chat's provider_rejected_request,
 * embeddings' provider_rejected_input.
 */
export function upstreamError(
  status: number,
  providerMessage: string | undefined,
  rejected: 'provider_rejected_request' | 'provider_rejected_input' = 'provider_rejected_request',
): GatewayError {
  const message = (providerMessage ?? '').slice(0, MAX_PASSED_MESSAGE);
  const logCause = `the provider answered HTTP ${status}${CAUSES[status] ?? ''}`;
  if (status === 400 || status === 413 || status === 422) {
    return new GatewayError(rejected, message === '' ? `The provider refused the request (HTTP ${status}).` : message, { logCause });
  }
  if (status === 429) return new GatewayError('upstream_rate_limited', 'The model provider is throttling requests. Retry with exponential backoff.', { logCause });
  if (status === 401 || status === 402 || status === 403 || status === 404) {
    const error = new GatewayError('model_unavailable', "The model cannot run now: its provider refused the gateway's API key or does not know the model. Choose another model until the gateway's operator fixes it.", { logCause });
    if (status === 401 || status === 403) REFUSED_KEYS.add(error);
    return error;
  }
  return new GatewayError('upstream_error', `The model provider failed (HTTP ${status}). Retry with backoff.`, { logCause });
}

/** What a status says the operator should look at (the provider's own message may echo part of the key: not logged). */
const CAUSES: Partial<Record<number, string>> = {
  401: ': it refused the API key (check the PROVIDER_…_API_KEY)',
  402: ': the provider account has no funds or plan for this',
  403: ': it refused the API key for this model or region',
  404: ': it does not know the model (or the base URL is wrong)',
};

/** The provider's own message, wherever its error shape keeps it. */
export function providerMessage(body: unknown, text: string): string | undefined {
  if (typeof body === 'object' && body !== null) {
    const error = (body as { error?: unknown }).error;
    if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') {
      return (error as { message: string }).message;
    }
    if (typeof error === 'string') return error;
    if (typeof (body as { message?: unknown }).message === 'string') return (body as { message: string }).message;
  }
  return text === '' ? undefined : text;
}

/** `cause`: what failed (refused, unknown host, reset), for the log line. */
export function connectionFailed(cause = 'the connection failed'): GatewayError {
  return new GatewayError('upstream_error', 'The connection to the model provider failed. Retry with backoff.', { logCause: cause });
}

export function streamBroken(): GatewayError {
  return new GatewayError('upstream_error', 'The model provider ended the stream early. Retry with backoff.', { logCause: 'the provider ended the stream early' });
}
