/**
 * Wiring in one place: configuration → store, caches, gate, services → HTTP routes.
 * Every route module receives what it needs here; nothing reaches for globals.
 */
import type { FastifyInstance } from 'fastify';
import pino, { type DestinationStream } from 'pino';
import { registerAdminRoutes } from './admin/routes.ts';
import { Catalog } from './catalog/catalog.ts';
import { InFlightRuns } from './billing/in-flight.ts';
import { PaidRuns } from './billing/paid-run.ts';
import { registerChatRoute } from './chat/route.ts';
import { registerMessagesRoutes } from './messages/route.ts';
import { MailSender, smtpTransport } from './notifications/mail-sender.ts';
import { OidcSignIn } from './auth/oidc-sign-in.ts';
import { Sessions } from './auth/sessions.ts';
import { SignInLinks } from './auth/sign-in-links.ts';
import { registerPortal } from './portal/routes.ts';
import { paymentRoutes, registerStripeWebhook } from './payments/routes.ts';
import { StripePayments } from './payments/stripe-payments.ts';
import { PROVIDERS, telemetryNames } from './providers/descriptors.ts';
import type { ProviderId } from './catalog/catalog-file.ts';
import { catalogOptions } from './runnable-models.ts';
import { databaseFailure } from './startup-failure.ts';

import { registerEmbeddingsRoute } from './embeddings/route.ts';
import { registerJobsRoute } from './jobs/route.ts';
import { registerKeyInfoRoute } from './key-info/route.ts';
import { defaultEmbeddingsAdapters, type EmbeddingsAdapterTable } from './providers/embeddings-registry.ts';
import { defaultAdapters, type AdapterTable } from './providers/registry.ts';
import { UpstreamClient } from './providers/upstream-client.ts';
import { Routing, type PoolEndpoint } from './routing/routing.ts';
import { NO_TRACER } from './telemetry/run-tracer.ts';
import { randomUUID } from 'node:crypto';
import { holdsUnderLease, OrphanRecovery } from './billing/orphan-recovery.ts';
import { registerCatalogRoutes } from './catalog/routes.ts';
import { CatalogAnswers } from './catalog/listing.ts';
import { DocsIndex } from './mcp/docs-index.ts';
import { McpLimits } from './mcp/limits.ts';
import { registerMcpRoute } from './mcp/route.ts';
import { registerOpenApiRoutes } from './openapi/routes.ts';
import type { Config, ProviderEndpoint } from './config.ts';
import { AccessGate } from './gate/access-gate.ts';
import { KeyCache } from './gate/key-cache.ts';
import type { RateLimiter } from './gate/rate-limit/rate-limiter.ts';
import { createServer } from './http/server.ts';
import { GatewayMetrics, registerMetricsRoute } from './http/metrics.ts';
import { observeRequests } from './http/request-log.ts';
import { PROVIDERS as PROVIDER_IDS } from './catalog/catalog-file.ts';
import type { KeyEvents } from './keys/key-events.ts';
import { KeyService } from './keys/key-service.ts';
import { openSharedState } from './shared-state.ts';
import { FineTuningRunner } from './fine-tuning/runner.ts';
import { registerFineTuningRoutes } from './fine-tuning/routes.ts';
import { FileReader, type FileFetchOptions } from './fine-tuning/training-file.ts';
import { AUDIO_OUTPUT_CHECKS } from './audio/output-checks.ts';
import { registerAudioRoutes } from './audio/routes.ts';
import { VoiceSamples } from './audio/uploads.ts';
import { MediaJobRunner } from './media/job-runner.ts';
import { registerMediaRoutes } from './media/routes.ts';
import { PredictionsClient } from './providers/predictions/client.ts';
import { OpenAiFineTuningClient } from './providers/provider-1/fine-tuning.ts';
import { limitsOf } from './store/limits.ts';
import { openStore } from './store/open-store.ts';
import type { Store } from './store/types.ts';

/** How often expired voice samples are deleted (each is also deleted when asked for after expiry). */
const UPLOAD_SWEEP_MS = 10 * 60_000;
/** How long a stopping process waits for settles and refunds being retried (within a usual 30 s grace period). */
const RETRIED_CLOSES_WAIT_MS = 20_000;

