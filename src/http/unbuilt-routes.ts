/**
 * Routes the spec names whose own issue has not landed yet. They stand behind the
 * access gate with their scope from the start, so key, IP, scope and rate-limit
 * behaviour is right on every route; the handler answers 501 not_implemented.
 */
import type { FastifyInstance } from 'fastify';
import type { Scope } from '../shared/scopes.ts';
import { GatewayError } from '../shared/errors.ts';
import type { RouteAccess } from './server.ts';

interface UnbuiltRoute {
  method: 'GET' | 'POST';
  url: string;
  scope: Scope;
  rateHeaders: RouteAccess['rateHeaders'];
}

export const UNBUILT_ROUTES: readonly UnbuiltRoute[] = [
  { method: 'POST', url: '/api/v1/chat/completions', scope: 'chat', rateHeaders: 'always' },
  { method: 'POST', url: '/api/v1/audio/speech', scope: 'audio', rateHeaders: 'always' },
  { method: 'POST', url: '/api/v1/audio/transcriptions', scope: 'audio', rateHeaders: 'always' },
  { method: 'POST', url: '/api/v1/audio/uploads', scope: 'audio', rateHeaders: 'always' },
];

export function registerUnbuiltRoutes(app: FastifyInstance, routes: readonly UnbuiltRoute[]): void {
  for (const route of routes) {
    app.route({
      method: route.method,
      url: route.url,
      config: { access: { scope: route.scope, auth: 'required', rateHeaders: route.rateHeaders }, errorParam: route.scope === 'chat' },
      handler: async () => {
        throw new GatewayError('not_implemented', `${route.method} ${route.url.replace('/api/v1', '')} is not built yet.`);
      },
    });
  }
}
