/**
 * The HTTP server: Fastify with the access gate as an onRequest hook (so key, IP,
 * scope and rate limit are checked before the body is read, in the spec's order),
 * and one renderer for every error, including unknown routes, bad JSON, oversized
 * bodies, wrong methods and unexpected exceptions.
 */
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { FastifyBaseLogger } from 'fastify';
import { AccessGate, RefusedAfterKey, authorizationWithApiKey, rateLimitHeaders, type GatePass, type KeyPass } from '../gate/access-gate.ts';
import type { RouteAccess } from '../shared/route-access.ts';
import { GatewayError, internalError } from '../shared/errors.ts';
import { answerClientError, answerExpectationFailed, answerFrameworkError } from './client-error.ts';
import { noteOutcome } from '../shared/run-metrics.ts';

export type { RouteAccess } from '../shared/route-access.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
    /** Chat errors carry `param` (null when no field is at fault). */
    errorParam?: boolean;
    /** A door whose clients read another format's error body (Messages: Anthropic's envelope) renders it here. */
    errorEnvelope?: (error: GatewayError) => unknown;
  }
  interface FastifyRequest {
    gate: GatePass | undefined;
    /** Routes whose scope the route decides (`scope: 'route'`): the key past the key and IP checks, not counted yet. */
    keyPass: KeyPass | undefined;
  }
  interface FastifyInstance {
    /** Every registered route (method and pattern; HEAD and OPTIONS left out), for the OpenAPI coverage check. */
    registeredRoutes(): { method: string; url: string }[];
  }
}

export interface ServerOptions {
  logger: FastifyBaseLogger;
  bodyLimitBytes: number;
  gate: AccessGate;
}

export function createServer(options: ServerOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: options.logger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimitBytes,
    return503OnClosing: false,
    // A path parameter may be as long as a request line can be: an unknown id is a 404, not a router error.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 16_384 },
    keepAliveTimeout: 65_000,
    // Parser errors (before routing) answer in our error object, not Fastify's.
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
  });

  app.server.on('checkExpectation', answerExpectationFailed);
  app.decorateRequest('gate', undefined);
  app.decorateRequest('keyPass', undefined);
  const { allowedMethods, registered } = routeTable(app);
  app.decorate('registeredRoutes', () => registered.map((r) => ({ ...r })));

  // One content-type rule for every JSON route (docs/api/overview.md, "Bodies"): a body is read as JSON when
  // it is sent as application/json or with no Content-Type at all; any other type is 415 unsupported_media_type
  // saying what to send. An empty body is no body. (The multipart routes and /mcp have their own parsers.)
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/json', '*'], { parseAs: 'string' }, (request, body, done) => {
    const declared = request.headers['content-type'];
    if (declared !== undefined && contentTypeRule.mediaTypeOf(declared) !== 'application/json') return done(contentTypeRule.refusal(declared), undefined);
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new GatewayError('invalid_json', 'The request body is not valid JSON.'), undefined);
    }
  });

  app.addHook('onRequest', async (request, reply) => {
    const access = request.routeOptions.config.access;
    if (access === undefined) return;
    const gateRequest = {
      authorization: access.keyHeader === 'x-api-key' ? authorizationWithApiKey(request.headers.authorization, request.headers['x-api-key']) : request.headers.authorization,
      socketAddress: request.socket.remoteAddress,
      forwardedFor: request.headers['x-forwarded-for'],
    };
    if (access.auth === 'optional' && !AccessGate.hasCredentials(gateRequest)) return;
    if (access.scope === 'route') {
      request.keyPass = await options.gate.identify(gateRequest);
      return;
    }
    request.gate = await options.gate.check(gateRequest, access.scope);
    if (access.rateHeaders === 'always') reply.headers(rateLimitHeaders(request.gate.rate));
  });

  app.setErrorHandler((error: FastifyError | GatewayError | RefusedAfterKey | Error, request, reply) => {
    // A 403 after the key check carries the key's window state for routes that send rate-limit headers on every answer.
    if (error instanceof RefusedAfterKey) {
      if (request.routeOptions.config.access?.rateHeaders === 'always') reply.headers(rateLimitHeaders(error.rate));
      error = error.error;
    }
    // A client that hangs up while sending its body is no fault of ours: one info line, no stack.
    if (!request.raw.complete && (request.raw.socket?.destroyed ?? true)) {
      request.log.info({ url: request.url, method: request.method }, 'the client closed the connection while sending its body');
      sendError(reply, new GatewayError('client_closed_request', 'The client closed the connection before its body was read.'), false, request.routeOptions.config.errorEnvelope);
      return;
    }
    const gatewayError = toGatewayError(error, request);
    if (gatewayError.code === 'internal_error') {
      request.log.error({ err: error, url: request.url, method: request.method }, 'unexpected error');
    }
    sendError(reply, gatewayError, request.routeOptions.config.errorParam === true, request.routeOptions.config.errorEnvelope);
  });

  app.setNotFoundHandler((request, reply) => {
    const allowed = allowedMethods(request.method, pathOf(request.url));
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      sendError(reply, new GatewayError('method_not_allowed', `Method ${request.method} is not allowed on ${pathOf(request.url)}. Allowed: ${allowed.join(', ')}.`), false);
      return;
    }
    sendError(reply, new GatewayError('not_found', `No route ${request.method} ${pathOf(request.url)}.`), false);
  });

  return app;
}

