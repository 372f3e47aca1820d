/** Scopes: a key reaches only the routes of its scopes; `all` covers every route. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.ts';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => gw.close());

const ROUTES: { scope: string; method: 'GET' | 'POST'; path: string; without?: string[] }[] = [
  { scope: 'read', method: 'GET', path: '/models' },
  { scope: 'read', method: 'GET', path: '/models/gpt-5-mini' },
  { scope: 'chat', method: 'POST', path: '/chat/completions' },
  { scope: 'images', method: 'POST', path: '/images/generations' },
  { scope: 'video', method: 'POST', path: '/videos/generations' },
  { scope: 'audio', method: 'POST', path: '/audio/speech' },
  { scope: 'audio', method: 'POST', path: '/audio/transcriptions' },
  { scope: 'audio', method: 'POST', path: '/audio/uploads' },
  { scope: 'embeddings', method: 'POST', path: '/embeddings' },
  // Without `jobs` a key polls jobs of the kinds it may create (test/jobs.test.ts): only a key that creates none is refused.
  { scope: 'jobs', method: 'GET', path: '/jobs/00000000-0000-4000-8000-000000000000', without: ['read'] },
  { scope: 'fine_tuning', method: 'POST', path: '/fine_tuning/jobs' },
  { scope: 'fine_tuning', method: 'GET', path: '/fine_tuning/jobs' },
];

describe('403 insufficient_scope', () => {
  for (const route of ROUTES) {
    it(`${route.method} ${route.path} without '${route.scope}' → 403 naming the scope`, async () => {
      // A key with every scope except the one the route needs (and not `all`), unless the row says otherwise.
      const others = route.without ?? ['read', 'chat', 'images', 'video', 'audio', 'embeddings', 'jobs', 'fine_tuning'].filter((s) => s !== route.scope);
      const { key } = await gw.account({ key: { scopes: others } });
      const response = await gw.api(route.path, { method: route.method, key, body: route.method === 'POST' ? {} : undefined });
      expect(response.status).toBe(403);
      expect(response.json.error).toMatchObject({
        code: 'insufficient_scope',
        message: `This API key lacks the '${route.scope}' scope`,
      });
    });
  }

  it("a key with 'all' passes the scope check on every route", async () => {
    const { key } = await gw.account({ key: { scopes: ['all'] } });
    for (const route of ROUTES) {
      const response = await gw.api(route.path, { method: route.method, key, body: route.method === 'POST' ? {} : undefined });
      expect(response.json?.error?.code, `${route.method} ${route.path}`).not.toBe('insufficient_scope');
      expect(response.status).not.toBe(401);
    }
  });

  it('new keys default to read + chat', async () => {
    const { accountId } = await gw.account();
    const created = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { name: 'defaults' });
    expect(created.json.scopes).toEqual(['read', 'chat']);
    expect(created.json.requests_per_minute).toBe(600);
    const images = await gw.api('/images/generations', { key: created.json.key, body: {} });
    expect(images.json.error.code).toBe('insufficient_scope');
  });
});
