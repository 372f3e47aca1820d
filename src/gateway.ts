/**
 * Wiring in one place: configuration → store, caches, gate, services → HTTP routes.
 * Every route module receives what it needs here; nothing reaches for globals.
 */
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { registerAdminRoutes } from './admin/routes.ts';
import { Catalog } from './catalog/catalog.ts';
import { registerCatalogRoutes } from './catalog/routes.ts';
import type { Config } from './config.ts';
import { AccessGate } from './gate/access-gate.ts';
import { KeyCache } from './gate/key-cache.ts';
import { MemoryRateLimiter, type RateLimiter } from './gate/rate-limit/rate-limiter.ts';
import { createServer } from './http/server.ts';
import { registerUnbuiltRoutes, UNBUILT_ROUTES } from './http/unbuilt-routes.ts';
import { KeyEvents } from './keys/key-events.ts';
import { KeyService } from './keys/key-service.ts';
import { openStore } from './store/open-store.ts';
import type { Store } from './store/types.ts';

export interface Gateway {
  app: FastifyInstance;
  store: Store;
  keyEvents: KeyEvents;
  keys: KeyService;
  config: Config;
  catalog: Catalog;
  close(): Promise<void>;
}

export interface GatewayOverrides {
  store?: Store;
  rateLimiter?: RateLimiter;
}

export async function createGateway(config: Config, overrides: GatewayOverrides = {}): Promise<Gateway> {
  const logger = pino({
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.apiKey', 'authorization'], censor: '[redacted]' },
  });
  // The catalog is checked before anything else starts: a bad entry stops start-up.
  const catalog = Catalog.fromFile(config.catalogFile, {
    providerHasCredentials: (provider) => provider in config.providers && config.providers[provider as keyof Config['providers']].apiKey !== undefined,
  });
  const store = overrides.store ?? (await openStore(config.databaseUrl));
  const keyEvents = new KeyEvents();
  const keys = new KeyService(store, keyEvents);
  const gate = new AccessGate(new KeyCache(store, keyEvents), overrides.rateLimiter ?? new MemoryRateLimiter(), config.trustProxy);
  const app = createServer({ logger, bodyLimitBytes: config.bodyLimitBytes, gate });

  registerCatalogRoutes(app, catalog);
  registerUnbuiltRoutes(app, UNBUILT_ROUTES);
  if (config.adminToken !== undefined) await registerAdminRoutes(app, { adminToken: config.adminToken, store, keys });

  await app.ready();
  return {
    app,
    store,
    keyEvents,
    keys,
    config,
    catalog,
    async close() {
      await app.close();
      if (overrides.store === undefined) await store.close();
    },
  };
}