export function sendError(reply: FastifyReply, error: GatewayError, withParam: boolean, envelope?: (error: GatewayError) => unknown): void {
  noteOutcome(reply.raw, { code: error.code, ...(error.logCause === undefined ? {} : { cause: error.logCause }) });
  if (error.headers !== undefined) reply.headers(error.headers);
  if (envelope !== undefined) {
    reply.code(error.status).type('application/json; charset=utf-8').send(envelope(error));
    return;
  }
  const body = error.body();
  if (withParam && body.error.param === undefined) body.error.param = null;
  reply.code(error.status).type('application/json; charset=utf-8').send(body);
}

function toGatewayError(error: FastifyError | GatewayError | Error, request: FastifyRequest): GatewayError {
  if (error instanceof GatewayError) return error;
  const code = 'code' in error ? error.code : undefined;
  switch (code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new GatewayError('invalid_json', 'The request body is not valid JSON.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError('invalid_json', 'The request body is empty; a JSON object is required.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError('payload_too_large', `The request body is larger than ${request.routeOptions.bodyLimit ?? 'the limit'} bytes.`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return contentTypeRule.refusal(request.headers['content-type'] ?? '');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError('invalid_request', 'The request body size did not match Content-Length.');
  }
  if (error instanceof SyntaxError && 'statusCode' in error && error.statusCode === 400) {
    return new GatewayError('invalid_json', 'The request body is not valid JSON.');
  }
  return internalError();
}

/** Every registered route as a pattern, so a wrong method answers 405 with `Allow`. */
function routeTable(app: FastifyInstance): { allowedMethods: (method: string, path: string) => string[]; registered: { method: string; url: string }[] } {
  const routes: { methods: string[]; pattern: RegExp }[] = [];
  const registered: { method: string; url: string }[] = [];
  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((m) => m !== 'HEAD' && m !== 'OPTIONS');
    const escaped = route.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+');
    routes.push({ methods, pattern: new RegExp(`^${escaped}/?$`) });
    for (const method of methods) registered.push({ method, url: route.url });
  });
  const allowedMethods = (method: string, path: string) => {
    const allowed = new Set<string>();
    for (const route of routes) if (route.pattern.test(path)) for (const m of route.methods) allowed.add(m);
    allowed.delete(method);
    return [...allowed];
  };
  return { allowedMethods, registered };
}

/** The JSON routes' content-type rule: the media type a Content-Type names, and the 415 for any but JSON. */
export const contentTypeRule = {
  mediaTypeOf(header: string): string {
    return (header.split(';')[0] ?? '').trim().toLowerCase();
  },
  refusal(header: string): GatewayError {
    const said = header.replace(/[^\x20-\x7e]/g, '?').slice(0, 100);
    return new GatewayError('unsupported_media_type', `This route takes a JSON body: send it with Content-Type: application/json (the request said '${said}').`);
  },
};

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}
