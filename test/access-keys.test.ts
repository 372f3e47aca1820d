/** Authentication: every 401 case answers invalid_api_key, "Invalid API key", authentication_error. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.ts';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => gw.close());

function expectInvalidKey(response: { status: number; json: { error: Record<string, unknown> }; headers: Record<string, unknown> }) {
  expect(response.status).toBe(401);
  expect(response.json.error).toMatchObject({ code: 'invalid_api_key', message: 'Invalid API key', type: 'authentication_error' });
  expect(response.headers['x-ratelimit-limit']).toBeUndefined();
}

describe('401 invalid_api_key', () => {
  it('missing Authorization header', async () => {
    expectInvalidKey(await gw.api('/chat/completions', { body: {} }));
  });

  it('wrong scheme (Basic instead of Bearer)', async () => {
    const { key } = await gw.account();
    expectInvalidKey(await gw.api('/chat/completions', { body: {}, headers: { authorization: `Basic ${key}` } }));
  });

  it('malformed key (not svc_live_ + 64 hex)', async () => {
    expectInvalidKey(await gw.api('/chat/completions', { body: {}, key: 'svc_live_1234' }));
    expectInvalidKey(await gw.api('/chat/completions', { body: {}, key: 'svc_live_' + 'G'.repeat(64) }));
    expectInvalidKey(await gw.api('/chat/completions', { body: {}, key: 'sk-' + 'a'.repeat(64) }));
  });

  it('unknown well-formed key', async () => {
    expectInvalidKey(await gw.api('/chat/completions', { body: {}, key: 'svc_live_' + 'a'.repeat(64) }));
  });

  it('revoked key: 401 at once, also after it was cached', async () => {
    const { key, keyId } = await gw.account();
    expect((await gw.api('/chat/completions', { body: {}, key })).status).not.toBe(401);
    expect((await gw.admin('POST', `/admin/v1/keys/${keyId}/revoke`)).status).toBe(200);
    expectInvalidKey(await gw.api('/chat/completions', { body: {}, key }));
  });

  it('expired key', async () => {
    const expires = new Date(Date.now() + 1500).toISOString();
    const { key } = await gw.account({ key: { expires } });
    expect((await gw.api('/chat/completions', { body: {}, key })).status).not.toBe(401);
    await new Promise((r) => setTimeout(r, 1600));
    expectInvalidKey(await gw.api('/chat/completions', { body: {}, key }));
  });

  it('rotated-away key: old 401 at once, new key works', async () => {
    const { key, keyId } = await gw.account();
    expect((await gw.api('/chat/completions', { body: {}, key })).status).not.toBe(401);
    const rotated = await gw.admin('POST', `/admin/v1/keys/${keyId}/rotate`);
    expect(rotated.status).toBe(201);
    expectInvalidKey(await gw.api('/chat/completions', { body: {}, key }));
    expect((await gw.api('/chat/completions', { body: {}, key: rotated.json.key })).status).not.toBe(401);
  });

  it('GET /models with a bad key is 401 (the key-check call)', async () => {
    expectInvalidKey(await gw.api('/models?limit=1', { key: 'svc_live_' + 'b'.repeat(64) }));
  });
});
