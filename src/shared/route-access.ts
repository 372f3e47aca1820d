import type { Scope } from './scopes.ts';

/** How a route is reached: its scope, whether a key is required, and which answers carry rate-limit headers. */
export interface RouteAccess {
  /**
   * The scope the key needs; `route`: the gate checks only the key and the IP, and the
   * route names the scope once it knows what is asked (GET /jobs/{id}: `jobs`, or the
   * scope of the job's kind), then the request is counted (AccessGate.admit).
   */
  scope: Scope | 'route';
  /** optional: the route is public without a key; with one, the gate applies (GET /models). */
  auth: 'required' | 'optional';
  /**
   * always: every answer after the key check (chat);
   * never: only the 429 rate_limit_exceeded (GET /models, GET /jobs);
   * route: the route sets them where its rules say (images, embeddings, videos).
   */
  rateHeaders: 'always' | 'never' | 'route';
  /** 'x-api-key': the key may also come in `x-api-key`, as the Anthropic SDKs send it (the Messages route). */
  keyHeader?: 'x-api-key';
}
