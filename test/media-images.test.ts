/**
 * POST /api/v1/images/generations over real HTTP against the predictions emulator: the
 * answer (200 within MEDIA_SYNC_WAIT_MS, else 202), n all or none, strict validation,
 * model errors, host errors, and the balance before and after to the micro-credit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { money } from './helpers/chat.ts';
import { http } from './helpers/gateway.ts';
import { jobOf, ledgerKinds, RATE_HEADERS, settled, startMediaHarness, type MediaHarness } from './helpers/media.ts';

const PIC = 4_000_000;

describe('images: success', () => {
  let h: MediaHarness;
  beforeAll(async () => {
    h = await startMediaHarness();
  });
  afterAll(async () => h.close());

  it('one image within the wait → 200 {created, data:[{url}]} with X-Job-Id and rate-limit headers; billed one image exactly', async () => {
    const { key, accountId } = await h.gw.account({ credits: 100, key: { scopes: ['images'] } });
    const before = await money(h.gw, accountId);
    const r = await h.gw.api('/images/generations', { key, body: { model: 'pic', prompt: 'a red fox', seed: 7 } });
    expect(r.status).toBe(200);
    expect(Object.keys(r.json).sort()).toEqual(['created', 'data']);
    expect(r.json.created).toBeCloseTo(Date.now() / 1000, -1);
    expect(r.json.data).toHaveLength(1);
    const url = r.json.data[0].url as string;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\/[a-z0-9]+\/out-0\.png$/);
    expect((await http(url)).status).toBe(200);
    const jobId = r.headers['x-job-id'] as string;
    expect(jobId).toMatch(/^[0-9a-f-]{36}$/);
    for (const name of RATE_HEADERS) expect(r.headers[name]).toBeDefined();
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - PIC, held: 0 });
    expect(await ledgerKinds(h.gw, accountId, jobId)).toEqual(['hold', 'settle']);
    const { job, media } = await jobOf(h.gw, jobId);
    expect(job).toMatchObject({ kind: 'image', model: 'pic', status: 'succeeded', held: PIC, cost: PIC });
    expect(media).toMatchObject({ outputs: [url], usage: { images: 1 }, errorCode: null });
    // The host got the model's defaults and the client's inputs, never `model` or `n`, and was asked to wait.
    const create = h.host.requests.find((q) => q.method === 'POST' && q.path === '/v1/models/acme/pic/predictions');
    expect(create?.body).toEqual({ input: { size: '1024x1024', prompt: 'a red fox', seed: 7 } });
    expect(create?.headers.prefer).toBe('wait=2');
    expect(create?.headers.authorization).toBe('Bearer emu-key');
  });
});
