/**
 * Each pricing unit settles as DECISIONS.md says, over real HTTP: per_output × outputs,
 * per_gpu_second × metrics.predict_time (the estimate held, capped by the time limit; a run stopped
 * at the limit is canceled at the host and billed for the limit). per_image, per_video and
 * per_second_of_output are in media-images and media-videos.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { money } from './helpers/chat.ts';
import { ledgerKinds, settled, startMediaHarness, type MediaHarness } from './helpers/media-host.ts';

describe('pricing units over HTTP', () => {
  let h: MediaHarness;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    h = await startMediaHarness();
    ({ key, accountId } = await h.gw.account({ credits: 1000, key: { scopes: ['images', 'video'] } }));
  });
  afterAll(async () => h.close());

  it('per_output: USD 0.02 × 2 outputs', async () => {
    const before = await money(h.gw, accountId);
    const r = await h.gw.api('/images/generations', { key, body: { model: 'pic-outputs', prompt: 'x', n: 2 } });
    expect(r.status).toBe(200);
    const { job, media } = await settled(h.gw, r.headers['x-job-id'] as string);
    expect(job).toMatchObject({ held: 4_000_000, cost: 4_000_000 });
    expect(media?.usage).toEqual({ outputs: 2 });
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - 4_000_000, held: 0 });
  });

  it('per_gpu_second: the estimate (here the 1-second limit) held per image; metrics.predict_time billed (0.3 s + 0.45 s at USD 0.001/s)', async () => {
    const before = await money(h.gw, accountId);
    h.host.enqueue({ kind: 'prediction', durationMs: 30, predictTime: 0.3 });
    h.host.enqueue({ kind: 'prediction', durationMs: 30, predictTime: 0.45 });
    const r = await h.gw.api('/images/generations', { key, body: { model: 'pic-gpu', prompt: 'x', n: 2 } });
    expect(r.status).toBe(200);
    const { job, media } = await settled(h.gw, r.headers['x-job-id'] as string);
    expect(job).toMatchObject({ status: 'succeeded', held: 200_000, cost: 75_000 });
    expect(media?.usage).toEqual({ gpu_seconds: 0.75 });
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - 75_000, held: 0 });
  });

  it('a host that reports more GPU time than the limit is billed the limit', async () => {
    h.host.enqueue({ kind: 'prediction', durationMs: 30, predictTime: 4.2 });
    const r = await h.gw.api('/images/generations', { key, body: { model: 'pic-gpu', prompt: 'x' } });
    const { job } = await settled(h.gw, r.headers['x-job-id'] as string);
    expect(job).toMatchObject({ status: 'succeeded', held: 100_000, cost: 100_000 });
  });

  it('a GPU video run still going at its 1-second limit → canceled at the host, the job canceled and billed for the limit, once', async () => {
    const before = await money(h.gw, accountId);
    h.host.reset();
    h.host.enqueue({ kind: 'prediction', durationMs: 10_000 });
    const started = Date.now();
    const r = await h.gw.api('/videos/generations', { key, body: { model: 'clip-gpu', prompt: 'x' } });
    expect(r.status).toBe(202);
    const { job, media } = await settled(h.gw, r.json.job_id);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(job).toMatchObject({ status: 'canceled', held: 200_000, cost: 200_000 });
    expect(media).toMatchObject({ usage: { gpu_seconds: 1 }, errorCode: 'provider_timeout' });
    expect(media?.errorMessage).toContain('time limit of 1 GPU-second and is billed');
    expect(h.host.requests.filter((q) => q.path.endsWith('/cancel'))).toHaveLength(1);
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - 200_000, held: 0 });
    expect(await ledgerKinds(h.gw, accountId, r.json.job_id)).toEqual(['hold', 'settle']);
  });

  it('time queued at the host (starting) is not GPU time: a run queued longer than the limit is not stopped', async () => {
    h.host.enqueue({ kind: 'prediction', startMs: 1300, durationMs: 200, predictTime: 0.3 });
    const r = await h.gw.api('/videos/generations', { key, body: { model: 'clip-gpu', prompt: 'x' } });
    const { job } = await settled(h.gw, r.json.job_id);
    expect(job).toMatchObject({ status: 'succeeded', held: 200_000, cost: 60_000 });
  });

  it('a GPU image run past its limit is billed the limit too (the answer is 202, the job ends canceled)', async () => {
    const before = await money(h.gw, accountId);
    h.host.enqueue({ kind: 'prediction', durationMs: 10_000 });
    const r = await h.gw.api('/images/generations', { key, body: { model: 'pic-gpu', prompt: 'x' } });
    expect(r.status).toBe(202);
    const { job } = await settled(h.gw, r.json.job_id);
    expect(job).toMatchObject({ status: 'canceled', cost: 100_000 });
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - 100_000, held: 0 });
  });
});

describe('a job past MEDIA_JOB_TIMEOUT_MS', () => {
  let h: MediaHarness;
  beforeAll(async () => {
    h = await startMediaHarness({ MEDIA_JOB_TIMEOUT_MS: '1000' });
  });
  afterAll(async () => h.close());

  it('is canceled at its host and refunded (provider_timeout)', async () => {
    const { key, accountId } = await h.gw.account({ credits: 1000, key: { scopes: ['video'] } });
    h.host.enqueue({ kind: 'prediction', durationMs: 10_000 });
    const r = await h.gw.api('/videos/generations', { key, body: { model: 'clip', prompt: 'x' } });
    expect(r.status).toBe(202);
    const { job } = await settled(h.gw, r.json.job_id);
    expect(job).toMatchObject({ status: 'failed', errorCode: 'provider_timeout' });
    expect(h.host.requests.filter((q) => q.path.endsWith('/cancel'))).toHaveLength(1);
    expect(await money(h.gw, accountId)).toEqual({ balance: 1_000_000_000, held: 0 });
  });
});
