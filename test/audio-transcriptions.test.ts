/**
 * POST /api/v1/audio/transcriptions over real HTTP: multipart file + model, the answer shapes
 * (json, text, srt, vtt, verbose_json), SeamlessM4T-type models that need an ISO-639-1
 * language, GPU time held at the catalog's estimate and settled on the host's predict time
 * (capped only by the model's time limit, never by the audio's length), the audio's own length
 * in verbose_json, the body limits, and the money refusals — with balances before and after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { money } from './helpers/chat.ts';
import { MP3, oggOpus, oggOpusPacked, wav, webm } from './helpers/audio.ts';
import { lastInput, MICRO_PER_GPU_SECOND, postForm, startAudioHarness, type AudioHarness } from './helpers/audio-host.ts';
import { png } from './helpers/media.ts';
import { ledgerKinds, settled } from './helpers/media-host.ts';
import { rawExchange } from './helpers/raw-http.ts';

/** stt: an estimate of 5 GPU-seconds, a 30-second limit: the estimate is held. */
const HELD = 5 * MICRO_PER_GPU_SECOND;

describe('POST /audio/transcriptions', () => {
  let h: AudioHarness;
  let key: string;
  let accountId: string;
  let url: string;
  beforeAll(async () => {
    h = await startAudioHarness();
    ({ key, accountId } = await h.gw.account({ credits: 100, key: { scopes: ['audio'] } }));
    url = `${h.gw.url}/api/v1/audio/transcriptions`;
  });
  afterAll(async () => h.close());

  it('json: 200 {text}, rate-limit headers and X-Job-Id; held the estimate (5 GPU-seconds), settled on predict_time 0.8 s', async () => {
    const before = await money(h.gw, accountId);
    h.host.enqueue({ kind: 'prediction', durationMs: 20, predictTime: 0.8 });
    const r = await postForm(url, key, { model: 'stt' }, { bytes: wav(40), type: 'audio/wav', name: 'call.wav' });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ text: 'Hello from the emulated host. This is a transcript.' });
    expect(r.headers['x-ratelimit-limit']).toBe('600');
    const jobId = r.headers['x-job-id'] as string;
    const { job, media } = await settled(h.gw, jobId);
    expect(job).toMatchObject({ kind: 'transcription', status: 'succeeded', held: HELD, cost: 80_000 });
    expect(media?.usage).toEqual({ gpu_seconds: 0.8 });
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - 80_000, held: 0 });
    expect(await ledgerKinds(h.gw, accountId, jobId)).toEqual(['hold', 'settle']);
    const sent = lastInput(h.host);
    expect(sent.file).toMatch(/^data:audio\/wav;base64,UklGR/);
    expect(sent.response_format).toBe('json');
  });

  // Issue 33: these were capped by the audio's length (a 3-second WAV held 3 and billed 3 whatever the host reported).
  it("the host's predict_time is billed, not the audio's length: a 2-second WAV taking 3.5 GPU-seconds is billed 3.5", async () => {
    const before = await money(h.gw, accountId);
    h.host.enqueue({ kind: 'prediction', durationMs: 20, predictTime: 3.5 });
    const r = await postForm(url, key, { model: 'stt' }, { bytes: wav(2), type: 'audio/wav' });
    expect(r.status).toBe(200);
    const { job, media } = await settled(h.gw, r.headers['x-job-id'] as string);
    expect(job).toMatchObject({ held: HELD, cost: 3.5 * MICRO_PER_GPU_SECOND });
    expect(media?.usage).toEqual({ gpu_seconds: 3.5 });
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - 3.5 * MICRO_PER_GPU_SECOND, held: 0 });
  });

  it('predict_time is capped only by the time limit (30 s); the charge, as on every run, never exceeds what was held (the estimate)', async () => {
    const before = await money(h.gw, accountId);
    h.host.enqueue({ kind: 'prediction', durationMs: 20, predictTime: 45 });
    const r = await postForm(url, key, { model: 'stt' }, { bytes: wav(3), type: 'audio/wav' });
    expect(r.status).toBe(200);
    const { job, media } = await settled(h.gw, r.headers['x-job-id'] as string);
    expect(media?.usage).toEqual({ gpu_seconds: 30 });
    expect(job).toMatchObject({ held: HELD, cost: HELD });
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - HELD, held: 0 });
  });

  // The length a file reports about itself is not believed: verbose_json gives the audio's own.
  const lying: [string, Buffer, string][] = [
    ['a WebM whose Duration header says 5 s and whose blocks run 70 s', webm(70, { headerSeconds: 5 }), 'audio/webm'],
    ['a chained Ogg Opus (a 4 s link, then a 70 s one) that music-metadata measures 4 s', Buffer.concat([oggOpus(4), oggOpusPacked(70, 0x7e57)]), 'audio/ogg'],
  ];
  for (const [name, bytes, type] of lying) {
    it(`the length is the audio's own: ${name} is 70 s in verbose_json; held the estimate, billed predict_time 4 s`, async () => {
      const before = await money(h.gw, accountId);
      h.host.enqueue({ kind: 'prediction', durationMs: 20, predictTime: 4 });
      const r = await postForm(url, key, { model: 'stt', response_format: 'verbose_json' }, { bytes, type });
      expect(r.status, r.text).toBe(200);
      expect(r.json.duration).toBeGreaterThanOrEqual(70);
      const { job } = await settled(h.gw, r.headers['x-job-id'] as string);
      expect(job).toMatchObject({ held: HELD, cost: 4 * MICRO_PER_GPU_SECOND });
      expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - 4 * MICRO_PER_GPU_SECOND, held: 0 });
    });
  }

  it('text, srt, vtt and verbose_json answers from the host segments (the MP3 fixture)', async () => {
    const text = await postForm(url, key, { model: 'stt', response_format: 'text' }, { bytes: MP3, type: 'audio/mpeg' });
    expect(text.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(text.text).toBe('Hello from the emulated host. This is a transcript.\n');
    const srt = await postForm(url, key, { model: 'stt', response_format: 'srt' }, { bytes: MP3, type: 'audio/mpeg' });
    expect(srt.text).toBe('1\n00:00:00,000 --> 00:00:00,500\nHello from the emulated host.\n\n2\n00:00:00,500 --> 00:00:01,000\nThis is a transcript.\n');
    const vtt = await postForm(url, key, { model: 'stt', response_format: 'vtt' }, { bytes: MP3, type: 'audio/mpeg' });
    expect(vtt.headers['content-type']).toBe('text/vtt; charset=utf-8');
    expect(vtt.text).toBe('WEBVTT\n\n00:00:00.000 --> 00:00:00.500\nHello from the emulated host.\n\n00:00:00.500 --> 00:00:01.000\nThis is a transcript.\n');
    const verbose = await postForm(url, key, { model: 'stt', response_format: 'verbose_json', language: 'en' }, { bytes: MP3, type: 'audio/mpeg' });
    expect(verbose.json).toMatchObject({ task: 'transcribe', language: 'en', text: 'Hello from the emulated host. This is a transcript.', segments: [{ id: 0, start: 0, end: 0.5 }, { id: 1, start: 0.5, end: 1 }] });
    expect(verbose.json.duration).toBeCloseTo(1.176, 2);
  });

  it('SeamlessM4T type: no language, or one it does not take, or not ISO-639-1 → 400 invalid_value, nothing held; fr reaches the host as fra', async () => {
    const before = await money(h.gw, accountId);
    const count = h.host.requests.length;
    for (const fields of [{}, { language: 'de' }, { language: 'french' }] as Record<string, string>[]) {
      const r = await postForm(url, key, { model: 'stt-seamless', ...fields }, { bytes: wav(2), type: 'audio/wav' });
      expect(r.status, JSON.stringify(fields)).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'invalid_value', param: 'language' });
      expect(r.headers['x-job-id']).toBeUndefined();
    }
    expect(h.host.requests.length).toBe(count);
    expect(await money(h.gw, accountId)).toEqual(before);
    const ok = await postForm(url, key, { model: 'stt-seamless', language: 'fr' }, { bytes: wav(2), type: 'audio/wav' });
    expect(ok.status).toBe(200);
    expect(lastInput(h.host).language).toBe('fra');
  });

  it('a model of another kind → 404 model_not_found; an unknown field → 400 validation_failed; PNG bytes → 415 type_mismatch', async () => {
    const image = await postForm(url, key, { model: 'pic' }, { bytes: wav(1) });
    expect(image.status).toBe(404);
    expect(image.json.error.code).toBe('model_not_found');
    const unknown = await postForm(url, key, { model: 'stt', colour: 'blue' }, { bytes: wav(1) });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error).toMatchObject({ code: 'validation_failed', param: 'colour' });
    const picture = await postForm(url, key, { model: 'stt' }, { bytes: png(8, 8), type: 'audio/mpeg' });
    expect(picture.status).toBe(415);
    expect(picture.json.error.code).toBe('type_mismatch');
  });

  it('missing_file, empty_file, invalid_body; a file over 25 MB → 413 file_too_large; a Content-Length over 26 MB → 413 before the body', async () => {
    expect((await postForm(url, key, { model: 'stt' })).json.error.code).toBe('missing_file');
    expect((await postForm(url, key, { model: 'stt' }, { bytes: Buffer.alloc(0) })).json.error.code).toBe('empty_file');
    const json = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"model":"stt"}' });
    expect(json.status).toBe(400);
    expect(((await json.json()) as { error: { code: string } }).error.code).toBe('invalid_body');
    const big = await postForm(url, key, { model: 'stt' }, { bytes: wav((25 * 1024 * 1024 + 100) / 8000), type: 'audio/wav' });
    expect(big.status).toBe(413);
    expect(big.json.error.code).toBe('file_too_large');
    expect(big.headers['x-ratelimit-limit']).toBe('600');
    const answer = await rawExchange(Number(new URL(h.gw.url).port), {
      method: 'POST',
      path: '/api/v1/audio/transcriptions',
      headers: [['authorization', `Bearer ${key}`], ['content-type', 'multipart/form-data; boundary=x'], ['content-length', String(26 * 1024 * 1024 + 1)]],
    }, 5000);
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).error.code).toBe('file_too_large');
  });

  it('a host answer without a transcript → 502 upstream_error, refunded in full', async () => {
    const before = await money(h.gw, accountId);
    h.host.enqueue({ kind: 'prediction', durationMs: 10, value: 42 });
    const r = await postForm(url, key, { model: 'stt' }, { bytes: wav(2), type: 'audio/wav' });
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe('upstream_error');
    const jobId = r.headers['x-job-id'] as string;
    expect((await settled(h.gw, jobId)).job).toMatchObject({ status: 'failed', cost: 0 });
    expect(await ledgerKinds(h.gw, accountId, jobId)).toEqual(['hold', 'refund']);
    expect(await money(h.gw, accountId)).toEqual(before);
  });
});

