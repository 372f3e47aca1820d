/**
 * Key pools (DECISIONS.md "Routing"): several comma-separated keys per provider, used in turn;
 * a key the provider throttles rests until its retry-after and the next key answers; a key it
 * refuses rests 5 minutes (logged once as an operator error) and is skipped afterwards; no key
 * left → 503 model_unavailable, refunded. Chat and embeddings alike. Keys are counted at the
 * emulator, which accepts a pool, throttles one key and refuses any other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../emulators/index.ts';
import type { Emulator, RecordedRequest } from '../emulators/types.ts';
import { embeddingEntry, writeCatalog } from './fixtures/catalog.ts';
import { chatCatalog, costMicro, money } from './helpers/chat.ts';
import { ADMIN_TOKEN, http, startGateway, type TestGateway } from './helpers/gateway.ts';
import { captureLog } from './helpers/log-capture.ts';
import type { ChatRouting } from '../src/catalog/catalog-file.ts';
import type { ProviderCall } from '../src/providers/adapter.ts';
import { KEY_SLOT, withKey } from '../src/providers/provider-call.ts';
import { defaultAdapters } from '../src/providers/registry.ts';
import { defaultEmbeddingsAdapters } from '../src/providers/embeddings-registry.ts';

const hi = [{ role: 'user', content: 'Hello there' }];

let openai: Emulator;
let deepseek: Emulator;
let gemini: Emulator;
let gw: TestGateway;
const log = captureLog();

/** The key each recorded request presented. */
function keysOf(requests: RecordedRequest[]): string[] {
  return requests.map((r) => {
    const header = (name: string) => (Array.isArray(r.headers[name]) ? r.headers[name][0] : r.headers[name]) as string | undefined;
    return header('authorization')?.replace(/^Bearer /, '') ?? header('x-goog-api-key') ?? '';
  });
}

const count = (list: string[], key: string) => list.filter((k) => k === key).length;

beforeAll(async () => {
  openai = await startEmulator('openai', { apiKey: 'oa-key-a', apiKeys: ['oa-key-b'] });
  deepseek = await startEmulator('deepseek', { apiKey: 'ds-good' });
  gemini = await startEmulator('gemini', { apiKey: 'gm-good' });
  gw = await startGateway({
    LOG_LEVEL: 'info',
    METRICS_TOKEN: ADMIN_TOKEN,
    UPSTREAM_RETRIES: '2',
    UPSTREAM_BACKOFF_MS: '1',
    CATALOG_FILE: writeCatalog(chatCatalog([embeddingEntry('text-embedding-3-small')])),
    PROVIDER_1_BASE_URL: openai.baseUrl,
    PROVIDER_1_API_KEY: 'oa-key-a,oa-key-b',
    // The first key is one the provider refuses.
    PROVIDER_7_BASE_URL: deepseek.baseUrl,
    PROVIDER_7_API_KEY: 'ds-revoked, ds-good',
    // Every key refused.
    PROVIDER_3_BASE_URL: gemini.baseUrl,
    PROVIDER_3_API_KEY: 'gm-bad-1,gm-bad-2',
  }, { logStream: log.stream });
});
afterAll(async () => {
  await gw.close();
  await openai.close();
  await deepseek.close();
  await gemini.close();
});

