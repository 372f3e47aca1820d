/** One structured log line per request (docs/operations.md), never with a secret. */
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../emulators/index.ts';
import type { Emulator } from '../emulators/types.ts';
import { writeCatalog } from './fixtures/catalog.ts';
import { chatCatalog } from './helpers/chat.ts';
import { ADMIN_TOKEN, http, startGateway, type TestGateway } from './helpers/gateway.ts';
import { closedPort } from './helpers/tcp-proxy.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- log lines are inspected freely
type Line = Record<string, any>;

let gw: TestGateway;
let openai: Emulator;
let anthropic: Emulator;
/** provider_7 points at a closed port (a network failure); provider_2 at an emulator that refuses this key. */
const UNREACHABLE_KEY = 'sk-deepseek-secret-unreachable-0123456789';
const REFUSED_KEY = 'sk-ant-secret-refused-0123456789';
let raw = '';
const lines = (): Line[] => raw.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Line);
const requestLines = () => lines().filter((l) => l.msg === 'request');

beforeAll(async () => {
  openai = await startEmulator('openai');
  anthropic = await startEmulator('anthropic');
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      raw += chunk.toString();
      done();
    },
  });
  gw = await startGateway({
    LOG_LEVEL: 'info',
    CATALOG_FILE: writeCatalog(chatCatalog()),
    PROVIDER_1_BASE_URL: openai.baseUrl,
    PROVIDER_1_API_KEY: openai.apiKey,
    PROVIDER_7_BASE_URL: `http://127.0.0.1:${await closedPort()}`,
    PROVIDER_7_API_KEY: UNREACHABLE_KEY,
    PROVIDER_2_BASE_URL: anthropic.baseUrl,
    PROVIDER_2_API_KEY: REFUSED_KEY,
  }, { logStream });
});
afterAll(async () => {
  await gw.close();
  await openai.close();
  await anthropic.close();
});

describe('request log', () => {
  it("a provider failure's line says why: a network failure (unreachable) and a refused key read differently, and neither shows the key", async () => {
    const { key } = await gw.account();
    const before = requestLines().length;
    const hi = [{ role: 'user', content: 'Hi' }];
    const unreachable = await gw.api('/chat/completions', { key, body: { model: 'deepseek-test', messages: hi } });
    expect(unreachable.status).toBe(502);
    const refused = await gw.api('/chat/completions', { key, body: { model: 'claude-test', messages: hi } });
    expect(refused.status).toBe(503);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const [network, auth] = requestLines().slice(before);
    expect(network).toMatchObject({ status: 502, code: 'upstream_error', model: 'deepseek-test' });
    expect(network?.cause).toMatch(/^the provider could not be reached: ECONNREFUSED, connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
    expect(auth).toMatchObject({ status: 503, code: 'model_unavailable', model: 'claude-test' });
    expect(auth?.cause).toBe('the provider answered HTTP 401: it refused the API key (check the PROVIDER_…_API_KEY)');
    // Neither the answers nor any log line carry the provider keys (nor a part of them).
    for (const secret of [UNREACHABLE_KEY, REFUSED_KEY]) {
      expect(raw).not.toContain(secret.slice(0, 12));
      expect(unreachable.text + refused.text).not.toContain(secret.slice(0, 12));
    }
    expect(unreachable.json.error.message).not.toContain('ECONNREFUSED');
  });

  it('a chat run logs one line with job id, key id, model, status, duration and added time', async () => {
    const { key, keyId } = await gw.account();
    openai.enqueue({ kind: 'text', text: 'Hello', usage: { input: 9, output: 3 } });
    const before = requestLines().length;
    const r = await gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] } });
    expect(r.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const mine = requestLines().slice(before);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      level: 30,
      msg: 'request',
      route: 'POST /api/v1/chat/completions',
      status: 200,
      job_id: r.headers['x-service-job-id'],
      key_id: keyId,
      model: 'gpt-test',
    });
    expect(mine[0]?.duration_ms).toBeGreaterThan(0);
    expect(typeof mine[0]?.reqId).toBe('string');
  });

  it('an error logs its code; a 401 logs no key id', async () => {
    const before = requestLines().length;
    const r = await gw.api('/chat/completions', { key: 'svc_live_' + 'a'.repeat(64), body: { model: 'gpt-test', messages: [] } });
    expect(r.status).toBe(401);
    const { key } = await gw.account();
    await gw.api('/models/no-such-model', { key });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const [unauthorised, missing] = requestLines().slice(before).filter((l) => l.route !== 'POST /admin/v1/accounts' && !String(l.route).startsWith('POST /admin'));
    expect(unauthorised).toMatchObject({ route: 'POST /api/v1/chat/completions', status: 401, code: 'invalid_api_key' });
    expect(unauthorised?.key_id).toBeUndefined();
    expect(missing).toMatchObject({ route: 'GET /api/v1/models/*', status: 404, code: 'model_not_found', added_ms: expect.any(Number) });
  });

  it('a client hanging up mid-body is one info line, no error level and no stack (a JSON route and a multipart one)', async () => {
    const { key } = await gw.account({ key: { scopes: ['all'] } });
    const port = Number(new URL(gw.url).port);
    for (const [path, type] of [['/api/v1/chat/completions', 'application/json'], ['/api/v1/audio/uploads', 'multipart/form-data; boundary=x']]) {
      const before = lines().length;
      const socket = connect(port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(`POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${key}\r\ncontent-type: ${type}\r\ncontent-length: 1000\r\n\r\n{"model":`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      socket.destroy();
      const start = Date.now();
      while (!lines().slice(before).some((l) => l.msg === 'the client closed the connection while sending its body') && Date.now() - start < 5_000) await new Promise((resolve) => setTimeout(resolve, 20));
      const mine = lines().slice(before);
      expect(mine.filter((l) => l.msg === 'the client closed the connection while sending its body'), path).toEqual([expect.objectContaining({ level: 30, url: path, method: 'POST' })]);
      expect(mine.filter((l) => l.level >= 50), path).toEqual([]);
      expect(JSON.stringify(mine), path).not.toContain('stack');
    }
  });

  it('an MCP request with a key logs the key id', async () => {
    const { key, keyId } = await gw.account();
    const before = requestLines().length;
    await http(`${gw.url}/mcp`, { key, body: { jsonrpc: '2.0', id: 7, method: 'ping' }, headers: { accept: 'application/json, text/event-stream' } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(requestLines().slice(before)).toEqual([expect.objectContaining({ route: 'POST /mcp', status: 200, key_id: keyId })]);
  });

  it('no secret ever reaches the log: not the key, not the admin token, not the provider key', async () => {
    const { key } = await gw.account();
    openai.enqueue({ kind: 'text', text: 'Hello', usage: { input: 9, output: 3 } });
    await gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] } });
    await gw.api('/models', { key: key.slice(0, -1) + 'x' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    for (const secret of [key, key.slice(9, 41), ADMIN_TOKEN, openai.apiKey]) expect(raw).not.toContain(secret);
    expect(raw).not.toContain('svc_live_');
  });
});
