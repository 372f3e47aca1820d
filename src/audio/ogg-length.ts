/**
 * The length of an Ogg file read from its pages, every one of them (docs/decisions.md "Audio
 * length from the audio itself"). music-metadata takes the granule position of the page it
 * stops on: it stops at the first end-of-stream page, so a chained file (a second link after
 * the first ends) or pages after an early end-of-stream flag go unmeasured, and it believes a
 * last page whose granule is lower than an earlier one's. Here:
 * - each audio stream's length is its highest granule position over all its pages, at the
 *   codec's clock (Opus: 48 kHz less the pre-skip; Vorbis: the identification header's rate;
 *   FLAC: STREAMINFO's rate; Speex: its header's rate);
 * - an Opus stream is also measured by its packets (the TOC of each, opus-frames.ts), the audio
 *   a decoder plays whatever the granules claim, less the pre-skip and the last packet (which
 *   the last granule may trim); the larger of the two counts;
 * - streams that run together (one link) count as the longest; links one after the other add.
 * A page is read only when its CRC is right, as libogg and FFmpeg read it: bytes that are not
 * a page (a damaged or forged one, or one cut off by the end of the file) are skipped one byte
 * at a time to the next capture pattern, so a forged page cannot lace real ones into its body.
 * A link of more than 16 streams, or a walk past its work budget (walk-budget.ts), makes the
 * file unreadable (`UnreadableAudio`).
 */
import { OPUS_RATE, opusPacketSamples } from './opus-frames.ts';
import { UnreadableAudio, WalkBudget } from './walk-budget.ts';

const CAPTURE = Buffer.from('OggS', 'latin1');
const HEADER_BYTES = 27;
const CONTINUED = 0x01;
const BEGINNING = 0x02;
const END = 0x04;
/** Beginning-of-stream pages one link may have (a recording has one stream; Ogg Skeleton and video add a few). */
export const MAX_STREAMS = 16;
/** Work units for a page's header (besides the bytes its CRC covers). */
const PAGE_UNITS = 32;

