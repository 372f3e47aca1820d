/**
 * Audio lengths are measured in a worker thread with a time limit (docs/decisions.md "Audio
 * length from the audio itself"): a crafted 10 MB MP3 that keeps music-metadata busy for some
 * 80 s is refused as unreadable once the limit passes, and the gateway answers other requests
 * meanwhile. Before the worker, the measurement ran on the request thread and froze the gateway.
 * The format is sniffed in the worker too: file-type's walk over crafted input held the request
 * thread for a sixth of a second per 10 MB file.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AUDIO_MEASURE_TIMEOUT_MS } from '../src/audio/audio-file.ts';
import { wav } from './helpers/audio.ts';
import { postForm, startAudioHarness, type AudioHarness } from './helpers/audio-host.ts';

/** file-type as it is, watched: the worker threads load their own, so a call here is a sniff on the request thread. */
const sniffs = vi.hoisted(() => vi.fn());
vi.mock('file-type', async (actual) => {
  const real = await actual<typeof import('file-type')>();
  return { ...real, fileTypeFromBuffer: (...args: Parameters<typeof real.fileTypeFromBuffer>) => {
    sniffs(...args);
    return real.fileTypeFromBuffer(...args);
  } };
});

/** 10 MB of MP3 frame-sync pairs (0xFF 0xFB): sniffed as MP3, every two bytes a false frame for music-metadata. */
function falseSyncs(): Buffer {
  const bytes = Buffer.alloc(10_000_000, 0xff);
  for (let i = 1; i < bytes.length; i += 2) bytes[i] = 0xfb;
  return bytes;
}

/** 10 MB of a gzip header and zeros: file-type walks it for some 160 ms before answering gzip. */
function gzipZeros(): Buffer {
  const bytes = Buffer.alloc(10_000_000);
  bytes.write('\x1f\x8b\x08', 0, 'latin1');
  return bytes;
}

describe('audio is measured and sniffed off the request thread', () => {
  let h: AudioHarness;
  let key: string;
  beforeAll(async () => {
    h = await startAudioHarness();
    ({ key } = await h.gw.account({ key: { scopes: ['audio'] } }));
  });
  afterAll(async () => h.close());

  it('a 10 MB MP3 of false frame syncs → 400 audio_unreadable at the time limit, and other requests are served meanwhile', async () => {
    const url = `${h.gw.url}/api/v1/audio/uploads`;
    // Warm the audio worker, so the figures below are the measurement, not the worker's start.
    expect((await postForm(url, key, {}, { bytes: wav(1), type: 'audio/wav' })).status).toBe(201);

    let done = false;
    const started = performance.now();
    const upload = postForm(url, key, {}, { bytes: falseSyncs(), type: 'audio/mpeg' }).then((r) => {
      done = true;
      return { ...r, ms: performance.now() - started };
    });
    const latencies: number[] = [];
    while (!done) {
      const t = performance.now();
      // Raced against a timer: a blocked gateway fails this rather than only slowing it.
      const quick = await Promise.race([h.gw.api('/models?limit=1'), new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 2_000))]);
      latencies.push(performance.now() - t);
      expect(quick === 'late' ? 'late' : quick.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const result = await upload;
    expect(result.status, result.text).toBe(400);
    expect(result.json.error).toMatchObject({ code: 'audio_unreadable', param: 'file' });
    expect(result.ms).toBeGreaterThanOrEqual(AUDIO_MEASURE_TIMEOUT_MS - 100);
    expect(result.ms).toBeLessThan(AUDIO_MEASURE_TIMEOUT_MS + 4_000);
    console.log(`crafted MP3 upload: ${Math.round(result.ms)} ms; ${latencies.length} small requests meanwhile, slowest ${Math.round(Math.max(...latencies))} ms`);
    expect(latencies.length).toBeGreaterThan(3);
    expect(Math.max(...latencies)).toBeLessThan(1_000);
  }, 30_000);

  // A timing test cannot tell: one such walk (some 160 ms) is too short to fail a bound that is not flaky, and concurrent uploads arrive staggered.
  it('a 10 MB gzip header and zeros → 415 type_mismatch, and a WAV → 201, without file-type on the request thread', async () => {
    const url = `${h.gw.url}/api/v1/audio/uploads`;
    sniffs.mockClear();
    const gzip = await postForm(url, key, {}, { bytes: gzipZeros(), type: 'audio/mpeg' });
    expect(gzip.status, gzip.text).toBe(415);
    expect(gzip.json.error).toMatchObject({ code: 'type_mismatch', param: 'file', message: expect.stringContaining('application/gzip') });
    expect((await postForm(url, key, {}, { bytes: wav(1), type: 'audio/wav' })).status).toBe(201);
    expect(sniffs).not.toHaveBeenCalled();
  }, 30_000);
});