describe('a key pool', () => {
  it('keys are used in turn', async () => {
    openai.reset();
    const { key } = await gw.account();
    for (let i = 0; i < 4; i++) expect((await gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi } })).status).toBe(200);
    const used = keysOf(openai.requests);
    expect(count(used, 'oa-key-a')).toBe(2);
    expect(count(used, 'oa-key-b')).toBe(2);
  });

  it('a throttled key rests until its retry-after and the next key answers; billed once per run', async () => {
    openai.reset();
    openai.throttle('oa-key-a', 60);
    const { key, accountId } = await gw.account();
    const before = await money(gw, accountId);
    const runs = 5;
    for (let i = 0; i < runs; i++) {
      openai.enqueue({ kind: 'text', text: 'ok', usage: { input: 10, output: 1 } });
      const r = await gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi } });
      expect(r.status).toBe(200);
    }
    const used = keysOf(openai.requests);
    // At most the one throttled attempt (the turn may have started at either key); every answer came from key b.
    expect(count(used, 'oa-key-a')).toBeLessThanOrEqual(1);
    expect(count(used, 'oa-key-b')).toBe(runs);
    expect(await money(gw, accountId)).toEqual({ balance: before.balance - runs * costMicro(10, 1), held: 0 });
    openai.unthrottle('oa-key-a');
  });

  it('a refused key rests, logged once as an operator error, and is skipped afterwards', async () => {
    deepseek.reset();
    const { key, accountId } = await gw.account();
    const before = await money(gw, accountId);
    const runs = 4;
    for (let i = 0; i < runs; i++) {
      deepseek.enqueue({ kind: 'text', text: 'ok', usage: { input: 10, output: 1 } });
      expect((await gw.api('/chat/completions', { key, body: { model: 'deepseek-test', messages: hi } })).status).toBe(200);
    }
    const used = keysOf(deepseek.requests);
    expect(count(used, 'ds-revoked')).toBe(1);
    expect(count(used, 'ds-good')).toBe(runs);
    expect(await money(gw, accountId)).toEqual({ balance: before.balance - runs * costMicro(10, 1), held: 0 });
    const operator = log.lines().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('provider refused the gateway key'));
    expect(operator).toHaveLength(1);
    expect(operator[0]).toMatchObject({ level: 50, provider: 'provider_7', key: 0 });
    expect(log.text()).not.toContain('ds-revoked');
    const metrics = (await http(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text;
    expect(metrics).toContain('gateway_rests_total{provider="provider_7",reason="refused"} 1');
    expect(metrics).toContain('gateway_upstream_retries_total{provider="provider_7",reason="key_refused"} 1');
  });

  it('every key refused → 503 model_unavailable, refunded; then refused at once, without a call', async () => {
    gemini.reset();
    const { key, accountId } = await gw.account();
    const before = await money(gw, accountId);
    const r = await gw.api('/chat/completions', { key, body: { model: 'gemini-test', messages: hi } });
    expect(r.status).toBe(503);
    expect(r.json.error.code).toBe('model_unavailable');
    expect(keysOf(gemini.requests).sort()).toEqual(['gm-bad-1', 'gm-bad-2']);
    expect(await money(gw, accountId)).toEqual(before);
    const again = await gw.api('/chat/completions', { key, body: { model: 'gemini-test', messages: hi, stream: true } });
    expect(again.status).toBe(503);
    expect(gemini.requests).toHaveLength(2);
    expect(await money(gw, accountId)).toEqual(before);
  });
});

describe('embeddings go through the same glue', () => {
  // A gateway of its own: the chat tests above left key a resting.
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({
      UPSTREAM_RETRIES: '2',
      UPSTREAM_BACKOFF_MS: '1',
      CATALOG_FILE: writeCatalog(chatCatalog([embeddingEntry('text-embedding-3-small')])),
      PROVIDER_1_BASE_URL: openai.baseUrl,
      PROVIDER_1_API_KEY: 'oa-key-a,oa-key-b',
    });
  });
  afterAll(async () => gw.close());

  it('a 500, then the vectors → 200, billed once; a throttled key rests and the other answers', async () => {
    openai.reset();
    const { key, accountId } = await gw.account({ key: { scopes: ['embeddings'] } });
    const before = await money(gw, accountId);
    openai.failFirst(1, 500);
    const r = await gw.api('/embeddings', { key, body: { model: 'text-embedding-3-small', input: 'hello world' } });
    expect(r.status).toBe(200);
    expect(openai.requests).toHaveLength(2);
    const charged = before.balance - (await money(gw, accountId)).balance;
    expect(charged).toBeGreaterThan(0);
    const ledger = (await gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger`)).json as { kind: string }[];
    expect(ledger.filter((e) => e.kind === 'settle')).toHaveLength(1);

    openai.reset();
    openai.throttle('oa-key-b', 60);
    for (let i = 0; i < 3; i++) expect((await gw.api('/embeddings', { key, body: { model: 'text-embedding-3-small', input: 'hello world' } })).status).toBe(200);
    expect(count(keysOf(openai.requests), 'oa-key-b')).toBeLessThanOrEqual(1);
    expect(count(keysOf(openai.requests), 'oa-key-a')).toBe(3);
    expect((await money(gw, accountId)).held).toBe(0);
  });
});

describe('where a key travels', () => {
  it('every chat and embeddings adapter puts the key only in headers or the path, where the glue replaces it per attempt', () => {
    const routing: ChatRouting = { params: [], max_tokens_field: 'max_tokens', developer_role: false, reasoning: false, json_schema: 'native', exclusive_sampling: false, forced_tool_choice: 'native', images: null, pdf: false };
    const call: ProviderCall = { providerModelId: 'm-1', routing, messages: [{ role: 'user', content: 'hi' }], maxTokens: 10, stream: false };
    const built = [
      ...Object.values(defaultAdapters()).map((adapter) => adapter?.buildRequest(call, KEY_SLOT)),
      ...Object.values(defaultEmbeddingsAdapters()).map((adapter) => adapter?.buildRequest({ providerModelId: 'e-1', input: 'hi', encoding: 'float', dimensions: undefined, user: undefined }, KEY_SLOT)),
    ];
    expect(built.length).toBeGreaterThanOrEqual(5);
    for (const request of built) {
      if (request === undefined) throw new Error('no adapter');
      expect(request.body).not.toContain(KEY_SLOT);
      const keyed = withKey(request, 'sk-real');
      expect(JSON.stringify(keyed)).not.toContain(KEY_SLOT);
      expect(JSON.stringify(keyed.headers) + keyed.path).toContain('sk-real');
    }
  });
});
