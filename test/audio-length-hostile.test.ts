/**
 * Hostile files against the audio-length walkers (src/audio/matroska-length.ts, ogg-length.ts,
 * walk-budget.ts; docs/decisions.md "Audio length from the audio itself"): structures that made
 * the walks (or music-metadata) quadratic or slow, forged Ogg pages that hid real ones, Opus
 * tracks under another CodecID or content encoding, and lengths too large to price. Each is
 * measured in bounded work, at its real length, or refused as unreadable (uploads: 400).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audioSeconds } from '../src/audio/audio-file.ts';
import { matroskaSeconds, MAX_TRACKS } from '../src/audio/matroska-length.ts';
import { MAX_STREAMS, oggSeconds } from '../src/audio/ogg-length.ts';
import { UnreadableAudio, WalkBudget } from '../src/audio/walk-budget.ts';
import { oggOpusPacked, oggPage, webm } from './helpers/audio.ts';
import { MICRO_PER_GPU_SECOND, postForm, startAudioHarness, type AudioHarness } from './helpers/audio-host.ts';
import { settled } from './helpers/media-host.ts';

/** The EBML header (DocType webm) and a Segment of unknown size. */
const EBML_HEAD = Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x87, 0x42, 0x82, 0x84, ...Buffer.from('webm'), 0x18, 0x53, 0x80, 0x67, 0xff]);

/**
 * An element of unknown size (`idHex`: Tracks, Info or BlockGroup), then Void elements whose
 * bodies each hold [Cluster, unknown size, the same element, unknown size]: the walk went on at
 * the hidden Cluster after reading the element to the end of the file, once per Void.
 */
function hiddenClusters(units: number, idHex: string): Buffer {
  const id = Buffer.from(idHex, 'hex');
  const body = Buffer.concat([Buffer.from([0x1f, 0x43, 0xb6, 0x75, 0xff]), id, Buffer.from([0xff])]);
  const unit = Buffer.concat([Buffer.from([0xec, 0x80 | body.length]), body]);
  return Buffer.concat([EBML_HEAD, id, Buffer.from([0xff]), ...Array.from({ length: units }, () => unit)]);
}

/** A Cluster of unknown size holding `count` empty SimpleBlocks, each of another track. */
function manyTracks(count: number): Buffer {
  const blocks = Array.from({ length: count }, (_, i) => Buffer.from([0xa3, 0x84, 0x80 | ((i + 1) & 0x7f), 0, 0, 0x80]));
  return Buffer.concat([EBML_HEAD, Buffer.from([0x1f, 0x43, 0xb6, 0x75, 0xff]), ...blocks]);
}

const OPUS_HEAD = Buffer.alloc(19);
OPUS_HEAD.write('OpusHead', 0, 'latin1');
OPUS_HEAD[8] = 1;
OPUS_HEAD[9] = 1;
OPUS_HEAD.writeUInt16LE(312, 10);
OPUS_HEAD.writeUInt32LE(48000, 12);
const OPUS_TAGS = Buffer.concat([Buffer.from('OpusTags'), Buffer.alloc(8)]);
/** SILK NB 60 ms, code 3, two frames: 120 ms in 3 bytes. */
const PACKET_120MS = Buffer.from([(3 << 3) | 3, 2, 0xf8]);

/** `count` beginning-of-stream pages of Opus streams, each of another serial, CRCs right (or zeroed). */
function beginnings(count: number, crc = true): Buffer {
  return Buffer.concat(Array.from({ length: count }, (_, i) => {
    const page = oggPage(OPUS_HEAD, 0x02, 0n, 0, i + 1);
    if (!crc) page.writeUInt32LE(0, 22);
    return page;
  }));
}

/**
 * Ogg Opus: 0.96 s of audio in plain sight, then 72 s of pages behind `cover`: a page of
 * another stream whose CRC is wrong and whose lacing spans them ('forged'), or a page header
 * whose lacing claims more than the rest of the file ('past-end').
 */
function hiddenOgg(cover: 'forged' | 'past-end'): Buffer {
  let granule = 312n;
  let sequence = 2;
  const audio = (packets: number): Buffer => {
    granule += BigInt(packets * 5760);
    return oggPage(Array.from({ length: packets }, () => PACKET_120MS), 0, granule, sequence++, 1);
  };
  const visible = [oggPage(OPUS_HEAD, 0x02, 0n, 0, 1), oggPage(OPUS_TAGS, 0, 0n, 1, 1), audio(8)];
  const hidden = Buffer.concat([audio(200), audio(200), audio(200)]);
  if (cover === 'forged') {
    const forged = oggPage(hidden, 0, 0n, 0, 999);
    forged.writeUInt32LE((forged.readUInt32LE(22) ^ 1) >>> 0, 22);
    return Buffer.concat([...visible, forged]);
  }
  const header = oggPage(Buffer.alloc(255 * 255 - 1), 0, 0n, 0, 999);
  return Buffer.concat([...visible, header.subarray(0, 27 + 255), hidden]);
}

