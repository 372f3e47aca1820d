/**
 * POST /mcp: MCP over Streamable HTTP, stateless (a new server and transport per request, no
 * session) with JSON answers, on the official SDK. Open without a key; a key of any scope
 * raises the limits. In order: the key if one is sent (401 invalid_api_key, 403
 * ip_not_allowed, in our error object), the limits (429 in JSON-RPC), then the SDK.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AccessGate, type GateRequest } from '../gate/access-gate.ts';
import { noteOutcome } from '../shared/run-metrics.ts';
import type { McpCaller, McpLimits } from './limits.ts';
import { buildMcpServer, type McpToolDeps } from './tools.ts';

export interface McpRouteDeps {
  gate: AccessGate;
  limits: McpLimits;
  tools: McpToolDeps;
}

/** JSON-RPC bodies are small; a larger one is refused before it is read. */
const BODY_LIMIT = 1024 * 1024;

type JsonRpcId = string | number | null;

export async function registerMcpRoute(app: FastifyInstance, deps: McpRouteDeps): Promise<void> {
  // The SDK takes about a second to import: loaded here, so processes that never serve (the admin CLI) do not pay for it.
  const [{ McpServer }, { StreamableHTTPServerTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/mcp.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
  ]);
  await app.register(async (mcp) => {
    // The body is parsed here, so a parse error is answered in JSON-RPC (-32700), not as a REST error.
    mcp.removeAllContentTypeParsers();
    mcp.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));

    mcp.post('/mcp', { bodyLimit: BODY_LIMIT }, async (request, reply) => {
      const caller = await identify(request, deps.gate);
      if (caller.kind === 'account') noteOutcome(reply.raw, { keyId: caller.keyId });
      const text = typeof request.body === 'string' ? request.body : '';
      const message = parseJson(text);

      const refused = await deps.limits.admit(caller);
      if (refused !== undefined) {
        noteOutcome(reply.raw, { code: 'rate_limit_exceeded' });
        reply.headers({ 'retry-after': String(refused.resetSeconds), 'x-ratelimit-limit': String(refused.limit), 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(refused.resetSeconds) });
        return sendJsonRpcError(reply, 429, -32000, refused.message, idOf(message));
      }
      if (message === PARSE_ERROR) return sendJsonRpcError(reply, 400, -32700, 'Parse error: the body is not JSON.', null);

      const server = buildMcpServer(McpServer, deps.tools);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      try {
        await server.connect(transport);
        await transport.handleRequest(request.raw, reply.raw, message);
      } catch (error) {
        request.log.error({ err: error }, 'MCP request failed');
        if (!reply.raw.headersSent) {
          reply.raw.writeHead(500, { 'content-type': 'application/json' });
          reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: idOf(message) }));
        }
      }
    });
  });
}

async function identify(request: FastifyRequest, gate: AccessGate): Promise<McpCaller> {
  const gateRequest: GateRequest = {
    authorization: request.headers.authorization,
    socketAddress: request.socket.remoteAddress,
    forwardedFor: request.headers['x-forwarded-for'],
  };
  if (!AccessGate.hasCredentials(gateRequest)) {
    return { kind: 'anonymous', address: gate.clientAddress(gateRequest).text ?? 'unknown' };
  }
  const { key } = await gate.identify(gateRequest);
  return { kind: 'account', accountId: key.record.accountId, keyId: key.record.id };
}

const PARSE_ERROR = Symbol('parse error');

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return PARSE_ERROR;
  }
}

/** The request's id for an error answer: a single request's id, else null (a batch, a notification, unreadable). */
function idOf(message: unknown): JsonRpcId {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return null;
  const id = (message as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

function sendJsonRpcError(reply: FastifyReply, status: number, code: number, message: string, id: JsonRpcId): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id }));
}
