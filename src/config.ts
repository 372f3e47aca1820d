/**
 * Environment → typed, validated configuration (names and defaults per DECISIONS.md).
 * A bad value stops start-up with a message naming the variable.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { parseAddressList, type AddressMatcher } from './gate/address-match.ts';

/** The shipped catalog, from src/ (tsx) or from dist/src/ (compiled). */
export const DEFAULT_CATALOG_FILE = [new URL('../catalog/models.json', import.meta.url), new URL('../../catalog/models.json', import.meta.url)]
  .map((url) => fileURLToPath(url))
  .find((path) => existsSync(path)) ?? fileURLToPath(new URL('../catalog/models.json', import.meta.url));

const PUBLIC_BASE_URLS = {
  provider_1: 'https://api.openai.com/v1',
  provider_2: 'https://api.anthropic.com',
  provider_3: 'https://generativelanguage.googleapis.com',
  provider_7: 'https://api.deepseek.com',
} as const;
export type ConfiguredProvider = keyof typeof PUBLIC_BASE_URLS;

export interface ProviderEndpoint {
  baseUrl: string;
  apiKey: string | undefined;
}

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  redisUrl: string | undefined;
  adminToken: string | undefined;
  /** Bearer token for GET /metrics (ADMIN_TOKEN works too); neither set → /metrics answers 404. */
  metricsToken: string | undefined;
  providers: Record<ConfiguredProvider, ProviderEndpoint>;
  catalogFile: string;
  trustProxy: AddressMatcher | undefined;
  providerTimeoutMs: number;
  nonstreamKeepaliveMs: number;
  streamKeepaliveMs: number;
  smtpUrl: string | undefined;
  mailFrom: string | undefined;
  logLevel: string;
  /** Largest accepted request body (bytes). Not in DECISIONS.md's table; see docs/decisions.md. */
  bodyLimitBytes: number;
}

export class ConfigError extends Error {}

const optionalString = z.string().trim().min(1).optional();
const integer = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const url = z.string().url();

const envSchema = z.object({
  PORT: integer(0, 65535).default(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATABASE_URL: z
    .string()
    .regex(/^(sqlite:.+|postgres(ql)?:\/\/.+)$/, 'must be sqlite:PATH, sqlite::memory: or postgres://…')
    .default('sqlite:./data/gateway.db'),
  REDIS_URL: z.string().regex(/^rediss?:\/\/.+/, 'must be redis://… or rediss://…').optional(),
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  PROVIDER_1_BASE_URL: url.default(PUBLIC_BASE_URLS.provider_1),
  PROVIDER_2_BASE_URL: url.default(PUBLIC_BASE_URLS.provider_2),
  PROVIDER_3_BASE_URL: url.default(PUBLIC_BASE_URLS.provider_3),
  PROVIDER_7_BASE_URL: url.default(PUBLIC_BASE_URLS.provider_7),
  PROVIDER_1_API_KEY: optionalString,
  PROVIDER_2_API_KEY: optionalString,
  PROVIDER_3_API_KEY: optionalString,
  PROVIDER_7_API_KEY: optionalString,
  CATALOG_FILE: z.string().min(1).default(DEFAULT_CATALOG_FILE),
  TRUST_PROXY: optionalString,
  PROVIDER_TIMEOUT_MS: integer(1, 3_600_000).default(85_000),
  NONSTREAM_KEEPALIVE_MS: integer(1, 3_600_000).default(25_000),
  STREAM_KEEPALIVE_MS: integer(1, 3_600_000).default(15_000),
  SMTP_URL: z.string().regex(/^smtps?:\/\/.+/, 'must be smtp://… or smtps://…').optional(),
  MAIL_FROM: optionalString,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BODY_LIMIT_BYTES: integer(1024, 512 * 1024 * 1024).default(32 * 1024 * 1024),
});

/** Reads the configuration; empty variables count as unset. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const cleaned: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && value !== '') cleaned[name] = value;
  }
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  let trustProxy: AddressMatcher | undefined;
  if (e.TRUST_PROXY !== undefined) {
    const list = parseAddressList(e.TRUST_PROXY.split(',').map((s) => s.trim()).filter((s) => s !== ''));
    if (!list.ok) throw new ConfigError(`Invalid configuration:\n  TRUST_PROXY: ${list.error}`);
    trustProxy = list.matcher;
  }
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    adminToken: e.ADMIN_TOKEN,
    metricsToken: e.METRICS_TOKEN,
    providers: {
      provider_1: { baseUrl: stripSlash(e.PROVIDER_1_BASE_URL), apiKey: e.PROVIDER_1_API_KEY },
      provider_2: { baseUrl: stripSlash(e.PROVIDER_2_BASE_URL), apiKey: e.PROVIDER_2_API_KEY },
      provider_3: { baseUrl: stripSlash(e.PROVIDER_3_BASE_URL), apiKey: e.PROVIDER_3_API_KEY },
      provider_7: { baseUrl: stripSlash(e.PROVIDER_7_BASE_URL), apiKey: e.PROVIDER_7_API_KEY },
    },
    catalogFile: e.CATALOG_FILE,
    trustProxy,
    providerTimeoutMs: e.PROVIDER_TIMEOUT_MS,
    nonstreamKeepaliveMs: e.NONSTREAM_KEEPALIVE_MS,
    streamKeepaliveMs: e.STREAM_KEEPALIVE_MS,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    logLevel: e.LOG_LEVEL,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
  };
}

function stripSlash(value: string): string {
  return value.replace(/\/+$/, '');
}