export interface Gateway {
  app: FastifyInstance;
  store: Store;
  keyEvents: KeyEvents;
  keys: KeyService;
  config: Config;
  catalog: Catalog;
  /** What the paid-run core reports runs to (GET /metrics). */
  metrics: GatewayMetrics;
  /** The portal's sign-in links (the demo prints one). */
  signInLinks: SignInLinks;
  close(): Promise<void>;
}

/** Reported to MCP clients as the server version. */
const GATEWAY_VERSION = '0.1.0';

export interface GatewayOverrides {
  store?: Store;
  rateLimiter?: RateLimiter;
  adapters?: AdapterTable;
  embeddingsAdapters?: EmbeddingsAdapterTable;
  /** Extra routes registered before the server is ready (tests of the paid-run core). */
  routes?: (app: FastifyInstance, services: { runs: PaidRuns; store: Store; catalog: Catalog }) => void;
  /** Where log lines go (tests read them); stdout by default. */
  logStream?: DestinationStream;
  /** How client file URLs (fine-tuning files) are fetched: tests serve them from loopback with their own CA. */
  fileFetch?: FileFetchOptions;
  /** Where the built dashboard and portal are read from (tests build them into folders of their own). */
  webAppDirs?: { dashboard?: string; portal?: string };
  /** The clock of voice-sample uploads (their 24-hour validity and hourly limit) and of portal links and sessions; tests move it. */
  now?: () => number;
}


