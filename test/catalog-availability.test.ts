/**
 * GET /models tells the truth (spec: `available: false` "for models that cannot run now"):
 * a model no route runs, a chat provider without a key and a media host without a key are
 * each left out of the default list, shown with `available: false` and their reason under
 * `include_unavailable=true`, and their run route answers as it always did. The shipped catalog.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.ts';

let gw: TestGateway;
let key: string;
beforeAll(async () => {
  // provider_1 (chat) and provider_5 (images) have keys; provider_2 (chat) and provider_4 (videos) have none.
  gw = await startGateway({ PROVIDER_1_API_KEY: 'k1', PROVIDER_5_API_KEY: 'k5' });
  ({ key } = await gw.account({ key: { scopes: ['all'] } }));
});
afterAll(async () => gw?.close());

interface Listed {
  id: string;
  available: boolean;
  unavailable_reason?: string;
}

async function listed(query = ''): Promise<Map<string, Listed>> {
  const answer = await gw.api(`/models${query}`);
  expect(answer.status).toBe(200);
  return new Map((answer.json.data as Listed[]).map((m) => [m.id, m]));
}

const hi = [{ role: 'user', content: 'Hello' }];

describe('models that cannot run now', () => {
  it('a text model no chat provider serves: unlisted by default, available false with its reason, chat still 400 model_not_supported', async () => {
    expect((await listed()).has('gpt-oss-120b')).toBe(false);
    const shown = (await listed('?include_unavailable=true')).get('gpt-oss-120b');
    expect(shown).toMatchObject({ available: false, unavailable_reason: 'No chat provider of this gateway serves it (its provider is provider_8).' });
    expect((await gw.api('/models/gpt-oss-120b')).json).toMatchObject({ available: false, unavailable_reason: shown?.unavailable_reason });
    const run = await gw.api('/chat/completions', { key, body: { model: 'gpt-oss-120b', messages: hi } });
    expect(run.status).toBe(400);
    expect(run.json.error.code).toBe('model_not_supported');
  });

  it('a chat model whose provider has no key: unlisted by default, the reason names the variable to set, chat 503 model_unavailable saying the same', async () => {
    expect((await listed()).has('claude-sonnet-4-5')).toBe(false);
    const shown = (await listed('?include_unavailable=true')).get('claude-sonnet-4-5');
    expect(shown).toMatchObject({ available: false, unavailable_reason: 'The gateway has no API key for provider_2: the operator must set PROVIDER_2_API_KEY.' });
    const run = await gw.api('/chat/completions', { key, body: { model: 'claude-sonnet-4-5', messages: hi } });
    expect(run.status).toBe(503);
    expect(run.json.error.code).toBe('model_unavailable');
    expect(run.json.error.message).toContain('PROVIDER_2_API_KEY');
    expect(run.json.error.message).not.toMatch(/retry/i);
  });

  it('a media model whose host has no key: unlisted by default, available false naming the variable, the video route 503 model_unavailable', async () => {
    expect((await listed()).has('kling-v3-standard')).toBe(false);
    const shown = (await listed('?include_unavailable=true')).get('kling-v3-standard');
    expect(shown).toMatchObject({ available: false, unavailable_reason: 'The gateway has no API key for provider_4: the operator must set PROVIDER_4_API_KEY.' });
    const run = await gw.api('/videos/generations', { key, body: { model: 'kling-v3-standard', prompt: 'Waves', duration: 5 } });
    expect(run.status).toBe(503);
    expect(run.json.error.code).toBe('model_unavailable');
    expect(run.json.error.message).toContain('PROVIDER_4_API_KEY');
    expect(run.json.error.message).not.toMatch(/retry/i);
  });

  it('models with no route at all (robotics, music) and an embedding model no embeddings provider serves are unavailable too; the embeddings route answers as before', async () => {
    const all = await listed('?include_unavailable=true');
    expect(all.get('openvla-7b')).toMatchObject({ available: false, unavailable_reason: 'This gateway has no route that runs vla_robotics models.' });
    expect(all.get('stable-audio-2-5')).toMatchObject({ available: false, unavailable_reason: 'This gateway has no route that runs audio models.' });
    expect(all.get('qwen3-embedding-8b')).toMatchObject({ available: false, unavailable_reason: 'No embeddings provider of this gateway serves it (its provider is provider_8).' });
    const run = await gw.api('/embeddings', { key, body: { model: 'qwen3-embedding-8b', input: 'hi' } });
    expect(run.status).toBe(400);
    expect(run.json.error.code).toBe('validation_failed');
  });

  it('every model in the default list is available, and the runnable ones are there: provider_1 chat, provider_5 images', async () => {
    const shown = await listed();
    for (const model of shown.values()) expect(model.available, model.id).toBe(true);
    expect(shown.has('gpt-6-luna')).toBe(true);
    expect(shown.has('flux-2-pro')).toBe(true);
  });
});
