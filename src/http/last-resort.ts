/**
 * The last resort for an answer whose run failed outside its own error handling (a
 * store failure while settling, say): the client still gets an end, never a hang.
 * Before the status line, a 500 internal_error in our error object; after it, the
 * connection is closed, which a client reads as an incomplete answer.
 */
import type { ServerResponse } from 'node:http';
import { internalError, type GatewayError } from '../shared/errors.ts';

export function endUnfinishedAnswer(res: ServerResponse, headers: Record<string, string>, withParam: boolean, envelope?: (error: GatewayError) => unknown): void {
  if (res.writableEnded || res.destroyed) return;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const error = internalError();
  const plain = error.body();
  if (withParam) plain.error.param = null;
  const body = envelope === undefined ? plain : envelope(error);
  try {
    res.writeHead(500, { ...headers, 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(body));
  } catch {
    res.destroy();
  }
}
