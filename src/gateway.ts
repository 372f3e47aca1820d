/**
 * Wiring in one place: configuration → store, caches, gate, services → HTTP routes.
 * Every route module receives what it needs here; nothing reaches for globals.
 */
import type { FastifyInstance } from 'fastify';
import pino, { type DestinationStream } from 'pino';
import { registerAdminRoutes } from './admin/routes.ts';
import { Catalog } from './catalog/catalog.ts';
import { InFlightRuns } from './chat/in-flight.ts';
import { registerChatRoute } from './chat/route.ts';
import { defaultAdapters, type AdapterTable } from './providers/registry.ts';
import { UpstreamClient } from './providers/upstream-client.ts';
import { randomUUID } from 'node:crypto';
import { HEARTBEAT_MS, OrphanRecovery } from './billing/orphan-recovery.ts';
import { registerCatalogRoutes } from './catalog/routes.ts';
import { CatalogAnswers } from './catalog/listing.ts';
import { DocsIndex } from './mcp/docs-index.ts';
import { McpLimits } from './mcp/limits.ts';
import { registerMcpRoute } from './mcp/route.ts';
import { registerOpenApiRoutes } from './openapi/routes.ts';
import type { Config } from './config.ts';
import { AccessGate } from './gate/access-gate.ts';
import { KeyCache } from './gate/key-cache.ts';
import { MemoryRateLimiter, type RateLimiter } from './gate/rate-limit/rate-limiter.ts';
import { createServer } from './http/server.ts';
import { GatewayMetrics, registerMetricsRoute } from './http/metrics.ts';
import { observeRequests } from './http/request-log.ts';
import { PROVIDERS } from './catalog/catalog-file.ts';
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
  /** What the paid-run core reports runs to (GET /metrics). */
  metrics: GatewayMetrics;
  close(): Promise<void>;
}

/** Reported to MCP clients as the server version. */
const GATEWAY_VERSION = '0.1.0';

export interface GatewayOverrides {
  store?: Store;
  rateLimiter?: RateLimiter;
  adapters?: AdapterTable;
  /** Where log lines go (tests read them); stdout by default. */
  logStream?: DestinationStream;
}


export async function createGateway(config: Config, overrides: GatewayOverrides = {}): Promise<Gateway> {
  const logOptions = {
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.apiKey', 'authorization'], censor: '[redacted]' },
  };
  const logger = overrides.logStream === undefined ? pino(logOptions) : pino(logOptions, overrides.logStream);
  // The catalog is checked before anything else starts: a bad entry stops start-up.
  const catalog = Catalog.fromFile(config.catalogFile, {
    providerHasCredentials: (provider) => provider in config.providers && config.providers[provider as keyof Config['providers']].apiKey !== undefined,
  });
  const store = overrides.store ?? (await openStore(config.databaseUrl));
  const keyEvents = new KeyEvents();
  const keys = new KeyService(store, keyEvents);
  const rateLimiter = overrides.rateLimiter ?? new MemoryRateLimiter();
  const gate = new AccessGate(new KeyCache(store, keyEvents), rateLimiter, config.trustProxy);
  const app = createServer({ logger, bodyLimitBytes: config.bodyLimitBytes, gate });
  const metrics = new GatewayMetrics({ models: catalog.models.map((m) => m.entry.slug), providers: PROVIDERS });
  observeRequests(app, metrics);
  registerMetricsRoute(app, metrics, [config.metricsToken, config.adminToken]);

  // Crash recovery: holds left by processes that are gone are refunded before serving.
  const instanceId = randomUUID();
  const recovery = new OrphanRecovery(store, instanceId);
  const refunded = await recovery.sweep();
  if (refunded > 0) logger.warn({ refunded }, 'refunded holds left by a gateway process that is gone');
  const heartbeat = setInterval(() => void recovery.sweep().catch((err: unknown) => logger.error({ err }, 'heartbeat failed')), HEARTBEAT_MS);
  heartbeat.unref();
  const upstream = new UpstreamClient();

  const catalogAnswers = new CatalogAnswers(catalog);
  registerCatalogRoutes(app, catalog, catalogAnswers);
  await registerMcpRoute(app, {
    gate,
    limits: new McpLimits(rateLimiter),
    tools: { catalog, answers: catalogAnswers, docs: DocsIndex.fromDirectory(), version: GATEWAY_VERSION },
  });
  registerOpenApiRoutes(app, GATEWAY_VERSION);
  registerChatRoute(app, {
    catalog, store, config, upstream, instanceId,
    adapters: overrides.adapters ?? defaultAdapters(),
    inFlight: new InFlightRuns(keyEvents),
  });
  registerUnbuiltRoutes(app, UNBUILT_ROUTES.filter((r) => r.scope !== 'chat'));
  if (config.adminToken !== undefined) await registerAdminRoutes(app, { adminToken: config.adminToken, store, keys });

  await app.ready();
  return {
    app,
    store,
    keyEvents,
    keys,
    config,
    catalog,
    metrics,
    async close() {
      clearInterval(heartbeat);
      metrics.close();
      await app.close();
      await upstream.close();
      if (overrides.store === undefined) await store.close();
    },
  };
}
