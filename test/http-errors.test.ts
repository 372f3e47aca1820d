/** Every failure in the spec's error shape: unknown routes, bad JSON, oversized bodies, wrong methods, internal errors. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/store/open-store.ts';
import { startGateway, type TestGateway } from './helpers/gateway.ts';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ BODY_LIMIT_BYTES: '2048' });
});
afterAll(async () => gw.close());

const shape = (json: { error: Record<string, unknown> }) => {
  expect(Object.keys(json)).toEqual(['error']);
  expect(typeof json.error.message).toBe('string');
  expect(typeof json.error.type).toBe('string');
  expect(typeof json.error.code).toBe('string');
};

describe('error shape', () => {
  it('unknown route → 404 not_found', async () => {
    const r = await gw.api('/no/such/route');
    expect(r.status).toBe(404);
    shape(r.json);
    expect(r.json.error.code).toBe('not_found');
    const root = await gw.api('/../../nothing');
    expect(root.status).toBe(404);
  });

  it('wrong method → 405 with Allow', async () => {
    const r = await gw.api('/chat/completions', { method: 'GET' });
    expect(r.status).toBe(405);
    shape(r.json);
    expect(r.headers.allow).toBe('POST');
    expect(r.json.error.code).toBe('method_not_allowed');
  });

  it('invalid JSON → 400 invalid_json (with param on chat)', async () => {
    const { key } = await gw.account();
    const r = await gw.api('/chat/completions', { key, rawBody: '{"model":', headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(400);
    expect(r.json.error).toEqual({ message: expect.any(String), type: 'invalid_request_error', code: 'invalid_json', param: null });
    // A form is not JSON: 415 (http-content-types.test.ts has the whole rule).
    const form = await gw.api('/chat/completions', { key, rawBody: 'model=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.json.error.code).toBe('unsupported_media_type');
  });

  it('oversized body → 413 payload_too_large', async () => {
    const { key } = await gw.account();
    const r = await gw.api('/chat/completions', { key, body: { model: 'x', messages: [{ role: 'user', content: 'a'.repeat(5000) }] } });
    expect(r.status).toBe(413);
    shape(r.json);
    expect(r.json.error.code).toBe('payload_too_large');
    expect(r.headers['x-ratelimit-limit']).toBe('600');
  });

  it('/admin answers 404 when ADMIN_TOKEN is unset, 401 with a wrong token', async () => {
    const noAdmin = await startGateway({ ADMIN_TOKEN: '' });
    try {
      const r = await noAdmin.admin('POST', '/admin/v1/accounts', { name: 'x' });
      expect(r.status).toBe(404);
      shape(r.json);
    } finally {
      await noAdmin.close();
    }
    const wrong = await fetch(`${gw.url}/admin/v1/accounts`, { method: 'POST', headers: { authorization: 'Bearer wrong-token-xxxxxxxxxxxx' } });
    expect(wrong.status).toBe(401);
  });

  it('unexpected exception → 500 internal_error without a stack trace', async () => {
    const store = await openStore('sqlite::memory:');
    const broken = await startGateway({}, { store });
    try {
      const { key } = await broken.account();
      // Break the store under the key lookup of a fresh key.
      await store.close();
      const r = await broken.api('/chat/completions', { key: key.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a')), body: {} });
      expect(r.status).toBe(500);
      shape(r.json);
      expect(r.json.error.code).toBe('internal_error');
      expect(r.text).not.toMatch(/at .*\.ts:\d+|Error:/);
    } finally {
      await broken.gateway.app.close();
    }
  });
});
