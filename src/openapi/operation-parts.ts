/**
 * The shape of one documented route (`Operation`), the tags, and the small builders the
 * operation tables share.
 */
import type { ErrorCode } from '../shared/errors.ts';
import type { Scope } from '../shared/scopes.ts';

export type Json = Record<string, unknown>;

export interface Operation {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** The Fastify route pattern (`:param`, `*`). */
  route: string;
  /** The OpenAPI path (`{param}`). */
  path: string;
  operationId: string;
  summary: string;
  description: string;
  tag: string;
  security: 'none' | 'apiKey' | 'optionalApiKey' | 'admin' | 'metrics' | 'portal' | 'messagesKey';
  scope?: Scope;
  parameters?: Json[];
  body?: Json;
  /** Success (and other non-error) answers. */
  ok: { status: number | '4XX'; description: string; headers?: string[]; content?: Json }[];
  errors: ErrorCode[];
  /** Headers on every error answer except 401 (chat: the rate-limit headers come on every answer after the key check). */
  errorHeaders?: string[];
  /** The error body's schema where a route answers in another format's envelope (default `Error`). */
  errorSchema?: string;
}

export const TAGS = [
  { name: 'Chat', description: 'Chat completions in the widely used chat-completions format: streaming, tools, structured output.' },
  { name: 'Models', description: 'The public model catalog: free, no key needed.' },
  { name: 'Messages', description: 'The Anthropic Messages format, for Claude Code and the Anthropic SDKs (base URL: the gateway\'s origin + `/api`), on every chat model.' },
  { name: 'Embeddings', description: 'Embeddings in the widely used embeddings format.' },
  { name: 'Media', description: 'Images, videos, speech, transcription and voice-sample uploads.' },
  { name: 'Jobs', description: 'Polling runs by job id.' },
  { name: 'Fine-tuning', description: 'Fine-tuning jobs on provider_1 models.' },
  { name: 'MCP', description: 'The tool-protocol endpoint: Model Context Protocol over Streamable HTTP, read-only tools for the catalog, prices and these docs.' },
  { name: 'Documentation', description: 'This document and its rendering.' },
  { name: 'Operations', description: 'Prometheus metrics for operators.' },
  { name: 'Portal', description: 'The customer portal\'s API, for the members of an account: a session cookie from an e-mail link or OpenID Connect, and the CSRF token on every change.' },
  { name: 'Payments', description: 'Stripe\'s webhook: credit purchases through Stripe Checkout, refunds.' },
  { name: 'Admin', description: 'Accounts, credits and keys, for operators (only when ADMIN_TOKEN is set; otherwise every /admin route answers 404).' },
];

export const GATE: ErrorCode[] = ['invalid_api_key', 'ip_not_allowed', 'insufficient_scope', 'rate_limit_exceeded'];
export const RATE_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];
export const json = (schema: Json) => ({ 'application/json': { schema } });
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const body = (schema: Json, description?: string) => ({ required: true, description, content: json(schema) });
export const pathParam = (name: string, description: string, schema: Json = { type: 'string' }) => ({ name, in: 'path', required: true, description, schema });