export async function createGateway(config: Config, overrides: GatewayOverrides = {}): Promise<Gateway> {
  const logOptions = {
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.apiKey', 'authorization'], censor: '[redacted]' },
  };
  // One log line per request: written asynchronously, never a blocking write on the request path,
  // and gathered into writes of 8 KiB or every 250 ms (one write per line cost more than the line).
  const logDestination = overrides.logStream ?? pino.destination({ dest: 1, sync: false, minLength: 8192, periodicFlush: 250 });
  const logger = pino(logOptions, logDestination);
  // The catalog is checked before anything else starts: a bad entry stops start-up.
  const embeddingsAdapters = overrides.embeddingsAdapters ?? defaultEmbeddingsAdapters();
  const catalog = Catalog.fromFile(config.catalogFile, catalogOptions(config, embeddingsAdapters));
  // Redis (REDIS_URL) is checked before the database: an unreachable one stops start-up.
  const shared = await openSharedState(config, logger);
  const store = overrides.store ?? (await openStore(config.databaseUrl, { poolSize: config.databasePoolSize }).catch(async (error: unknown) => {
    await shared.close();
    throw databaseFailure(error, config.databaseUrl);
  }));
  const keyEvents = shared.keyEvents;
  const keys = new KeyService(store.keys, keyEvents);
  const rateLimiter = overrides.rateLimiter ?? shared.rateLimiter;
  const gate = new AccessGate(new KeyCache(store.keys, keyEvents), rateLimiter, config.trustProxy);
  const app = createServer({ logger, bodyLimitBytes: config.bodyLimitBytes, gate });
  const metrics = new GatewayMetrics({ models: catalog.models.map((m) => m.entry.slug), providers: PROVIDER_IDS });
  // The request line holds no secret by construction (request-log.ts): built there, without pino's redaction pass.
  observeRequests(app, metrics, { destination: logDestination, level: config.logLevel });
  registerMetricsRoute(app, metrics, [config.metricsToken, config.adminToken]);

  const instanceId = randomUUID();
  const upstream = new UpstreamClient();
  // Traces only when a collector is configured: the SDK is not even loaded otherwise.
  const tracer = config.otlpEndpoint === undefined
    ? NO_TRACER
    : (await import('./telemetry/otlp-tracer.ts')).otlpTracer({ endpoint: config.otlpEndpoint, serviceName: 'model-gateway', serviceVersion: GATEWAY_VERSION });
  const routing = new Routing({
    endpoints: routingEndpoints(config.providers),
    rests: shared.rests,
    retries: config.upstreamRetries,
    backoffMs: config.upstreamBackoffMs,
    metrics,
    tracer,
    providerNames: telemetryNames(PROVIDERS),
  });
  // Limit e-mails leave from an outbox in the background; without SMTP_URL, notifications stay in-product.
  const mail = config.smtpUrl === undefined ? undefined : new MailSender({
    smtpUrl: config.smtpUrl,
    from: config.mailFrom ?? 'model-gateway@localhost',
    outbox: store,
    logger,
    claimer: instanceId,
  });

  // Crash recovery by process leases: this process's lease is renewed while it lives (and made sure of before each hold).
  const recovery = new OrphanRecovery(store.instances, instanceId, {
    leaseMs: config.leaseMs,
    adopt: async (gone: string[], expiredAt: number): Promise<void> => {
      await media.adopt(gone, expiredAt);
      await fineTuning.adopt(gone, expiredAt);
    },
    onLapse: () => logger.error("this process's lease ran out before it was renewed (paused, or cut off from the database): holds of its runs may have been refunded"),
  });
  const runs = new PaidRuns({
    money: holdsUnderLease(store.money, recovery),
    inFlight: new InFlightRuns(keyEvents),
    instanceId,
    providerTimeoutMs: config.providerTimeoutMs,
    logger,
    now: Date.now,
    metrics,
  });
  const mediaHost = new PredictionsClient();
  const media = new MediaJobRunner({
    host: mediaHost,
    jobs: store.mediaJobs,
    runs,
    endpoints: config.mediaHosts,
    // By job kind, for new and resumed jobs alike.
    outputChecks: AUDIO_OUTPUT_CHECKS,
    instanceId,
    pollMs: config.mediaPollMs,
    jobTimeoutMs: config.mediaJobTimeoutMs,
    logger,
    now: Date.now,
  });

  // provider_1 is the provider that fine-tunes (a row per provider that does).
  const fineTuningClient = new OpenAiFineTuningClient();
  const fineTuningJobs = store.fineTuningJobs;
  const fineTuning = new FineTuningRunner({
    providers: { provider_1: { client: fineTuningClient, endpoint: config.providers.provider_1 } },
    jobs: fineTuningJobs,
    runs,
    instanceId,
    pollMs: config.fineTuningPollMs,
    logger,
    now: Date.now,
  });
  const files = new FileReader(overrides.fileFetch);

  // Before serving, and at every renewal: media and fine-tuning jobs their provider has taken are adopted and resumed;
  // every other hold left by a process whose lease ran out is refunded.
  const sweep = async () => {
    const refunded = await recovery.sweep();
    if (refunded > 0) logger.warn({ refunded }, 'refunded holds left by a gateway process that is gone');
  };
  await sweep();
  // At least every 10 s whatever LEASE_MS: a process of the release before leases takes a process whose
  // heartbeat is 30 s old for gone (rolling upgrade, migration 092).
  const renewal = setInterval(() => void sweep().catch((err: unknown) => logger.error({ err }, 'lease renewal failed')), Math.min(Math.floor(config.leaseMs / 3), 10_000));
  renewal.unref();

  const catalogAnswers = new CatalogAnswers(catalog);
  registerCatalogRoutes(app, catalog, catalogAnswers);
  await registerMcpRoute(app, {
    gate,
    limits: new McpLimits(rateLimiter),
    tools: { catalog, answers: catalogAnswers, docs: DocsIndex.fromDirectory(), version: GATEWAY_VERSION },
  });
  registerOpenApiRoutes(app, GATEWAY_VERSION, limitsOf(store.money));
  const chatAdapters = overrides.adapters ?? defaultAdapters();
  registerChatRoute(app, { catalog, config, upstream, routing, runs, metrics, adapters: chatAdapters });
  registerMessagesRoutes(app, { catalog, config, upstream, routing, runs, metrics, adapters: chatAdapters });
  registerEmbeddingsRoute(app, { catalog, config, upstream, routing, runs, adapters: embeddingsAdapters });
  registerJobsRoute(app, { jobs: store.jobs, gate });
  registerKeyInfoRoute(app, { gate, keys, limits: limitsOf(store.money) });
  registerMediaRoutes(app, { catalog, runs, runner: media, syncWaitMs: config.mediaSyncWaitMs, providerTimeoutMs: config.providerTimeoutMs });
  registerFineTuningRoutes(app, { catalog, runs, runner: fineTuning, jobs: fineTuningJobs, files, limits: limitsOf(store.money) });
  const samples = new VoiceSamples({ store: store.uploads, limiter: rateLimiter, publicBaseUrl: config.publicBaseUrl, now: overrides.now ?? Date.now });
  await registerAudioRoutes(app, { catalog, runs, runner: media, samples });
  const uploadSweep = setInterval(() => void samples.sweep().catch((err: unknown) => logger.error({ err }, 'upload sweep failed')), UPLOAD_SWEEP_MS);
  uploadSweep.unref();
  overrides.routes?.(app, { runs, store, catalog });
  // The customer portal, and the dashboard's sign-in through the same OIDC provider.
  const now = overrides.now ?? Date.now;
  const { usage, portal } = store;
  const secureCookies = config.publicBaseUrl?.startsWith('https:') ?? false;
  const sessions = new Sessions({ store: portal, secure: secureCookies, now });
  const oidc = config.oidc === undefined ? undefined : new OidcSignIn(config.oidc, secureCookies);
  const portalMail = config.smtpUrl === undefined ? undefined : smtpTransport(config.smtpUrl, 15_000);
  const sendMail = portalMail === undefined ? undefined : async (to: string, subject: string, text: string) => {
    await portalMail.sendMail({ from: config.mailFrom ?? 'model-gateway@localhost', to, subject, text });
  };
  const signInLinks = new SignInLinks({
    store: portal, limiter: rateLimiter, mail: sendMail, now, onMailError: (err) => logger.warn({ err }, 'a sign-in link e-mail could not be sent'),
  });
  // Credit purchases through Stripe Checkout, and its webhook (404 without STRIPE_SECRET_KEY).
  const paymentStore = store.payments;
  const payments = {
    stripe: config.stripe === undefined ? undefined : await StripePayments.create(config.stripe, paymentStore, now),
    store: paymentStore, topupAmountsUsd: config.topupAmountsUsd, publicBaseUrl: config.publicBaseUrl,
  };
  await registerStripeWebhook(app, payments);
  await registerPortal(app, {
    store, portal, keys, usage, sessions, links: signInLinks, oidc, mailsLinks: sendMail !== undefined, mail: sendMail,
    publicBaseUrl: config.publicBaseUrl, trustProxy: config.trustProxy, now, portalDir: overrides.webAppDirs?.portal,
  }, [paymentRoutes(payments)]);
  const adminSso = oidc === undefined || config.adminOidcEmails.length === 0
    ? undefined
    : { oidc, sessions, emails: config.adminOidcEmails, publicBaseUrl: config.publicBaseUrl };
  if (config.adminToken !== undefined || adminSso !== undefined) {
    await registerAdminRoutes(app, { access: { adminToken: config.adminToken, sso: adminSso }, portal: usage === undefined ? undefined : portal, store, keys, usage,
      dashboardDir: overrides.webAppDirs?.dashboard,
    });
  }

  await app.ready();
  return {
    app,
    store,
    keyEvents,
    keys,
    config,
    catalog,
    metrics,
    signInLinks,
    async close() {
      clearInterval(uploadSweep);
      // Media jobs stop polling first (they stay held, for the next process to resume).
      await media.close();
      await fineTuning.close();
      metrics.close();
      // Runs in flight finish. A keep-alive connection is closed as soon as it is idle: answers written
      // straight to the socket do not say `Connection: close`, and would keep it open for keepAliveTimeout.
      const idle = setInterval(() => app.server.closeIdleConnections(), 100);
      try {
        await app.close();
      } finally {
        clearInterval(idle);
      }
      // Closes being retried apply first, for a while, under the lease (docs/decisions.md "A settle whose first attempt fails").
      if (!(await runs.retriedClosesApplied(RETRIED_CLOSES_WAIT_MS))) {
        logger.error('stopping with settles or refunds not yet applied: a live process refunds their holds once this lease has run out');
      }
      // Only now: while a run is in flight its lease is renewed, or a peer would refund a run the client received.
      clearInterval(renewal);
      await mail?.close();
      portalMail?.close();
      await upstream.close();
      await tracer.close();
      await shared.close();
      await mediaHost.close();
      await fineTuningClient.close();
      await files.close();
      if (overrides.store === undefined) await store.close();
      logger.flush();
    },
  };
}

/** Each provider's base URL and keys, as the provider-call glue takes them. */
function routingEndpoints(providers: Partial<Record<ProviderId, ProviderEndpoint>>): Partial<Record<ProviderId, PoolEndpoint>> {
  const endpoints: Partial<Record<ProviderId, PoolEndpoint>> = {};
  for (const [provider, endpoint] of Object.entries(providers) as [ProviderId, ProviderEndpoint][]) endpoints[provider] = { baseUrl: endpoint.baseUrl, apiKeys: endpoint.apiKeys };
  return endpoints;
}
