/**
 * Audio files made by the tests: WAV (PCM), Ogg Opus and WebM (Opus) containers of a chosen
 * length, minimal but valid enough for a type sniffer and a duration reader (silence inside),
 * and the committed MP3 fixture (test/fixtures/audio/README.md). The Ogg and WebM writers can
 * also lie: headers, granules and timestamps that say less than the audio they carry.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const MP3 = readFileSync(fileURLToPath(new URL('../fixtures/audio/gsutil-test.mp3', import.meta.url)));

/** 8-bit mono PCM WAV at `rate` Hz: `seconds` of silence (8,000 bytes a second at the default rate). */
export function wav(seconds: number, rate = 8000): Buffer {
  const data = Math.round(seconds * rate);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate, 28); // bytes per second
  header.writeUInt16LE(1, 32); // block align
  header.writeUInt16LE(8, 34); // bits per sample
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data, 40);
  return Buffer.concat([header, Buffer.alloc(data, 0x80)]);
}

const CRC_TABLE = Array.from({ length: 256 }, (_, i) => {
  let r = i << 24;
  for (let k = 0; k < 8; k++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
  return r >>> 0;
});

function oggCrc(bytes: Buffer): number {
  let crc = 0;
  for (const b of bytes) crc = ((crc << 8) ^ (CRC_TABLE[((crc >>> 24) ^ b) & 0xff] as number)) >>> 0;
  return crc;
}

/** One Ogg page holding `packets` (each laced whole on it), with its CRC. */
export function oggPage(packets: Buffer | Buffer[], flags: number, granule: bigint, sequence: number, serial = 0x5eed): Buffer {
  const segments: number[] = [];
  for (const packet of Array.isArray(packets) ? packets : [packets]) {
    let left = packet.length;
    while (left >= 255) {
      segments.push(255);
      left -= 255;
    }
    segments.push(left);
  }
  const packet = Buffer.concat(Array.isArray(packets) ? packets : [packets]);
  const header = Buffer.alloc(27 + segments.length);
  header.write('OggS', 0, 'ascii');
  header[5] = flags;
  header.writeBigUInt64LE(granule, 6);
  header.writeUInt32LE(serial, 14);
  header.writeUInt32LE(sequence, 18);
  header[26] = segments.length;
  segments.forEach((s, i) => (header[27 + i] = s));
  const page = Buffer.concat([header, packet]);
  page.writeUInt32LE(oggCrc(page), 22);
  return page;
}

const OPUS_PRE_SKIP = 312;
/** A silent 20 ms CELT frame: TOC 0xf8 (configuration 31, one frame) and one byte. */
const OPUS_FRAME = Buffer.from([0xf8, 0x00]);

export interface OggOpusPage {
  /** The page's granule position, in seconds of audio (the pre-skip is added). */
  granuleSeconds: number;
  /** 20 ms Opus packets on the page (at most 255). */
  frames: number;
  /** The end-of-stream flag (default: on the last page only). */
  end?: boolean;
}

/** Ogg Opus: OpusHead, OpusTags, then the audio pages as given, in a stream of serial `serial`. */
export function oggOpusPages(pages: OggOpusPage[], serial = 0x5eed): Buffer {
  const head = Buffer.alloc(19);
  head.write('OpusHead', 0, 'ascii');
  head[8] = 1; // version
  head[9] = 1; // channels
  head.writeUInt16LE(OPUS_PRE_SKIP, 10);
  head.writeUInt32LE(48000, 12);
  const vendor = 'gateway-tests';
  const tags = Buffer.alloc(8 + 4 + vendor.length + 4);
  tags.write('OpusTags', 0, 'ascii');
  tags.writeUInt32LE(vendor.length, 8);
  tags.write(vendor, 12, 'ascii');
  return Buffer.concat([
    oggPage(head, 0x02, 0n, 0, serial),
    oggPage(tags, 0x00, 0n, 1, serial),
    ...pages.map((page, i) => {
      const end = page.end ?? i === pages.length - 1;
      const granule = BigInt(Math.round(page.granuleSeconds * 48000) + OPUS_PRE_SKIP);
      return oggPage(Array.from({ length: page.frames }, () => OPUS_FRAME), end ? 0x04 : 0x00, granule, 2 + i, serial);
    }),
  ]);
}

/** Ogg Opus whose last page's granule position gives the length (one 20 ms packet inside). */
export function oggOpus(seconds: number, serial = 0x5eed): Buffer {
  return oggOpusPages([{ granuleSeconds: seconds, frames: 1 }], serial);
}

/** Ogg Opus whose packets and granules agree: `seconds` of 20 ms packets, 250 to a page (5 s). */
export function oggOpusPacked(seconds: number, serial = 0x5eed): Buffer {
  const frames = Math.round(seconds * 50);
  const pages: OggOpusPage[] = [];
  for (let done = 0; done < frames; done += 250) {
    const count = Math.min(250, frames - done);
    pages.push({ granuleSeconds: (done + count) / 50, frames: count });
  }
  return oggOpusPages(pages, serial);
}

/** An EBML element: id bytes, a size as an 8-byte vint (or "unknown"), the body. */
function ebml(id: number[], body: Buffer, unknownSize = false): Buffer {
  const size = Buffer.alloc(8);
  size.writeBigUInt64BE(unknownSize ? 0x01ffffffffffffffn : BigInt(body.length) | (1n << 56n));
  return Buffer.concat([Buffer.from(id), size, body]);
}
const uint = (n: number) => Buffer.from([n & 0xff]);
const text = (s: string) => Buffer.from(s, 'ascii');
function float64(x: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(x);
  return b;
}
function uint64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
}
function uint32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

