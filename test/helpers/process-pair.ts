/**
 * Two gateway processes on one fresh PostgreSQL database and one Redis prefix, with a short lease
 * (LEASE_MS) and a provider_1 emulator, for the tests of what one process does when the other dies
 * or stops. Started before the describe block's tests, ended after them.
 */
import { afterAll, beforeAll } from 'vitest';
import { startEmulator } from '../../emulators/index.ts';
import type { Emulator } from '../../emulators/types.ts';
import { writeCatalog } from '../fixtures/catalog.ts';
import { chatCatalog } from './chat.ts';
import { ADMIN_TOKEN, http, type HttpResponse } from './gateway.ts';
import { createDatabase, type TestDatabase } from './postgres.ts';
import { startGatewayProcess, type GatewayProcess } from './process.ts';
import { dropRedisPrefix, REDIS_URL, redisPrefix } from './redis.ts';

export interface ProcessPair {
  /** The process the test ends (killed or stopped); killed after the tests if still running. */
  first: GatewayProcess;
  /** The process that stays; the admin API is called on it. */
  second: GatewayProcess;
  openai: Emulator;
  admin(method: 'GET' | 'POST', path: string, body?: unknown): Promise<HttpResponse>;
}

export function processPair(leaseMs: number): ProcessPair {
  const pair = {} as ProcessPair;
  const prefix = redisPrefix();
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    database = await createDatabase();
    pair.openai = await startEmulator('openai');
    const env = {
      DATABASE_URL: database.url, REDIS_URL, REDIS_PREFIX: prefix, ADMIN_TOKEN, LEASE_MS: String(leaseMs),
      CATALOG_FILE: writeCatalog(chatCatalog()), PROVIDER_1_BASE_URL: pair.openai.baseUrl, PROVIDER_1_API_KEY: pair.openai.apiKey,
    };
    [pair.first, pair.second] = await Promise.all([startGatewayProcess(env), startGatewayProcess(env)]);
    pair.admin = (method, path, body) => http(pair.second.url + path, { method, body, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  }, 60_000);
  afterAll(async () => {
    await pair.first?.kill();
    await pair.second?.stop();
    await pair.openai?.close();
    await database?.drop();
    await dropRedisPrefix(prefix);
  }, 30_000);
  return pair;
}
