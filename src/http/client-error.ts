/**
 * Errors Node's HTTP parser raises before any route is known (a header with a NUL or a
 * bare CR, obsolete line folding, a header section over the server's limit, a broken
 * request line, an ambiguous body length), answered in our error object (DECISIONS.md,
 * Rate limits and keys) instead of Fastify's own shape: a raw HTTP/1.1 answer written
 * to the socket while it can still carry one, then the connection is closed (the
 * stream can no longer be read).
 */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError, type ErrorCode } from '../shared/errors.ts';

interface ParserError extends Error {
  code?: string;
}

/** The error a parser error code stands for. */
export function clientErrorOf(code: string | undefined): GatewayError {
  let errorCode: ErrorCode = 'invalid_request';
  let message = 'The request could not be read: its request line or header syntax is malformed.';
  if (code === 'HPE_HEADER_OVERFLOW') {
    errorCode = 'request_header_fields_too_large';
    message = 'The request line and headers are larger than the server accepts.';
  } else if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    errorCode = 'request_timeout';
    message = 'The request was not received in time.';
  } else if (code === 'HPE_UNEXPECTED_CONTENT_LENGTH' || code === 'HPE_INVALID_TRANSFER_ENCODING' || code === 'HPE_INVALID_CONTENT_LENGTH' || code === 'HPE_INVALID_CHUNK_SIZE') {
    message = 'The request body length is ambiguous or malformed (Content-Length, Transfer-Encoding).';
  }
  // The route is not known yet: `param` is present (null) so chat clients find it.
  return new GatewayError(errorCode, message, { param: null });
}

/** The raw HTTP/1.1 answer for a parser error; the connection closes after it. */
export function clientErrorResponse(code: string | undefined): string {
  const error = clientErrorOf(code);
  const body = JSON.stringify(error.body());
  return [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * Node's 'clientError' handler (Fastify's `clientErrorHandler`). Writes only when the
 * socket is writable and no answer has started on it (as Node's own handler does).
 */
export function answerClientError(error: ParserError, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const current = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (socket.writable && (current === undefined || current === null || current.headersSent !== true)) {
    socket.end(clientErrorResponse(error.code));
    // The client may keep sending; the answer has gone, so the socket closes soon regardless.
    setTimeout(() => socket.destroy(), 1000).unref();
    return;
  }
  socket.destroy(error);
}

/**
 * Node's 'checkExpectation' handler: an `Expect` other than 100-continue. Without it Node
 * answers 417 with an empty body; with it, 417 expectation_failed in our error object.
 */
export function answerExpectationFailed(request: IncomingMessage, res: ServerResponse): void {
  const error = new GatewayError('expectation_failed', `The expectation '${String(request.headers.expect)}' cannot be met; only 100-continue is supported.`, { param: null });
  const body = JSON.stringify(error.body());
  res.writeHead(error.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
  res.end(body);
}

/**
 * Fastify's `frameworkErrors`: a URL the router cannot read (a malformed percent-escape,
 * FST_ERR_BAD_URL), answered like the parser errors above, before any route runs.
 */
export function answerFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const answer = new GatewayError('invalid_request', `The request URL cannot be read (${error.code}).`, { param: null });
  reply.code(answer.status).type('application/json; charset=utf-8').send(JSON.stringify(answer.body()));
}
