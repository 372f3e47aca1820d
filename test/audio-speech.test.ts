/**
 * POST /api/v1/audio/speech over real HTTP: audio bytes with the format's Content-Type and
 * X-Job-Id, billed per 1,000 characters (balances before and after), voice samples only as the
 * caller's own unexpired upload with consent, the voice_sample_required rules, and the monthly
 * spending limit.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { money } from './helpers/chat.ts';
import { wav } from './helpers/audio.ts';
import { lastInput, MICRO_PER_CHARACTER, postForm, startAudioHarness, type AudioHarness } from './helpers/audio-host.ts';
import { ledgerKinds, settled } from './helpers/media-host.ts';

const EMULATED_MP3 = Buffer.from('494433030000000000000000', 'hex');

describe('POST /audio/speech', () => {
  let h: AudioHarness;
  let key: string;
  let accountId: string;
  let sampleUrl: string;
  beforeAll(async () => {
    h = await startAudioHarness();
    ({ key, accountId } = await h.gw.account({ credits: 100, key: { scopes: ['audio'] } }));
    const upload = await postForm(`${h.gw.url}/api/v1/audio/uploads`, key, {}, { bytes: wav(5), type: 'audio/wav' });
    sampleUrl = upload.json.url;
  });
  afterAll(async () => h.close());

  const speech = (body: Record<string, unknown>, k = key) => h.gw.api('/audio/speech', { key: k, body });

  it('200 audio/mpeg bytes by default with X-Job-Id and rate-limit headers; 27 characters billed at USD 0.1 per 1,000', async () => {
    const before = await money(h.gw, accountId);
    const input = 'Hello, this is the gateway.';
    const r = await fetch(`${h.gw.url}/api/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tts', input, voice: 'alloy' }) });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('audio/mpeg');
    expect(r.headers.get('x-ratelimit-limit')).toBe('600');
    expect(Buffer.from(await r.arrayBuffer()).equals(EMULATED_MP3)).toBe(true);
    const jobId = r.headers.get('x-job-id') as string;
    const cost = input.length * MICRO_PER_CHARACTER;
    const { job, media } = await settled(h.gw, jobId);
    expect(job).toMatchObject({ kind: 'speech', status: 'succeeded', held: cost, cost });
    expect(media?.usage).toEqual({ characters: 27 });
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - cost, held: 0 });
    expect(await ledgerKinds(h.gw, accountId, jobId)).toEqual(['hold', 'settle']);
    expect(lastInput(h.host)).toEqual({ input, voice: 'alloy' });
  });

  it('no response_format on a model whose catalog default is wav but which speaks mp3 → audio/mpeg, the host asked for mp3; asked wav → wav', async () => {
    const r = await speech({ model: 'tts-wav-default', input: 'Hi' });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('audio/mpeg');
    expect(lastInput(h.host)).toEqual({ input: 'Hi', response_format: 'mp3' });
    const wavAsked = await speech({ model: 'tts-wav-default', input: 'Hi', response_format: 'wav' });
    expect(wavAsked.headers['content-type']).toBe('audio/wav');
    expect(lastInput(h.host)).toEqual({ input: 'Hi', response_format: 'wav' });
  });

  it('response_format wav → audio/wav; a format the model lacks → 400 validation_failed', async () => {
    const r = await speech({ model: 'tts', input: 'Hi', response_format: 'wav' });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('audio/wav');
    const refused = await speech({ model: 'tts-clone', input: 'Hi', response_format: 'wav' });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({ code: 'validation_failed', param: 'response_format' });
  });

  it('voice_sample to a model without a reference-voice input → 400 voice_sample_required, nothing held', async () => {
    const before = await money(h.gw, accountId);
    const r = await speech({ model: 'tts', input: 'Hi', voice_sample: sampleUrl, consent: true });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'voice_sample_required', param: 'voice_sample' });
    expect(await money(h.gw, accountId)).toEqual(before);
  });

  it('a cloning-only model without voice_sample → 400 voice_sample_required', async () => {
    const r = await speech({ model: 'tts-clone-only', input: 'Hi' });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('voice_sample_required');
  });

  it('voice_sample without consent: true → 400 consent_required', async () => {
    for (const consent of [undefined, false]) {
      const r = await speech({ model: 'tts-clone', input: 'Hi', voice_sample: sampleUrl, ...(consent === undefined ? {} : { consent }) });
      expect(r.status).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'consent_required', param: 'consent' });
    }
  });

  it('the own upload with consent → 200; the host gets the upload URL; a cloning-only model answers wav', async () => {
    const before = await money(h.gw, accountId);
    const r = await speech({ model: 'tts-clone', input: 'Cloned hello', voice_sample: sampleUrl, consent: true });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('audio/mpeg');
    expect(lastInput(h.host)).toEqual({ input: 'Cloned hello', voice_sample: sampleUrl });
    expect(await money(h.gw, accountId)).toEqual({ balance: before.balance - 12 * MICRO_PER_CHARACTER, held: 0 });
    const only = await speech({ model: 'tts-clone-only', input: 'Hi', voice_sample: sampleUrl, consent: true });
    expect(only.status).toBe(200);
    expect(only.headers['content-type']).toBe('audio/wav');
  });

  it('a Host header of the caller\'s choosing never reaches the host: it fetches the upload from the gateway itself', async () => {
    const { id, secret } = /\/audio\/uploads\/(?<id>[^/]+)\/(?<secret>[^/]+)$/.exec(sampleUrl)?.groups as { id: string; secret: string };
    const spoofed = `http://attacker.example/api/v1/audio/uploads/${id}/${secret}`;
    const body = JSON.stringify({ model: 'tts-clone', input: 'Hi', voice_sample: spoofed, consent: true });
    const gateway = new URL(h.gw.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({ host: gateway.hostname, port: gateway.port, path: '/api/v1/audio/speech', method: 'POST',
        headers: { host: 'attacker.example', authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(body);
    });
    expect(status).toBe(200);
    expect(lastInput(h.host)).toEqual({ input: 'Hi', voice_sample: sampleUrl });
  });

  it("another account's upload, a made-up URL or a wrong secret → 400 invalid_voice_sample, nothing held", async () => {
    const stranger = await h.gw.account({ credits: 100, key: { scopes: ['audio'] } });
    const before = await money(h.gw, stranger.accountId);
    const theirs = await speech({ model: 'tts-clone', input: 'Hi', voice_sample: sampleUrl, consent: true }, stranger.key);
    expect(theirs.status).toBe(400);
    expect(theirs.json.error).toMatchObject({ code: 'invalid_voice_sample', param: 'voice_sample' });
    expect(await money(h.gw, stranger.accountId)).toEqual(before);
    for (const url of ['https://elsewhere.example/voice.wav', sampleUrl.replace(/.$/, (c: string) => (c === 'A' ? 'B' : 'A'))]) {
      const r = await speech({ model: 'tts-clone', input: 'Hi', voice_sample: url, consent: true });
      expect(r.json.error.code).toBe('invalid_voice_sample');
    }
  });

  it('an upload past its 24 hours → 400 invalid_voice_sample', async () => {
    const upload = await postForm(`${h.gw.url}/api/v1/audio/uploads`, key, {}, { bytes: wav(2), type: 'audio/wav' });
    h.clock.now += 24 * 3_600_000;
    const r = await speech({ model: 'tts-clone', input: 'Hi', voice_sample: upload.json.url, consent: true });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('invalid_voice_sample');
  });

  it('an unknown field → 400 validation_failed; a transcription slug → 404 model_not_found; no audio scope → 403', async () => {
    const unknown = await speech({ model: 'tts', input: 'Hi', colour: 'blue' });
    expect(unknown.json.error).toMatchObject({ code: 'validation_failed', param: 'colour' });
    for (const raw of ['{"model":"tts","input":"Hi","constructor":null}', '{"model":"tts","input":"Hi","__proto__":{"voice":"x"}}']) {
      const inherited = await h.gw.api('/audio/speech', { key, rawBody: raw });
      expect(inherited.status, raw).toBe(400);
      expect(inherited.json.error.code).toBe('validation_failed');
    }
    expect((await speech({ model: 'stt', input: 'Hi' })).json.error.code).toBe('model_not_found');
    const other = await h.gw.account({ key: { scopes: ['chat'] } });
    const scope = await speech({ model: 'tts', input: 'Hi' }, other.key);
    expect(scope.status).toBe(403);
    expect(scope.headers['x-ratelimit-limit']).toBeDefined();
  });

  it('a failed host run → 502 upstream_error with X-Job-Id, refunded in full', async () => {
    const before = await money(h.gw, accountId);
    h.host.enqueue({ kind: 'prediction', durationMs: 10, fail: 'CUDA out of memory' });
    const r = await speech({ model: 'tts', input: 'Hi there' });
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe('upstream_error');
    const jobId = r.headers['x-job-id'] as string;
    await settled(h.gw, jobId);
    expect(await ledgerKinds(h.gw, accountId, jobId)).toEqual(['hold', 'refund']);
    expect(await money(h.gw, accountId)).toEqual(before);
  });

  it('GET /jobs/{id} shows the speech job: kind speech, succeeded, its cost and usage', async () => {
    const r = await speech({ model: 'tts', input: 'Job me' });
    const jobId = r.headers['x-job-id'] as string;
    await settled(h.gw, jobId);
    const job = await h.gw.api(`/jobs/${jobId}`, { key });
    expect(job.status).toBe(200);
    expect(job.json).toMatchObject({ id: jobId, kind: 'speech', status: 'succeeded', model: 'tts', usage: { characters: 6 }, cost_credits: 0.06 });
  });

  it("a key's daily credit limit → 429 api_key_limit_exceeded with X-Key-Limit-Reset, nothing held", async () => {
    const limited = await h.gw.account({ credits: 100, key: { scopes: ['audio'], daily_limit_credits: 0.05 } });
    const before = await money(h.gw, limited.accountId);
    const r = await speech({ model: 'tts', input: 'x'.repeat(10) }, limited.key);
    expect(r.status).toBe(429);
    expect(r.json.error.code).toBe('api_key_limit_exceeded');
    expect(r.headers['x-key-limit-reset']).toMatch(/T00:00:00(\.000)?Z$/);
    expect(await money(h.gw, limited.accountId)).toEqual(before);
  });

  it('the monthly spending limit → 402 monthly_limit_exceeded, nothing held', async () => {
    const limited = await h.gw.account({ credits: 100, key: { scopes: ['audio'] } });
    await h.gw.admin('PATCH', `/admin/v1/accounts/${limited.accountId}`, { monthly_spending_limit_credits: 0.01 });
    const before = await money(h.gw, limited.accountId);
    const r = await speech({ model: 'tts', input: 'x'.repeat(200) }, limited.key);
    expect(r.status).toBe(402);
    expect(r.json.error).toMatchObject({ code: 'monthly_limit_exceeded', type: 'spending_limit_error' });
    expect(r.headers['x-ratelimit-limit']).toBe('600');
    expect(await money(h.gw, limited.accountId)).toEqual(before);
  });
});
