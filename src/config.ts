/**
 * Environment → typed, validated configuration (names and defaults per DECISIONS.md).
 * A bad value stops start-up with a message naming the variable.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { ProviderId } from './catalog/catalog-file.ts';
import { parseAddressList, type AddressMatcher } from './gate/address-match.ts';
import { envNames, type ProviderDescriptor } from './providers/descriptor.ts';
import { PROVIDERS, type DescribedProviderId } from './providers/descriptors.ts';
import { MEDIA_HOSTS, type MediaHostId } from './providers/predictions/media-host.ts';

/** The shipped catalog, from src/ (tsx) or from dist/src/ (compiled). */
export const DEFAULT_CATALOG_FILE = [new URL('../catalog/models.json', import.meta.url), new URL('../../catalog/models.json', import.meta.url)]
  .map((url) => fileURLToPath(url))
  .find((path) => existsSync(path)) ?? fileURLToPath(new URL('../catalog/models.json', import.meta.url));

/** A provider with an endpoint in the configuration: every provider with a descriptor. */
export type ConfiguredProvider = DescribedProviderId;

/** Every media and GPU host speaks Replicate-style predictions; the public host of that protocol is the default. */
const MEDIA_HOST_BASE_URL = 'https://api.replicate.com/v1';

/** `PROVIDER_4`, …, `PROVIDER_10`, `PROVIDER_CUSTOM`: the prefix of a media host's two variables. */
export function mediaHostEnvPrefix(host: MediaHostId): string {
  return host === 'custom' ? 'PROVIDER_CUSTOM' : host.toUpperCase();
}

/** The variable that holds a provider's API key (what an operator must set for its models to run). */
export function apiKeyVariable(provider: ProviderId, descriptors: readonly ProviderDescriptor[] = PROVIDERS): string {
  const descriptor = descriptors.find((d) => d.id === provider);
  if (descriptor !== undefined) return envNames(descriptor).apiKey;
  return `${provider === 'custom' ? 'PROVIDER_CUSTOM' : provider.toUpperCase()}_API_KEY`;
}

function mediaHostVariables() {
  const shape: Record<string, z.ZodType> = {};
  for (const host of MEDIA_HOSTS) {
    shape[`${mediaHostEnvPrefix(host)}_BASE_URL`] = z.string().url().default(MEDIA_HOST_BASE_URL);
    shape[`${mediaHostEnvPrefix(host)}_API_KEY`] = z.string().trim().min(1).optional();
  }
  return z.object(shape);
}

export interface ProviderEndpoint {
  baseUrl: string;
  /** The first key (fine-tuning jobs stay with the key that created them). */
  apiKey: string | undefined;
  /** Every key of `<PREFIX>_API_KEY`, comma-separated, in order: chat and embeddings calls take them in turn. */
  apiKeys: readonly string[];
}

/** A media host's base URL and its one key. */
export interface MediaHostEndpoint {
  baseUrl: string;
  apiKey: string | undefined;
}