export interface WebmOptions {
  /** The Segment Info's Duration in seconds (default: the blocks' length); null: no Duration element. */
  headerSeconds?: number | null;
  /** Segment and Cluster sizes written as "unknown", as MediaRecorder writes them. */
  unknownSizes?: boolean;
  /** 'zero': every block stamped 0 (the packets still last `seconds`). */
  stamps?: 'real' | 'zero';
  /** Five frames laced in each block (100 ms) instead of one. */
  lace?: 'xiph' | 'fixed' | 'ebml';
  /** The track's CodecID (default `A_OPUS`). */
  codecId?: string;
  /** The Info's TimecodeScale in nanoseconds (default 1,000,000). */
  timecodeScale?: number;
  /** A ContentEncoding of the frames: 'strip' removes each frame's TOC byte (header stripping, restored from the track), 'zlib' declares them compressed. */
  encoding?: 'strip' | 'zlib';
}

/** Lacing bits of the block flags and the lace header for five 2-byte frames. */
const LACES = {
  xiph: { bits: 0x02, header: [4, 2, 2, 2, 2] },
  fixed: { bits: 0x04, header: [4] },
  // The first size as a vint (2), then four signed differences of 0 (0xbf: 63 less the 1-byte bias).
  ebml: { bits: 0x06, header: [4, 0x82, 0xbf, 0xbf, 0xbf] },
} as const;

/**
 * WebM with one Opus audio track: `seconds` of 20 ms blocks (SimpleBlocks of one silent CELT
 * frame, or five laced), one cluster a second, and a Segment Info Duration of `headerSeconds`.
 */
export function webm(seconds: number, options: WebmOptions = {}): Buffer {
  const header = ebml([0x1a, 0x45, 0xdf, 0xa3], Buffer.concat([
    ebml([0x42, 0x86], uint(1)),
    ebml([0x42, 0xf7], uint(1)),
    ebml([0x42, 0xf2], uint(4)),
    ebml([0x42, 0xf3], uint(8)),
    ebml([0x42, 0x82], text('webm')),
    ebml([0x42, 0x87], uint(4)),
    ebml([0x42, 0x85], uint(2)),
  ]));
  const headerSeconds = options.headerSeconds === undefined ? seconds : options.headerSeconds;
  const info = ebml([0x15, 0x49, 0xa9, 0x66], Buffer.concat([
    ebml([0x2a, 0xd7, 0xb1], uint64(options.timecodeScale ?? 1_000_000)), // TimecodeScale
    ...(headerSeconds === null ? [] : [ebml([0x44, 0x89], float64(headerSeconds * 1000))]),
    ebml([0x4d, 0x80], text('gateway-tests')),
    ebml([0x57, 0x41], text('gateway-tests')),
  ]));
  const track = ebml([0xae], Buffer.concat([
    ebml([0xd7], uint(1)),
    ebml([0x73, 0xc5], uint(1)),
    ebml([0x83], uint(2)), // audio
    ebml([0x86], text(options.codecId ?? 'A_OPUS')),
    ebml([0xe1], Buffer.concat([ebml([0xb5], float64(48000)), ebml([0x9f], uint(1))])),
    // ContentEncodings > ContentEncoding > ContentCompression > ContentCompAlgo (3: header stripping, 0: zlib), ContentCompSettings.
    ...(options.encoding === undefined ? [] : [ebml([0x6d, 0x80], ebml([0x62, 0x40], ebml([0x50, 0x34], Buffer.concat([
      ebml([0x42, 0x54], uint(options.encoding === 'strip' ? 3 : 0)),
      ...(options.encoding === 'strip' ? [ebml([0x42, 0x55], OPUS_FRAME.subarray(0, 1))] : []),
    ]))))]),
  ]));
  const frame = options.encoding === 'strip' ? OPUS_FRAME.subarray(1) : OPUS_FRAME;
  const clusters: Buffer[] = [];
  const frames = Math.round(seconds * 50);
  const lace = options.lace === undefined ? undefined : LACES[options.lace];
  const perBlock = lace === undefined ? 1 : 5;
  for (let first = 0; first < frames; first += 50) {
    const blocks: Buffer[] = [];
    for (let f = first; f < Math.min(first + 50, frames); f += perBlock) {
      const relative = options.stamps === 'zero' ? 0 : (f - first) * 20;
      // Track 1 (vint 0x81), the timecode relative to the cluster's, flags (keyframe, lacing), the frames.
      const head = Buffer.from([0x81, relative >> 8, relative & 0xff, 0x80 | (lace?.bits ?? 0), ...(lace?.header ?? [])]);
      blocks.push(ebml([0xa3], Buffer.concat([head, ...Array.from({ length: perBlock }, () => frame)])));
    }
    const timecode = options.stamps === 'zero' ? 0 : first * 20;
    clusters.push(ebml([0x1f, 0x43, 0xb6, 0x75], Buffer.concat([ebml([0xe7], uint32(timecode)), ...blocks]), options.unknownSizes));
  }
  const segment = ebml([0x18, 0x53, 0x80, 0x67], Buffer.concat([info, ebml([0x16, 0x54, 0xae, 0x6b], track), ...clusters]), options.unknownSizes);
  return Buffer.concat([header, segment]);
}
