/**
 * POST /api/v1/videos/generations over real HTTP against the predictions emulator: always
 * 202 with Location and rate-limit headers once the host took the run; image-field rules;
 * host errors at creation; the job billed (or refunded) in the background to the micro-credit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { money } from './helpers/chat.ts';
import { http } from './helpers/gateway.ts';
import { jobOf, ledgerKinds, RATE_HEADERS, settled, startMediaHarness, type MediaHarness } from './helpers/media-host.ts';

const CLIP = 98_000_000;

describe('videos', () => {
  let h: MediaHarness;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    h = await startMediaHarness();
    ({ key, accountId } = await h.gw.account({ credits: 1000, key: { scopes: ['video'] } }));
  });
  afterAll(async () => h.close());

  it('→ 202 {job_id, status: processing}, Location, X-Job-Id and rate-limit headers; the job is billed one video when it ends', async () => {
    const before = await money(h.gw, accountId);
    h.host.reset();
    h.host.enqueue({ kind: 'prediction', durationMs: 300 });
    const r = await h.gw.api('/videos/generations', { key, body: { model: 'clip', prompt: 'a drone shot over hills', image: 'https://example.com/first.png' } });
    expect(r.status).toBe(202);
    expect(r.json).toEqual({ job_id: r.json.job_id, status: 'processing' });
    expect(r.headers.location).toBe(`/api/v1/jobs/${r.json.job_id}`);
    expect(r.headers['x-job-id']).toBe(r.json.job_id);
    for (const name of RATE_HEADERS) expect(r.headers[name]).toBeDefined();
    // The host took the run before the answer: the job is stored processing with its prediction id.
    const early = await jobOf(h.gw, r.json.job_id);
    expect(early.job?.status).toBe('processing');
    expect(early.media?.predictionIds).toHaveLength(1);
    expect((await money(h.gw, accountId)).held).toBe(CLIP);
    const create = h.host.requests[0];
    expect(create?.path).toBe('/v1/models/acme/clip/predictions');
    expect(create?.headers.prefer).toBeUndefined();
    expect(create?.body).toEqual({ input: { duration: 5, resolution: '720p', prompt: 'a drone shot over hills', image: 'https://example.com/first.png' } });

    const { job, media } = await settled(h.gw, r.json.job_id);
    expect(job).toMatchObject({ kind: 'video', model: 'clip', status: 'succeeded', held: CLIP, cost: CLIP });
    expect(media?.usage).toEqual({ videos: 1 });
    const url = media?.outputs?.[0] as string;
    expect(url).toMatch(/out-0\.mp4$/);
    const file = await http(url);
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe('video/mp4');
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - CLIP, held: 0 });
    expect(await ledgerKinds(h.gw, accountId, r.json.job_id)).toEqual(['hold', 'settle']);
  });

  it('per second of output: 10 s held at USD 0.0925/s; billed on the seconds the host reports', async () => {
    const before = await money(h.gw, accountId);
    h.host.enqueue({ kind: 'prediction', durationMs: 200, outputSeconds: 9.5 });
    const r = await h.gw.api('/videos/generations', { key, body: { model: 'clip-seconds', prompt: 'x', duration: 10 } });
    expect(r.status).toBe(202);
    expect((await money(h.gw, accountId)).held).toBe(92_500_000);
    const { job, media } = await settled(h.gw, r.json.job_id);
    // 9.5 s × 0.4625/5 USD = USD 0.878750 = 87.875 credits.
    expect(job).toMatchObject({ status: 'succeeded', held: 92_500_000, cost: 87_875_000 });
    expect(media?.usage).toEqual({ output_seconds: 9.5 });
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - 87_875_000, held: 0 });
  });

  it('per second of output, the default duration: 5 s held and billed', async () => {
    const before = await money(h.gw, accountId);
    const r = await h.gw.api('/videos/generations', { key, body: { model: 'clip-seconds', prompt: 'x' } });
    const { job } = await settled(h.gw, r.json.job_id);
    expect(job).toMatchObject({ status: 'succeeded', held: 46_250_000, cost: 46_250_000 });
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - 46_250_000, held: 0 });
  });

  it('a failed prediction → the job fails and is refunded in full (the 202 was already sent)', async () => {
    const before = await money(h.gw, accountId);
    h.host.enqueue({ kind: 'prediction', durationMs: 150, fail: 'Content flagged' });
    const r = await h.gw.api('/videos/generations', { key, body: { model: 'clip', prompt: 'x' } });
    expect(r.status).toBe(202);
    const { job, media } = await settled(h.gw, r.json.job_id);
    expect(job).toMatchObject({ status: 'failed', errorCode: 'upstream_error', cost: 0 });
    expect(media).toMatchObject({ outputs: null, errorCode: 'upstream_error' });
    expect(media?.errorMessage).toContain('Content flagged');
    expect(await money(h.gw, accountId)).toEqual(before);
    expect(await ledgerKinds(h.gw, accountId, r.json.job_id)).toEqual(['hold', 'refund']);
  });

  it('the host refuses the create (422, 429, 500) → the error with rate-limit headers, refunded, no 202', async () => {
    const before = await money(h.gw, accountId);
    for (const [hostStatus, status, code] of [[422, 400, 'provider_rejected_request'], [429, 429, 'upstream_rate_limited'], [500, 502, 'upstream_error']] as const) {
      h.host.enqueue({ kind: 'error', status: hostStatus });
      const r = await h.gw.api('/videos/generations', { key, body: { model: 'clip', prompt: 'x' } });
      expect(r.status).toBe(status);
      expect(r.json.error.code).toBe(code);
      for (const name of RATE_HEADERS) expect(r.headers[name]).toBeDefined();
      expect(r.headers.location).toBeUndefined();
      expect(await ledgerKinds(h.gw, accountId, r.headers['x-job-id'] as string)).toEqual(['hold', 'refund']);
    }
    expect(await money(h.gw, accountId)).toEqual(before);
  });

  it('end_image without image, an image field the model has no input for, a bad duration → 400 validation_failed naming it, with rate-limit headers', async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ model: 'clip', prompt: 'x', end_image: 'https://example.com/last.png' }, 'end_image', /needs image/],
      [{ model: 'clip-text', prompt: 'x', image: 'https://example.com/first.png' }, 'image', /has no image input/],
      [{ model: 'clip-text', prompt: 'x', end_image: 'https://example.com/last.png' }, 'end_image', /has no end_image input/],
      [{ model: 'clip', prompt: 'x', image: 'http://example.com/first.png' }, 'image', /https URL or a base64 data URL/],
      [{ model: 'clip', prompt: 'x', duration: 7 }, 'duration', /one of 5, 10/],
      [{ model: 'clip', prompt: 'x', n: 2 }, 'n', /unknown field/],
    ];
    for (const [body, param, message] of cases) {
      const r = await h.gw.api('/videos/generations', { key, body });
      expect(r.status, param).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'validation_failed', param });
      expect(r.json.error.details.fieldErrors[param].join(' ')).toMatch(message);
      for (const name of RATE_HEADERS) expect(r.headers[name]).toBeDefined();
    }
  });

  it('a key revoked after the 202 does not stop the accepted job: it runs to its end and is billed', async () => {
    const other = await h.gw.account({ credits: 1000, key: { scopes: ['video'] } });
    h.host.enqueue({ kind: 'prediction', durationMs: 400 });
    const r = await h.gw.api('/videos/generations', { key: other.key, body: { model: 'clip', prompt: 'x' } });
    expect(r.status).toBe(202);
    expect((await h.gw.admin('POST', `/admin/v1/keys/${other.keyId}/revoke`)).status).toBe(200);
    const { job } = await settled(h.gw, r.json.job_id);
    expect(job).toMatchObject({ status: 'succeeded', cost: CLIP });
    expect(await money(h.gw, other.accountId)).toEqual({ balance: 1_000_000_000 - CLIP, held: 0 });
  });

  it('an image slug → 404 model_not_found; a key without the video scope → 403; both with rate-limit headers', async () => {
    const r = await h.gw.api('/videos/generations', { key, body: { model: 'pic', prompt: 'x' } });
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('model_not_found');
    for (const name of RATE_HEADERS) expect(r.headers[name]).toBeDefined();
    const imagesOnly = await h.gw.account({ credits: 10, key: { scopes: ['images'] } });
    const scope = await h.gw.api('/videos/generations', { key: imagesOnly.key, body: { model: 'clip', prompt: 'x' } });
    expect(scope.status).toBe(403);
    expect(scope.json.error.message).toBe("This API key lacks the 'video' scope");
    for (const name of RATE_HEADERS) expect(scope.headers[name]).toBeDefined();
  });
});