export interface Config<Provider extends ProviderId = ConfiguredProvider> {
  port: number;
  host: string;
  databaseUrl: string;
  /** PostgreSQL connections per gateway process. */
  databasePoolSize: number;
  redisUrl: string | undefined;
  /** Starts every Redis key and channel name, so several gateways (or test runs) can share one Redis. */
  redisPrefix: string;
  adminToken: string | undefined;
  /** Bearer token for GET /metrics (ADMIN_TOKEN works too); neither set → /metrics answers 404. */
  metricsToken: string | undefined;
  /** PROVIDER_N_BASE_URL and PROVIDER_N_API_KEY of every provider with a descriptor. */
  providers: Record<Provider, ProviderEndpoint>;
  /** The media and GPU hosts (predictions protocol). */
  mediaHosts: Record<MediaHostId, MediaHostEndpoint>;
  /** How long POST /images/generations waits for the images before answering 202. */
  mediaSyncWaitMs: number;
  /** How long a stored response (POST /responses with store) is kept, in days (RESPONSES_RETENTION_DAYS). */
  responsesRetentionDays: number;
  /** First interval between polls of a media job (then doubling, up to 8 times this). */
  mediaPollMs: number;
  /** A media job still running after this is canceled at its host and refunded (provider_timeout). */
  mediaJobTimeoutMs: number;
  /** Interval between polls of a running fine-tuning job at its provider. */
  fineTuningPollMs: number;
  /** How long a process's lease on its runs' holds lasts without renewal (renewed every third of it). */
  leaseMs: number;
  /** The gateway's public origin (https in production): upload URLs start with it. Unset: the request's own origin. */
  publicBaseUrl: string | undefined;
  catalogFile: string;
  trustProxy: AddressMatcher | undefined;
  providerTimeoutMs: number;
  /** Attempts of one model after its first (429, 5xx, connection failure), at most (docs/decisions.md "Routing"). */
  upstreamRetries: number;
  /** The wait before the first retry, doubling after each, with jitter. */
  upstreamBackoffMs: number;
  /** Traces go over OTLP/HTTP to this collector base URL; unset: no traces. */
  otlpEndpoint: string | undefined;
  nonstreamKeepaliveMs: number;
  streamKeepaliveMs: number;
  smtpUrl: string | undefined;
  mailFrom: string | undefined;
  logLevel: string;
  /** Largest accepted request body (bytes). Not in DECISIONS.md's table; see docs/decisions.md. */
  bodyLimitBytes: number;
  /** Sign-in through an OpenID Connect provider (portal, and the admin dashboard for ADMIN_OIDC_EMAILS); undefined without OIDC_ISSUER. */
  oidc: { issuer: string; clientId: string; clientSecret: string } | undefined;
  /** Who may sign in to the admin dashboard through OIDC (lower-cased). */
  adminOidcEmails: string[];
  /** Stripe Checkout top-ups; undefined without STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET. */
  stripe: { secretKey: string; webhookSecret: string; apiBase: string | undefined } | undefined;
  /** The top-up amounts an owner picks from, in whole US dollars. */
  topupAmountsUsd: number[];
  /** What one chat request may carry in images and PDFs (docs/decisions.md). */
  media: { maxImages: number; maxPdfPages: number; maxPartBytes: number };
}

export class ConfigError extends Error {}

/** Where the gateway keeps its data when DATABASE_URL is unset. */
export const DEFAULT_DATABASE_URL = 'sqlite:./data/gateway.db';

const optionalString = z.string().trim().min(1).optional();
const integer = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const url = z.string().url();