/** Ogg's CRC-32: polynomial 0x04c11db7, not reflected, initial value 0. */
const CRC_TABLE = new Uint32Array(256).map((_, i) => {
  let r = i << 24;
  for (let k = 0; k < 8; k++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
  return r >>> 0;
});

/** Whether the page from `at` to `end` carries its own CRC (computed with the CRC field, bytes 22 to 25, as zeros). */
function crcMatches(bytes: Buffer, at: number, end: number): boolean {
  let crc = 0;
  for (let i = at; i < end; i++) {
    const b = i >= at + 22 && i < at + 26 ? 0 : (bytes[i] ?? 0);
    crc = ((crc << 8) ^ (CRC_TABLE[((crc >>> 24) ^ b) & 0xff] ?? 0)) >>> 0;
  }
  return crc === bytes.readUInt32LE(at + 22);
}

type Codec = 'opus' | 'vorbis' | 'flac' | 'speex';

interface OggStream {
  codec: Codec;
  /** Samples a second of the granule clock. */
  rate: number;
  /** Samples at the granule clock's start that are not played (Opus pre-skip). */
  preSkip: number;
  /** The highest granule position of a page of the stream (-1: none yet). */
  granule: number;
  /** Complete packets seen (Opus: the first two are headers). */
  packets: number;
  /** Samples of the Opus audio packets, and of the last one (which the last granule may trim). */
  opusSamples: number;
  lastSamples: number;
  /** The first two bytes of the packet being gathered (-1: not yet), and whether one is (it continues on the next page). */
  toc: number;
  count: number;
  partial: boolean;
  /** Skipping the leading fragment of a continued page that continues nothing (as libogg drops it). */
  skipping: boolean;
  ended: boolean;
}

/** The stream an identification packet (a beginning-of-stream page's body) opens; undefined when not audio or unknown. */
function openStream(id: Buffer): OggStream | undefined {
  const start = { granule: -1, packets: 0, opusSamples: 0, lastSamples: 0, toc: -1, count: -1, partial: false, skipping: false, ended: false };
  if (id.length >= 19 && id.toString('latin1', 0, 8) === 'OpusHead') {
    return { ...start, codec: 'opus', rate: OPUS_RATE, preSkip: id.readUInt16LE(10) };
  }
  if (id.length >= 16 && id[0] === 0x01 && id.toString('latin1', 1, 7) === 'vorbis') {
    return { ...start, codec: 'vorbis', rate: id.readUInt32LE(12), preSkip: 0 };
  }
  if (id.length >= 30 && id[0] === 0x7f && id.toString('latin1', 1, 5) === 'FLAC') {
    // STREAMINFO follows the mapping header (9 bytes), 'fLaC' and the block header (8): its rate is 20 bits at byte 10.
    const rate = ((id[27] ?? 0) << 12) | ((id[28] ?? 0) << 4) | ((id[29] ?? 0) >> 4);
    return { ...start, codec: 'flac', rate, preSkip: 0 };
  }
  if (id.length >= 40 && id.toString('latin1', 0, 8) === 'Speex   ') {
    return { ...start, codec: 'speex', rate: id.readInt32LE(36), preSkip: 0 };
  }
  return undefined;
}

function streamSeconds(s: OggStream): number {
  const byGranule = s.granule >= 0 && s.rate > 0 ? (s.granule - s.preSkip) / s.rate : 0;
  // The end of the last packet may be trimmed (its page's granule says where the audio ends).
  const byPackets = s.codec === 'opus' ? (s.opusSamples - s.lastSamples - s.preSkip) / OPUS_RATE : 0;
  return Math.max(0, byGranule, byPackets);
}

function linkSeconds(link: Map<number, OggStream>): number {
  let longest = 0;
  for (const s of link.values()) longest = Math.max(longest, streamSeconds(s));
  return longest;
}

/** Follows a page's packets (its lacing values) to count Opus packets and their samples. */
function readPackets(s: OggStream, bytes: Buffer, lacing: Buffer, bodyStart: number, continued: boolean): void {
  if (!continued) {
    s.toc = -1;
    s.count = -1;
    s.partial = false;
    s.skipping = false;
  } else if (!s.partial) {
    s.skipping = true;
  }
  let at = bodyStart;
  for (const size of lacing) {
    if (s.skipping) {
      if (size < 255) s.skipping = false;
    } else {
      for (let i = 0; i < size && s.count < 0; i++) {
        const b = bytes[at + i] ?? 0;
        if (s.toc < 0) s.toc = b;
        else s.count = b;
      }
      s.partial = true;
      if (size < 255) {
        s.packets++;
        // OpusHead and OpusTags are the first two packets; every later one is audio.
        if (s.codec === 'opus' && s.packets > 2) {
          s.lastSamples = opusPacketSamples(s.toc < 0 ? undefined : s.toc, s.count < 0 ? undefined : s.count);
          s.opusSamples += s.lastSamples;
        }
        s.toc = -1;
        s.count = -1;
        s.partial = false;
      }
    }
    at += size;
  }
}

/** Whether the bytes start as an Ogg file (a page's capture pattern). */
export function isOgg(bytes: Buffer): boolean {
  return bytes.length >= HEADER_BYTES && bytes.compare(CAPTURE, 0, 4, 0, 4) === 0;
}

/**
 * The seconds of audio in an Ogg file; undefined when it is not Ogg or no audio stream is
 * found. Throws `UnreadableAudio` for a link of more than MAX_STREAMS streams or past the
 * budget (by default, walk-budget.ts's for the file's size).
 */
export function oggSeconds(bytes: Buffer, budget = new WalkBudget(bytes.length)): number | undefined {
  if (!isOgg(bytes)) return undefined;
  let total = 0;
  let link = new Map<number, OggStream>();
  /** The link's streams that have flagged end-of-stream, and its beginning-of-stream pages (audio or not). */
  let ended = 0;
  let begun = 0;
  let found = false;
  let at = 0;
  while (at + HEADER_BYTES <= bytes.length) {
    if (bytes.compare(CAPTURE, 0, 4, at, at + 4) !== 0) {
      const next = bytes.indexOf(CAPTURE, at + 1);
      budget.spend((next < 0 ? bytes.length : next) - at);
      if (next < 0) break;
      at = next;
      continue;
    }
    budget.spend(PAGE_UNITS);
    const segments = bytes[at + 26] ?? 0;
    const bodyStart = at + HEADER_BYTES + segments;
    const lacing = bytes.subarray(at + HEADER_BYTES, bodyStart);
    const bodyEnd = bodyStart + lacing.reduce((sum, size) => sum + size, 0);
    // Not a page (cut off by the end of the file, or its CRC wrong): resync at the next byte, as libogg does.
    if (bodyEnd > bytes.length) {
      at += 1;
      continue;
    }
    budget.spend(bodyEnd - at);
    if (!crcMatches(bytes, at, bodyEnd)) {
      at += 1;
      continue;
    }
    const flags = bytes[at + 5] ?? 0;
    const granule = bytes.readBigInt64LE(at + 6);
    const serial = bytes.readUInt32LE(at + 14);
    if ((flags & BEGINNING) !== 0) {
      if (link.has(serial) || (link.size > 0 && ended === link.size)) {
        total += linkSeconds(link);
        link = new Map();
        ended = 0;
        begun = 0;
      }
      begun++;
      if (begun > MAX_STREAMS) throw new UnreadableAudio(`more than ${MAX_STREAMS} streams in one link`);
      const opened = openStream(bytes.subarray(bodyStart, bodyStart + (lacing[0] ?? 0)));
      if (opened !== undefined) {
        link.set(serial, opened);
        found = true;
      }
    }
    const stream = link.get(serial);
    if (stream !== undefined) {
      // -1 marks a page on which no packet ends.
      if (granule >= 0n) stream.granule = Math.max(stream.granule, Number(granule));
      readPackets(stream, bytes, lacing, bodyStart, (flags & CONTINUED) !== 0);
      if ((flags & END) !== 0 && !stream.ended) {
        stream.ended = true;
        ended++;
      }
    }
    at = bodyEnd;
  }
  total += linkSeconds(link);
  return found ? total : undefined;
}
