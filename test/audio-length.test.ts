/**
 * The length of WebM and Ogg files read from the audio itself (src/audio/matroska-length.ts,
 * ogg-length.ts; docs/decisions.md "Audio length from the audio itself"): files whose headers
 * or granules under-report it, each first shown to fool music-metadata alone, then measured
 * by `audioSeconds` (which uploads and transcriptions use) at their real length.
 */
import { parseBuffer } from 'music-metadata';
import { describe, expect, it } from 'vitest';
import { audioSeconds } from '../src/audio/audio-file.ts';
import { matroskaSeconds } from '../src/audio/matroska-length.ts';
import { oggSeconds } from '../src/audio/ogg-length.ts';
import { opusPacketSamples } from '../src/audio/opus-frames.ts';
import { MP3, oggOpus, oggOpusPacked, oggOpusPages, wav, webm } from './helpers/audio.ts';

async function metadataSeconds(bytes: Buffer, mimeType: string): Promise<number | undefined> {
  try {
    return (await parseBuffer(bytes, { mimeType, size: bytes.length }, { duration: true })).format.duration;
  } catch {
    return undefined;
  }
}

/** The last packet may be trimmed by the file, so packet counts leave it out (20 ms here). */
const LAST_PACKET = 0.02;
const PRE_SKIP = 312 / 48000;

describe('WebM: the blocks, not the Duration header', () => {
  const cases: [string, Buffer, number | undefined, number][] = [
    ['Duration 5 s, blocks to 70 s', webm(70, { headerSeconds: 5 }), 5, 70],
    ['the same with unknown Segment and Cluster sizes (MediaRecorder)', webm(70, { headerSeconds: 5, unknownSizes: true }), undefined, 70],
    ['every block stamped 0, 70 s of Opus packets', webm(70, { headerSeconds: 5, stamps: 'zero' }), 5, 70 - LAST_PACKET],
    ['Xiph-laced blocks stamped 0', webm(70, { headerSeconds: 5, stamps: 'zero', lace: 'xiph' }), 5, 70 - LAST_PACKET],
    ['EBML-laced blocks stamped 0', webm(70, { headerSeconds: 5, stamps: 'zero', lace: 'ebml' }), 5, 70 - LAST_PACKET],
    ['fixed-laced blocks stamped 0', webm(70, { headerSeconds: 5, stamps: 'zero', lace: 'fixed' }), 5, 70 - LAST_PACKET],
  ];
  for (const [name, bytes, fooled, real] of cases) {
    it(`${name}: music-metadata says ${fooled ?? 'nothing'}, the length is ${real}`, async () => {
      expect(await metadataSeconds(bytes, 'audio/webm')).toBe(fooled);
      expect(await audioSeconds(bytes, 'audio/webm')).toBeCloseTo(real, 6);
    });
  }

  it('laced blocks stamped in time last as long as their frames', () => {
    expect(matroskaSeconds(webm(70, { lace: 'xiph' }))).toBeCloseTo(70, 6);
    expect(matroskaSeconds(webm(70, { lace: 'ebml' }))).toBeCloseTo(70, 6);
  });

  it('a header longer than the blocks is kept (the larger counts); honest files measure as before', async () => {
    expect(await audioSeconds(webm(5, { headerSeconds: 70 }), 'audio/webm')).toBe(70);
    expect(await audioSeconds(webm(5), 'audio/webm')).toBeCloseTo(5, 6);
    expect(await audioSeconds(webm(5, { headerSeconds: null }), 'audio/webm')).toBeCloseTo(5, 6);
  });

  it('a cut-off file measures the blocks it has; bytes that break the structure are skipped to the next cluster', () => {
    const whole = webm(70, { headerSeconds: 5 });
    expect(matroskaSeconds(whole.subarray(0, Math.floor(whole.length / 2)))).toBeGreaterThan(30);
    const broken = Buffer.from(whole);
    // Zero the first cluster's first byte: no element starts there.
    broken[broken.indexOf(Buffer.from([0x1f, 0x43, 0xb6, 0x75]))] = 0;
    expect(matroskaSeconds(broken)).toBeCloseTo(69, 6);
  });
});

describe('Ogg: every page, not the page music-metadata stops on', () => {
  const cases: [string, Buffer, number][] = [
    ['a chained file: a 4 s link, then a 70 s one', Buffer.concat([oggOpus(4), oggOpusPacked(70, 0x7e57)]), 74],
    ['pages after an end-of-stream flag at 4 s, to 70 s', oggOpusPages([{ granuleSeconds: 4, frames: 1, end: true }, { granuleSeconds: 70, frames: 1 }]), 70],
    ['a last page whose granule (4 s) is lower than the one before (70 s)', oggOpusPages([{ granuleSeconds: 70, frames: 1 }, { granuleSeconds: 4, frames: 1 }]), 70],
    ['granules of 4 s on 70 s of Opus packets', oggOpusPages(Array.from({ length: 14 }, () => ({ granuleSeconds: 4, frames: 250 }))), 70 - LAST_PACKET - PRE_SKIP],
  ];
  for (const [name, bytes, real] of cases) {
    it(`${name}: music-metadata says 4, the length is ${real.toFixed(3)}`, async () => {
      expect(await metadataSeconds(bytes, 'audio/ogg')).toBe(4);
      expect(await audioSeconds(bytes, 'audio/ogg')).toBeCloseTo(real, 6);
    });
  }

  it('an honest file measures what music-metadata measures (the last granule less the pre-skip)', async () => {
    for (const bytes of [oggOpus(4), oggOpusPacked(12.5)]) {
      expect(oggSeconds(bytes)).toBe(await metadataSeconds(bytes, 'audio/ogg'));
    }
    expect(oggSeconds(oggOpusPacked(12.5))).toBeCloseTo(12.5, 6);
  });

  it('bytes between pages are skipped to the next page', () => {
    const [first, second] = [oggOpus(4), oggOpusPacked(70, 0x7e57)];
    expect(oggSeconds(Buffer.concat([first, Buffer.from('not a page'), second]))).toBeCloseTo(74, 6);
  });
});

describe('other files', () => {
  it('WAV and MP3 are measured by music-metadata alone; neither walker claims them', async () => {
    expect(await audioSeconds(wav(3), 'audio/wav')).toBe(3);
    expect(await audioSeconds(MP3, 'audio/mpeg')).toBeCloseTo(1.176, 2);
    for (const bytes of [wav(3), MP3]) {
      expect(matroskaSeconds(bytes)).toBeUndefined();
      expect(oggSeconds(bytes)).toBeUndefined();
    }
  });

  it('Opus packets: SILK, hybrid and CELT frame sizes, two-frame and counted packets, the 120 ms ceiling', () => {
    expect(opusPacketSamples(0x00, undefined)).toBe(480); // SILK NB 10 ms
    expect(opusPacketSamples(0x18, undefined)).toBe(2880); // SILK NB 60 ms
    expect(opusPacketSamples(0x68, undefined)).toBe(960); // hybrid SWB 20 ms
    expect(opusPacketSamples(0x80, undefined)).toBe(120); // CELT NB 2.5 ms
    expect(opusPacketSamples(0xf9, undefined)).toBe(1920); // CELT FB 20 ms, two frames
    expect(opusPacketSamples(0xfb, 0x03)).toBe(2880); // code 3: three frames
    expect(opusPacketSamples(0x1b, 0x3f)).toBe(5760); // 63 × 60 ms, capped at 120 ms
    expect(opusPacketSamples(0xfb, undefined)).toBe(0);
    expect(opusPacketSamples(undefined, undefined)).toBe(0);
  });
});