describe('transcriptions: money refusals, nothing held', () => {
  let h: AudioHarness;
  beforeAll(async () => {
    h = await startAudioHarness();
  });
  afterAll(async () => h.close());

  it('the monthly spending limit → 402 monthly_limit_exceeded (spending_limit_error), with rate-limit headers', async () => {
    const { key, accountId } = await h.gw.account({ credits: 100, key: { scopes: ['audio'] } });
    // The hold is 0.5 credits (the 5 GPU-second estimate).
    await h.gw.admin('PATCH', `/admin/v1/accounts/${accountId}`, { monthly_spending_limit_credits: 0.4 });
    const before = await money(h.gw, accountId);
    const r = await postForm(`${h.gw.url}/api/v1/audio/transcriptions`, key, { model: 'stt' }, { bytes: wav(20), type: 'audio/wav' });
    expect(r.status).toBe(402);
    expect(r.json.error).toMatchObject({ code: 'monthly_limit_exceeded', type: 'spending_limit_error' });
    expect(r.headers['x-ratelimit-remaining']).toBeDefined();
    expect(await money(h.gw, accountId)).toEqual(before);
    expect(h.host.requests.length).toBe(0);
  });

  it('a balance below the hold → 402 insufficient_credits', async () => {
    const { key, accountId } = await h.gw.account({ credits: 0.4, key: { scopes: ['audio'] } });
    const r = await postForm(`${h.gw.url}/api/v1/audio/transcriptions`, key, { model: 'stt' }, { bytes: wav(20), type: 'audio/wav' });
    expect(r.status).toBe(402);
    expect(r.json.error.code).toBe('insufficient_credits');
    expect(await money(h.gw, accountId)).toEqual({ balance: 400_000, held: 0 });
  });
});
