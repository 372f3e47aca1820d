/**
 * POST /api/v1/audio/uploads and the upload URL, over real HTTP (spec "Keys and uploads",
 * DECISIONS.md "Routes beyond chat and embeddings"): real WAV, MP3, Ogg and WebM files, PNG
 * bytes posing as audio, the 10 MB and 60-second limits (the length read from the audio itself:
 * WebM and Ogg files whose headers under-report it), 20 uploads per hour per account,
 * and the URL served without a key for 24 hours, then 404 and deleted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MP3, oggOpus, oggOpusPacked, oggOpusPages, wav, webm } from './helpers/audio.ts';
import { postForm, startAudioHarness, type AudioHarness } from './helpers/audio-host.ts';
import { http } from './helpers/gateway.ts';
import { png } from './helpers/media.ts';
import { rawExchange } from './helpers/raw-http.ts';

const RATE = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];

describe('POST /audio/uploads', () => {
  let h: AudioHarness;
  let key: string;
  let uploadsUrl: string;
  beforeAll(async () => {
    h = await startAudioHarness({ PUBLIC_BASE_URL: 'https://gateway.example' });
    ({ key } = await h.gw.account({ key: { scopes: ['audio'] } }));
    uploadsUrl = `${h.gw.url}/api/v1/audio/uploads`;
  });
  afterAll(async () => h.close());

  const formats: [string, Buffer, string, string, number][] = [
    ['WAV written by code', wav(3), 'audio/wav', 'audio/wav', 3],
    ['MP3 (gsutil fixture)', MP3, 'audio/mpeg', 'audio/mpeg', 1.176],
    ['Ogg Opus', oggOpus(4), 'audio/ogg', 'audio/ogg', 4],
    ['WebM', webm(5), 'audio/webm', 'audio/webm', 5],
  ];
  for (const [name, bytes, declared, type, seconds] of formats) {
    it(`${name} → 201 {id, url, expires_at, bytes, duration_seconds, content_type}, the url under PUBLIC_BASE_URL`, async () => {
      const r = await postForm(uploadsUrl, key, {}, { bytes, type: declared });
      expect(r.status, r.text).toBe(201);
      expect(r.json).toMatchObject({ bytes: bytes.length, content_type: type });
      expect(r.json.duration_seconds).toBeCloseTo(seconds, 2);
      expect(r.json.url).toMatch(new RegExp(`^https://gateway\\.example/api/v1/audio/uploads/${r.json.id}/[A-Za-z0-9_-]{43}$`));
      expect(r.json.expires_at).toBe(Math.floor((h.clock.now + 24 * 3_600_000) / 1000));
      for (const name of RATE) expect(r.headers[name]).toBeDefined();
    });
  }

  it('an undeclared type (application/octet-stream) is read from the bytes', async () => {
    const r = await postForm(uploadsUrl, key, {}, { bytes: wav(1) });
    expect(r.status).toBe(201);
    expect(r.json.content_type).toBe('audio/wav');
  });

  it('PNG bytes posing as audio (declared audio/mpeg) → 415 type_mismatch', async () => {
    const r = await postForm(uploadsUrl, key, {}, { bytes: png(4, 4), type: 'audio/mpeg', name: 'voice.mp3' });
    expect(r.status).toBe(415);
    expect(r.json.error).toMatchObject({ code: 'type_mismatch', type: 'invalid_request_error' });
    expect(r.json.error.message).toContain('image/png');
  });

  it('a WAV declared as audio/mpeg → 415 type_mismatch', async () => {
    const r = await postForm(uploadsUrl, key, {}, { bytes: wav(1), type: 'audio/mpeg' });
    expect(r.status).toBe(415);
    expect(r.json.error.code).toBe('type_mismatch');
  });

  it('a 61-second sample → 400 audio_unreadable; a WAV whose length cannot be read → 400 audio_unreadable', async () => {
    const long = await postForm(uploadsUrl, key, {}, { bytes: wav(61), type: 'audio/wav' });
    expect(long.status).toBe(400);
    expect(long.json.error.code).toBe('audio_unreadable');
    expect(long.json.error.message).toContain('61.0 seconds');
    const empty = await postForm(uploadsUrl, key, {}, { bytes: wav(0), type: 'audio/wav' });
    expect(empty.status).toBe(400);
    expect(empty.json.error.code).toBe('audio_unreadable');
  });

  // Each of these measured under 60 s before the length was read from the audio itself.
  const lying: [string, Buffer, string, string][] = [
    ['a WebM whose Duration header says 5 s and whose blocks run 70 s', webm(70, { headerSeconds: 5 }), 'audio/webm', '70.0 seconds'],
    ['a MediaRecorder-style WebM (unknown sizes) with the same lie', webm(70, { headerSeconds: 5, unknownSizes: true }), 'audio/webm', '70.0 seconds'],
    ['a WebM whose blocks are all stamped 0 but hold 70 s of Opus packets', webm(70, { headerSeconds: 5, stamps: 'zero' }), 'audio/webm', '70.0 seconds'],
    ['a chained Ogg Opus: a 4 s link, then a 70 s one', Buffer.concat([oggOpus(4), oggOpusPacked(70, 0x7e57)]), 'audio/ogg', '74.0 seconds'],
    ['an Ogg Opus flagged ended at 4 s whose pages go on to 70 s', oggOpusPages([{ granuleSeconds: 4, frames: 1, end: true }, { granuleSeconds: 70, frames: 1 }]), 'audio/ogg', '70.0 seconds'],
  ];
  for (const [name, bytes, type, length] of lying) {
    it(`${name} → 400 audio_unreadable, its real length in the message`, async () => {
      const r = await postForm(uploadsUrl, key, {}, { bytes, type });
      expect(r.status, r.text).toBe(400);
      expect(r.json.error.code).toBe('audio_unreadable');
      expect(r.json.error.message).toContain(length);
    });
  }

  it('a WebM without a Duration header (as MediaRecorder writes it) is measured by its blocks → 201', async () => {
    const r = await postForm(uploadsUrl, key, {}, { bytes: webm(5, { headerSeconds: null, unknownSizes: true }), type: 'audio/webm' });
    expect(r.status, r.text).toBe(201);
    expect(r.json.duration_seconds).toBeCloseTo(5, 2);
  });

  it('a sample over 10 MB → 413 file_too_large (read up to the limit only)', async () => {
    const r = await postForm(uploadsUrl, key, {}, { bytes: wav(10.5 * 1024 * 1024 / 8000), type: 'audio/wav' });
    expect(r.status).toBe(413);
    expect(r.json.error.code).toBe('file_too_large');
  });

  it('a Content-Length over the ceiling → 413 file_too_large before the body is sent', async () => {
    const answer = await rawExchange(Number(new URL(h.gw.url).port), {
      method: 'POST',
      path: '/api/v1/audio/uploads',
      headers: [['authorization', `Bearer ${key}`], ['content-type', 'multipart/form-data; boundary=x'], ['content-length', String(27 * 1024 * 1024)]],
    }, 5000);
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).error.code).toBe('file_too_large');
  });

  it('not multipart (another type, or no part at all) → 400 invalid_body; parts but no file part → 400 missing_file; an empty file → 400 empty_file', async () => {
    const json = await http(uploadsUrl, { key, body: { file: 'x' } });
    expect(json.status).toBe(400);
    expect(json.json.error.code).toBe('invalid_body');
    const broken = await http(uploadsUrl, { key, rawBody: '--x\r\ncontent-disposition: form-data; name="file"; filename="a"\r\n\r\nabc', headers: { 'content-type': 'multipart/form-data; boundary=x' } });
    expect(broken.status).toBe(400);
    expect(['invalid_body', 'empty_file', 'missing_file']).toContain(broken.json.error.code);
    // Declared multipart, but not multipart at all: the audio bytes themselves, or nothing (issue 33: was missing_file).
    for (const rawBody of [wav(1).toString('latin1'), '']) {
      const notAForm = await http(uploadsUrl, { key, rawBody, headers: { 'content-type': 'multipart/form-data; boundary=x' } });
      expect(notAForm.status).toBe(400);
      expect(notAForm.json.error.code).toBe('invalid_body');
      expect(notAForm.json.error.message).toContain('no part was found');
    }
    const none = await postForm(uploadsUrl, key, { note: 'no file here' });
    expect(none.status).toBe(400);
    expect(none.json.error.code).toBe('missing_file');
    const emptyFile = await postForm(uploadsUrl, key, {}, { bytes: Buffer.alloc(0), type: 'audio/wav' });
    expect(emptyFile.status).toBe(400);
    expect(emptyFile.json.error.code).toBe('empty_file');
  });

  it('a key without the audio scope → 403 insufficient_scope; no key → 401', async () => {
    const other = await h.gw.account({ key: { scopes: ['images'] } });
    const r = await postForm(uploadsUrl, other.key, {}, { bytes: wav(1), type: 'audio/wav' });
    expect(r.status).toBe(403);
    expect(r.json.error).toMatchObject({ code: 'insufficient_scope', message: "This API key lacks the 'audio' scope" });
    expect((await postForm(uploadsUrl, undefined, {}, { bytes: wav(1) })).status).toBe(401);
  });
});

describe('20 uploads per hour per account, and the URL for 24 hours', () => {
  let h: AudioHarness;
  beforeAll(async () => {
    h = await startAudioHarness();
  });
  afterAll(async () => h.close());

  it('the 21st upload of an account within an hour → 429 upload_limit_exceeded with Retry-After; refused files do not count; another account is not affected', async () => {
    const { accountId, key } = await h.gw.account({ key: { scopes: ['audio'] } });
    const second = await h.gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { name: 'second key', scopes: ['audio'] });
    const url = `${h.gw.url}/api/v1/audio/uploads`;
    expect((await postForm(url, key, {}, { bytes: png(2, 2) })).status).toBe(415);
    for (let i = 0; i < 20; i++) {
      const r = await postForm(url, i % 2 === 0 ? key : second.json.key, {}, { bytes: wav(1), type: 'audio/wav' });
      expect(r.status, `upload ${i + 1}`).toBe(201);
    }
    const refused = await postForm(url, second.json.key, {}, { bytes: wav(1), type: 'audio/wav' });
    expect(refused.status).toBe(429);
    expect(refused.json.error).toMatchObject({ code: 'upload_limit_exceeded', type: 'rate_limit_error' });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    const stranger = await h.gw.account({ key: { scopes: ['audio'] } });
    expect((await postForm(url, stranger.key, {}, { bytes: wav(1), type: 'audio/wav' })).status).toBe(201);
  });

  it('the URL serves the bytes without a key for 24 hours, then 404 and the row is deleted; the sweep deletes the rest', async () => {
    const { key } = await h.gw.account({ key: { scopes: ['audio'] } });
    const sample = wav(2);
    const first = await postForm(`${h.gw.url}/api/v1/audio/uploads`, key, {}, { bytes: sample, type: 'audio/wav' });
    h.clock.now += 3_600_000;
    const second = await postForm(`${h.gw.url}/api/v1/audio/uploads`, key, {}, { bytes: MP3, type: 'audio/mpeg' });
    expect(first.json.url.startsWith(`${h.gw.url}/api/v1/audio/uploads/`)).toBe(true);
    const served = await fetch(first.json.url);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('audio/wav');
    expect(Buffer.from(await served.arrayBuffer()).equals(sample)).toBe(true);
    const wrongSecret = await fetch(first.json.url.replace(/.$/, (c: string) => (c === 'A' ? 'B' : 'A')));
    expect(wrongSecret.status).toBe(404);

    h.clock.now += 23 * 3_600_000 - 1000;
    expect((await fetch(first.json.url)).status).toBe(200);
    h.clock.now += 1000;
    const gone = await http(first.json.url);
    expect(gone.status).toBe(404);
    expect(gone.json.error.code).toBe('not_found');
    const uploads = h.gw.gateway.store.uploads;
    expect(await uploads.get(first.json.id)).toBeUndefined();
    expect(await uploads.get(second.json.id)).toBeDefined();
    expect((await fetch(second.json.url)).status).toBe(200);
    h.clock.now += 3_600_000;
    expect(await uploads.deleteExpired(h.clock.now)).toBeGreaterThanOrEqual(1);
    expect(await uploads.get(second.json.id)).toBeUndefined();
  });
});