const envSchema = z.object({
  PORT: integer(0, 65535).default(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATABASE_URL: z
    .string()
    .regex(/^(sqlite:.+|postgres(ql)?:\/\/.+)$/, 'must be sqlite:PATH, sqlite::memory: or postgres://…')
    .default(DEFAULT_DATABASE_URL),
  DATABASE_POOL_SIZE: integer(1, 1000).default(10),
  REDIS_URL: z.string().regex(/^rediss?:\/\/.+/, 'must be redis://… or rediss://…').optional(),
  REDIS_PREFIX: z.string().regex(/^[A-Za-z0-9_.:{}-]{1,100}$/, 'must be 1–100 letters, digits or _ . : { } -').default('model-gateway:'),
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  CATALOG_FILE: z.string().min(1).default(DEFAULT_CATALOG_FILE),
  TRUST_PROXY: optionalString,
  PROVIDER_TIMEOUT_MS: integer(1, 3_600_000).default(85_000),
  UPSTREAM_RETRIES: integer(0, 10).default(2),
  UPSTREAM_BACKOFF_MS: integer(0, 60_000).default(250),
  OTEL_EXPORTER_OTLP_ENDPOINT: url.regex(/^https?:\/\//, 'must be an http(s) URL').optional(),
  NONSTREAM_KEEPALIVE_MS: integer(1, 3_600_000).default(25_000),
  STREAM_KEEPALIVE_MS: integer(1, 3_600_000).default(15_000),
  SMTP_URL: z.string().regex(/^smtps?:\/\/.+/, 'must be smtp://… or smtps://…').optional(),
  MAIL_FROM: optionalString,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BODY_LIMIT_BYTES: integer(1024, 512 * 1024 * 1024).default(32 * 1024 * 1024),
  MAX_IMAGES_PER_REQUEST: integer(0, 10_000).default(100),
  MAX_PDF_PAGES_PER_REQUEST: integer(0, 10_000).default(100),
  MAX_PART_BYTES: integer(1, 512 * 1024 * 1024).default(20 * 1024 * 1024),
  MEDIA_SYNC_WAIT_MS: integer(0, 3_600_000).default(30_000),
  RESPONSES_RETENTION_DAYS: integer(1, 3650).default(30),
  MEDIA_POLL_MS: integer(1, 600_000).default(1_000),
  MEDIA_JOB_TIMEOUT_MS: integer(1_000, 7 * 86_400_000).default(3_600_000),
  FINE_TUNING_POLL_MS: integer(1, 3_600_000).default(15_000),
  LEASE_MS: integer(300, 3_600_000).default(30_000),
  PUBLIC_BASE_URL: url.regex(/^https?:\/\//, 'must be an http(s) URL').optional(),
  OIDC_ISSUER: url.optional(),
  OIDC_CLIENT_ID: optionalString,
  OIDC_CLIENT_SECRET: optionalString,
  ADMIN_OIDC_EMAILS: optionalString,
  STRIPE_SECRET_KEY: optionalString,
  STRIPE_WEBHOOK_SECRET: optionalString,
  STRIPE_API_BASE: url.optional(),
  TOPUP_AMOUNTS_USD: z.string().regex(/^\s*\d{1,5}(\s*,\s*\d{1,5})*\s*$/, 'must be whole US dollars separated by commas, e.g. 10,25,100').default('10,25,100'),
});

/** Each provider's endpoint variables, from its descriptor: `<PREFIX>_BASE_URL` (default: its public URL) and `<PREFIX>_API_KEY`. */
function providerEnvSchema(descriptors: readonly ProviderDescriptor[]) {
  const shape: Record<string, z.ZodType<string | undefined>> = {};
  for (const descriptor of descriptors) {
    const names = envNames(descriptor);
    shape[names.baseUrl] = url.default(descriptor.defaultBaseUrl);
    shape[names.apiKey] = optionalString;
  }
  return z.object(shape);
}

type Env = Record<string, string | undefined>;

/** Reads the configuration; empty variables count as unset. */
export function loadConfig(env?: Env): Config;
/** The same with another provider list (tests of a provider added by its descriptor alone). */
export function loadConfig<D extends ProviderDescriptor>(env: Env, descriptors: readonly D[]): Config<D['id']>;
export function loadConfig(env: Env = process.env, descriptors: readonly ProviderDescriptor[] = PROVIDERS): Config<ProviderId> {
  const cleaned: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && value !== '') cleaned[name] = value;
  }
  const parsed = envSchema.safeParse(cleaned);
  const parsedProviders = providerEnvSchema(descriptors).safeParse(cleaned);
  const media = mediaHostVariables().safeParse(cleaned);
  if (!parsed.success || !parsedProviders.success || !media.success) {
    const issues = [...(parsed.error?.issues ?? []), ...(parsedProviders.error?.issues ?? []), ...(media.error?.issues ?? [])];
    const lines = issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration: ${lines.join('; ')}`);
  }
  const e = parsed.data;
  const p = parsedProviders.data;
  const providers: Partial<Record<ProviderId, ProviderEndpoint>> = {};
  for (const descriptor of descriptors) {
    const names = envNames(descriptor);
    const keys = keyList(p[names.apiKey]);
    if (keys.some((key) => key === '')) throw new ConfigError(`Invalid configuration:\n  ${names.apiKey}: a comma-separated list of keys, none of them empty`);
    providers[descriptor.id] = { baseUrl: stripSlash(p[names.baseUrl] as string), apiKey: keys[0], apiKeys: keys };
  }
  const m = media.data as Record<string, string | undefined>;
  const oidcParts = [e.OIDC_ISSUER, e.OIDC_CLIENT_ID, e.OIDC_CLIENT_SECRET];
  if (oidcParts.some((v) => v !== undefined) && oidcParts.some((v) => v === undefined)) {
    throw new ConfigError('Invalid configuration:\n  OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET: set all three or none');
  }
  if ((e.STRIPE_SECRET_KEY === undefined) !== (e.STRIPE_WEBHOOK_SECRET === undefined)) {
    throw new ConfigError('Invalid configuration:\n  STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET: set both or neither');
  }
  const topups = e.TOPUP_AMOUNTS_USD.split(',').map((s) => Number(s.trim()));
  if (topups.some((usd) => usd < 1)) throw new ConfigError('Invalid configuration:\n  TOPUP_AMOUNTS_USD: every amount must be at least 1');
  let trustProxy: AddressMatcher | undefined;
  if (e.TRUST_PROXY !== undefined) {
    const list = parseAddressList(e.TRUST_PROXY.split(',').map((s) => s.trim()).filter((s) => s !== ''));
    if (!list.ok) throw new ConfigError(`Invalid configuration: TRUST_PROXY: ${list.error}`);
    trustProxy = list.matcher;
  }
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    redisUrl: e.REDIS_URL,
    redisPrefix: e.REDIS_PREFIX,
    adminToken: e.ADMIN_TOKEN,
    metricsToken: e.METRICS_TOKEN,
    providers: providers as Record<ProviderId, ProviderEndpoint>,
    mediaHosts: Object.fromEntries(MEDIA_HOSTS.map((host) => [host, {
      baseUrl: stripSlash(m[`${mediaHostEnvPrefix(host)}_BASE_URL`] as string),
      apiKey: m[`${mediaHostEnvPrefix(host)}_API_KEY`],
    }])) as Record<MediaHostId, MediaHostEndpoint>,
    mediaSyncWaitMs: e.MEDIA_SYNC_WAIT_MS,
    responsesRetentionDays: e.RESPONSES_RETENTION_DAYS,
    mediaPollMs: e.MEDIA_POLL_MS,
    mediaJobTimeoutMs: e.MEDIA_JOB_TIMEOUT_MS,
    fineTuningPollMs: e.FINE_TUNING_POLL_MS,
    leaseMs: e.LEASE_MS,
    publicBaseUrl: e.PUBLIC_BASE_URL === undefined ? undefined : stripSlash(e.PUBLIC_BASE_URL),
    catalogFile: e.CATALOG_FILE,
    trustProxy,
    providerTimeoutMs: e.PROVIDER_TIMEOUT_MS,
    upstreamRetries: e.UPSTREAM_RETRIES,
    upstreamBackoffMs: e.UPSTREAM_BACKOFF_MS,
    otlpEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT === undefined ? undefined : stripSlash(e.OTEL_EXPORTER_OTLP_ENDPOINT),
    nonstreamKeepaliveMs: e.NONSTREAM_KEEPALIVE_MS,
    streamKeepaliveMs: e.STREAM_KEEPALIVE_MS,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    logLevel: e.LOG_LEVEL,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    oidc: e.OIDC_ISSUER === undefined || e.OIDC_CLIENT_ID === undefined || e.OIDC_CLIENT_SECRET === undefined
      ? undefined
      : { issuer: e.OIDC_ISSUER, clientId: e.OIDC_CLIENT_ID, clientSecret: e.OIDC_CLIENT_SECRET },
    adminOidcEmails: (e.ADMIN_OIDC_EMAILS ?? '').split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== ''),
    stripe: e.STRIPE_SECRET_KEY === undefined || e.STRIPE_WEBHOOK_SECRET === undefined
      ? undefined
      : { secretKey: e.STRIPE_SECRET_KEY, webhookSecret: e.STRIPE_WEBHOOK_SECRET, apiBase: e.STRIPE_API_BASE === undefined ? undefined : stripSlash(e.STRIPE_API_BASE) },
    topupAmountsUsd: [...new Set(topups)],
    media: { maxImages: e.MAX_IMAGES_PER_REQUEST, maxPdfPages: e.MAX_PDF_PAGES_PER_REQUEST, maxPartBytes: e.MAX_PART_BYTES },
  };
}

/** The keys of a comma-separated `<PREFIX>_API_KEY` (spaces around each trimmed). */
function keyList(value: string | undefined): string[] {
  return value === undefined ? [] : value.split(',').map((key) => key.trim());
}

function stripSlash(value: string): string {
  return value.replace(/\/+$/, '');
}
