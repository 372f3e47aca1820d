/**
 * The headers of a run's answer, decided and checked before any money moves: what the
 * gate already set on the reply (rate limits) plus the route's own. A value that could
 * not be sent is a bug of ours, found here before the hold rather than after the run.
 */
import { validateHeaderValue } from 'node:http';
import type { FastifyReply } from 'fastify';

/** A header value, or a list of names joined with ", " (left out when empty). */
export type HeaderValue = string | readonly string[] | undefined;

export function answerHeaders(reply: FastifyReply, extra: Record<string, HeaderValue>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = String(value);
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) continue;
    if (typeof value !== 'string' && value.length === 0) continue;
    headers[name] = typeof value === 'string' ? value : value.join(', ');
  }
  for (const [name, value] of Object.entries(headers)) validateHeaderValue(name, value);
  return headers;
}