describe('Matroska: bounded walks', () => {
  const unknownSized: [string, string][] = [['Tracks', '1654ae6b'], ['Info', '1549a966'], ['BlockGroup', 'a0']];
  for (const [name, idHex] of unknownSized) {
    it(`${name} of unknown size over 16,000 Voids hiding Clusters: walked once (it was re-read per hidden Cluster: 4.8 s for 192 KB)`, async () => {
      const bytes = hiddenClusters(16_000, idHex);
      const budget = new WalkBudget(bytes.length);
      expect(matroskaSeconds(bytes, budget)).toBeUndefined();
      expect(budget.spent).toBeLessThan(bytes.length);
      expect(await audioSeconds(bytes, 'audio/webm')).toBeUndefined();
    });
  }

  it('2 MB of empty Voids in a Tracks of unknown size: music-metadata (4 s on them) is not called for EBML', async () => {
    const bytes = Buffer.concat([EBML_HEAD, Buffer.from([0x16, 0x54, 0xae, 0x6b, 0xff]), Buffer.alloc(2_000_000).fill(Buffer.from([0xec, 0x80]))]);
    const budget = new WalkBudget(bytes.length);
    expect(matroskaSeconds(bytes, budget)).toBeUndefined();
    expect(budget.spent).toBeLessThan(2 * bytes.length);
    expect(await audioSeconds(bytes, 'audio/webm')).toBeUndefined();
  });

  it(`blocks of more than ${MAX_TRACKS} tracks: unreadable (one map entry per track number kept 154 MB alive)`, async () => {
    expect(() => matroskaSeconds(manyTracks(MAX_TRACKS + 1))).toThrow(UnreadableAudio);
    expect(await audioSeconds(manyTracks(MAX_TRACKS + 1), 'audio/webm')).toBeUndefined();
    expect(() => matroskaSeconds(manyTracks(MAX_TRACKS))).not.toThrow();
  });

  it('honest files spend under 2 units a byte; past its budget a file is unreadable', () => {
    for (const bytes of [webm(70), webm(70, { unknownSizes: true, lace: 'xiph' })]) {
      const budget = new WalkBudget(bytes.length);
      expect(matroskaSeconds(bytes, budget)).toBeCloseTo(70, 6);
      expect(budget.spent).toBeLessThan(2 * bytes.length);
      expect(() => matroskaSeconds(bytes, new WalkBudget(bytes.length, 1_000))).toThrow(UnreadableAudio);
    }
  });

  it('a CodecID that starts with A_OPUS is Opus (FFmpeg decodes "A_OPUS/X"): 72 s of packets stamped 0 measure 72 s, not 1', async () => {
    expect(await audioSeconds(webm(72, { headerSeconds: 1, stamps: 'zero', codecId: 'A_OPUS/X' }), 'audio/webm')).toBeCloseTo(72 - 0.02, 6);
  });

  it("header stripping is undone: each frame's TOC byte kept in the track is counted (read from the block: SILK 10 ms, 35 s)", async () => {
    expect(await audioSeconds(webm(70, { headerSeconds: 5, stamps: 'zero', encoding: 'strip' }), 'audio/webm')).toBeCloseTo(70 - 0.02, 6);
  });

  it('an Opus track whose frames are compressed cannot be counted: unreadable, whatever its timestamps say', async () => {
    expect(() => matroskaSeconds(webm(70, { encoding: 'zlib' }))).toThrow(UnreadableAudio);
    expect(await audioSeconds(webm(70, { encoding: 'zlib' }), 'audio/webm')).toBeUndefined();
  });

  it('lengths over 24 hours or not finite are unreadable', async () => {
    expect(await audioSeconds(webm(5, { headerSeconds: 1e27 }), 'audio/webm')).toBeUndefined();
    expect(await audioSeconds(webm(5, { headerSeconds: Number.POSITIVE_INFINITY }), 'audio/webm')).toBeUndefined();
    expect(await audioSeconds(webm(5, { timecodeScale: 1e15 }), 'audio/webm')).toBeUndefined();
    expect(await audioSeconds(webm(5, { headerSeconds: 23 * 3600 }), 'audio/webm')).toBe(23 * 3600);
  });
});

