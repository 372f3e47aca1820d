/**
 * Voice samples across two gateway processes on one PostgreSQL database and one Redis
 * (DECISIONS.md "Several processes"): the bytes live in the store, so an upload made
 * through A is served by B; the 20-per-hour limit is one count through Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorEnv, startEmulator } from '../emulators/index.ts';
import type { Emulator } from '../emulators/types.ts';
import { wav } from './helpers/audio.ts';
import { AUDIO_CATALOG, postForm } from './helpers/audio-host.ts';
import { writeCatalog } from './fixtures/catalog.ts';
import { startGateway, type TestGateway } from './helpers/gateway.ts';
import { createDatabase, type TestDatabase } from './helpers/postgres.ts';
import { dropRedisPrefix, REDIS_URL, redisPrefix } from './helpers/redis.ts';

let db: TestDatabase;
let prefix: string;
let host: Emulator;
let a: TestGateway;
let b: TestGateway;

beforeAll(async () => {
  db = await createDatabase();
  prefix = redisPrefix();
  host = await startEmulator('predictions');
  const env = { DATABASE_URL: db.url, REDIS_URL, REDIS_PREFIX: prefix, CATALOG_FILE: writeCatalog(AUDIO_CATALOG), ...emulatorEnv(host), PUBLIC_BASE_URL: 'https://gateway.example' };
  a = await startGateway(env);
  b = await startGateway(env);
});
afterAll(async () => {
  await a.close();
  await b.close();
  await host.close();
  await db.drop();
  await dropRedisPrefix(prefix);
});

describe('uploads shared between gateway processes (PostgreSQL + Redis)', () => {
  it('an upload made through A is served by B, byte for byte; B accepts it as the voice sample of the same account', async () => {
    const { key } = await a.account({ key: { scopes: ['audio'] } });
    const sample = wav(2);
    const upload = await postForm(`${a.url}/api/v1/audio/uploads`, key, {}, { bytes: sample, type: 'audio/wav' });
    expect(upload.status).toBe(201);
    const path = new URL(upload.json.url).pathname;
    const served = await fetch(`${b.url}${path}`);
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer()).equals(sample)).toBe(true);
    const speech = await b.api('/audio/speech', { key, body: { model: 'tts-clone', input: 'Hi', voice_sample: upload.json.url, consent: true } });
    expect(speech.status).toBe(200);
  });

  it('20 uploads alternating between A and B: the 21st is 429 upload_limit_exceeded on either', async () => {
    const { key } = await a.account({ key: { scopes: ['audio'] } });
    for (let i = 0; i < 20; i++) {
      const gw = i % 2 === 0 ? a : b;
      expect((await postForm(`${gw.url}/api/v1/audio/uploads`, key, {}, { bytes: wav(1), type: 'audio/wav' })).status, `upload ${i + 1}`).toBe(201);
    }
    for (const gw of [a, b]) {
      const refused = await postForm(`${gw.url}/api/v1/audio/uploads`, key, {}, { bytes: wav(1), type: 'audio/wav' });
      expect(refused.status).toBe(429);
      expect(refused.json.error.code).toBe('upload_limit_exceeded');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    }
  });
});
