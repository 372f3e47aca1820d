/**
 * Wiring in one place: configuration → store, caches, gate, services → HTTP routes.
 * Every route module receives what it needs here; nothing reaches for globals.
 */
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { registerAdminRoutes } from './admin/routes.ts';
import { Catalog } from './catalog/catalog.ts';
import { InFlightRuns } from './billing/in-flight.ts';
import { PaidRuns } from './billing/paid-run.ts';
import type { ProviderId } from './catalog/catalog-file.ts';
import { registerChatRoute } from './chat/route.ts';
import { chatProviderIds, describedProviderIds, PROVIDERS } from './providers/descriptors.ts';
import { defaultAdapters, type AdapterTable } from './providers/registry.ts';
import { UpstreamClient } from './providers/upstream-client.ts';
import { randomUUID } from 'node:crypto';
import { HEARTBEAT_MS, OrphanRecovery } from './billing/orphan-recovery.ts';
import { registerCatalogRoutes } from './catalog/routes.ts';
import type { Config, ProviderEndpoint } from './config.ts';
import { AccessGate } from './gate/access-gate.ts';
import { KeyCache } from './gate/key-cache.ts';
import { MemoryRateLimiter, type RateLimiter } from './gate/rate-limit/rate-limiter.ts';
import { createServer } from './http/server.ts';
import { registerUnbuiltRoutes, UNBUILT_ROUTES } from './http/unbuilt-routes.ts';
import { KeyEvents } from './keys/key-events.ts';
import { KeyService } from './keys/key-service.ts';
import { openStore } from './store/open-store.ts';
import type { Store } from './store/types.ts';
import { usageStoreFor } from './store/sql/usage-rollups.ts';

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
  adapters?: AdapterTable;
  /** Extra routes registered before the server is ready (tests of the paid-run core). */
  routes?: (app: FastifyInstance, services: { runs: PaidRuns; store: Store; catalog: Catalog }) => void;
}


export async function createGateway(config: Config, overrides: GatewayOverrides = {}): Promise<Gateway> {
  const logger = pino({
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.apiKey', 'authorization'], censor: '[redacted]' },
  });
  // The catalog is checked before anything else starts: a bad entry stops start-up.
  const endpoints: Partial<Record<ProviderId, ProviderEndpoint>> = config.providers;
  const catalog = Catalog.fromFile(config.catalogFile, {
    chatProviders: chatProviderIds(PROVIDERS),
    keyedProviders: describedProviderIds(PROVIDERS),
    providerHasCredentials: (provider) => endpoints[provider]?.apiKey !== undefined,
  });
  const store = overrides.store ?? (await openStore(config.databaseUrl));
  const keyEvents = new KeyEvents();
  const keys = new KeyService(store, keyEvents);
  const gate = new AccessGate(new KeyCache(store, keyEvents), overrides.rateLimiter ?? new MemoryRateLimiter(), config.trustProxy);
  const app = createServer({ logger, bodyLimitBytes: config.bodyLimitBytes, gate });

  // Crash recovery: holds left by processes that are gone are refunded before serving.
  const instanceId = randomUUID();
  const recovery = new OrphanRecovery(store, instanceId);
  const refunded = await recovery.sweep();
  if (refunded > 0) logger.warn({ refunded }, 'refunded holds left by a gateway process that is gone');
  const heartbeat = setInterval(() => void recovery.sweep().catch((err: unknown) => logger.error({ err }, 'heartbeat failed')), HEARTBEAT_MS);
  heartbeat.unref();
  const upstream = new UpstreamClient();

  registerCatalogRoutes(app, catalog);
  const runs = new PaidRuns({
    money: store,
    inFlight: new InFlightRuns(keyEvents),
    instanceId,
    providerTimeoutMs: config.providerTimeoutMs,
    logger,
    now: Date.now,
  });
  registerChatRoute(app, { catalog, config, upstream, runs, adapters: overrides.adapters ?? defaultAdapters() });
  overrides.routes?.(app, { runs, store, catalog });
  registerUnbuiltRoutes(app, UNBUILT_ROUTES.filter((r) => r.scope !== 'chat'));
  if (config.adminToken !== undefined) {
    await registerAdminRoutes(app, { adminToken: config.adminToken, store, keys, usage: usageStoreFor(store) });
  }

  await app.ready();
  return {
    app,
    store,
    keyEvents,
    keys,
    config,
    catalog,
    async close() {
      clearInterval(heartbeat);
      await app.close();
      await upstream.close();
      if (overrides.store === undefined) await store.close();
    },
  };
}