describe('Ogg: bounded walks and CRC-checked pages', () => {
  it('40,000 beginning-of-stream pages (1.9 MB): unreadable at the 17th (10 s for the walker, 16 s for music-metadata before)', async () => {
    const bytes = beginnings(40_000);
    const budget = new WalkBudget(bytes.length);
    expect(() => oggSeconds(bytes, budget)).toThrow(UnreadableAudio);
    expect(budget.spent).toBeLessThan(2_000);
    expect(await audioSeconds(bytes, 'audio/ogg')).toBeUndefined();
  });

  it('the same pages with wrong CRCs are not pages: no audio, unreadable in linear work (music-metadata, which checks no CRC, is not called)', async () => {
    const bytes = beginnings(40_000, false);
    const budget = new WalkBudget(bytes.length);
    expect(oggSeconds(bytes, budget)).toBeUndefined();
    expect(budget.spent).toBeLessThan(4 * bytes.length);
    expect(await audioSeconds(bytes, 'audio/ogg')).toBeUndefined();
  });

  it(`a link of ${MAX_STREAMS} streams is measured; one more is unreadable`, () => {
    expect(oggSeconds(Buffer.concat([beginnings(MAX_STREAMS - 1), oggOpusPacked(5, 0x7e57)]))).toBeCloseTo(5, 6);
    expect(() => oggSeconds(Buffer.concat([beginnings(MAX_STREAMS), oggOpusPacked(5, 0x7e57)]))).toThrow(UnreadableAudio);
  });

  it('a forged page (wrong CRC) lacing 72 s of real pages into its body hides nothing: 72.96 s, as libogg and FFmpeg read it', async () => {
    expect(await audioSeconds(hiddenOgg('forged'), 'audio/ogg')).toBeCloseTo(72.96, 6);
  });

  it('a page header claiming more than the rest of the file is skipped, not the end: 72.96 s', async () => {
    expect(await audioSeconds(hiddenOgg('past-end'), 'audio/ogg')).toBeCloseTo(72.96, 6);
  });

  it('a damaged page of an honest file is dropped and the pages after it still count', () => {
    const bytes = Buffer.from(oggOpusPacked(70));
    const at = Math.floor(bytes.length / 2);
    bytes[at] = (bytes[at] ?? 0) ^ 0xff;
    expect(oggSeconds(bytes)).toBeCloseTo(70, 6);
  });

  it('honest files spend under 2 units a byte; past its budget a file is unreadable', () => {
    const bytes = oggOpusPacked(70);
    const budget = new WalkBudget(bytes.length);
    expect(oggSeconds(bytes, budget)).toBeCloseTo(70, 6);
    expect(budget.spent).toBeLessThan(2 * bytes.length);
    expect(() => oggSeconds(bytes, new WalkBudget(bytes.length, 1_000))).toThrow(UnreadableAudio);
  });
});

describe('the routes', () => {
  let h: AudioHarness;
  let key: string;
  beforeAll(async () => {
    h = await startAudioHarness();
    ({ key } = await h.gw.account({ credits: 100, key: { scopes: ['audio'] } }));
  });
  afterAll(async () => h.close());

  it('upload: the forged-page Ogg is 73.0 s, over the 60 s limit → 400 audio_unreadable (it measured 0.96 s and passed)', async () => {
    const r = await postForm(`${h.gw.url}/api/v1/audio/uploads`, key, {}, { bytes: hiddenOgg('forged'), type: 'audio/ogg' });
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.code).toBe('audio_unreadable');
    expect(r.json.error.message).toContain('73.0 seconds');
  });

  it('upload: a Duration of 1e27 s → 400 audio_unreadable', async () => {
    const r = await postForm(`${h.gw.url}/api/v1/audio/uploads`, key, {}, { bytes: webm(5, { headerSeconds: 1e27 }), type: 'audio/webm' });
    expect(r.status, r.text).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'audio_unreadable', message: 'The length of the audio cannot be read from the file.' });
  });

  it('transcription: a Duration of 1e27 s is no length (it reached the price as 1e27 and answered 500): runs, held the 5 s estimate', async () => {
    h.host.enqueue({ kind: 'prediction', durationMs: 20, predictTime: 2 });
    const r = await postForm(`${h.gw.url}/api/v1/audio/transcriptions`, key, { model: 'stt' }, { bytes: webm(5, { headerSeconds: 1e27 }), type: 'audio/webm' });
    expect(r.status, r.text).toBe(200);
    const { job } = await settled(h.gw, r.headers['x-job-id'] as string);
    expect(job).toMatchObject({ held: 5 * MICRO_PER_GPU_SECOND, cost: 2 * MICRO_PER_GPU_SECOND });
  });
});
