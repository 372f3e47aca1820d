/**
 * Audio files made by the tests: WAV (PCM), Ogg Opus and WebM (Opus) containers of a chosen
 * length, minimal but valid enough for a type sniffer and a duration reader (silence inside),
 * and the committed MP3 fixture (test/fixtures/audio/README.md).
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

function oggPage(packet: Buffer, flags: number, granule: bigint, sequence: number): Buffer {
  const segments: number[] = [];
  let left = packet.length;
  while (left >= 255) {
    segments.push(255);
    left -= 255;
  }
  segments.push(left);
  const header = Buffer.alloc(27 + segments.length);
  header.write('OggS', 0, 'ascii');
  header[5] = flags;
  header.writeBigUInt64LE(granule, 6);
  header.writeUInt32LE(0x5eed, 14); // stream serial
  header.writeUInt32LE(sequence, 18);
  header[26] = segments.length;
  segments.forEach((s, i) => (header[27 + i] = s));
  const page = Buffer.concat([header, packet]);
  page.writeUInt32LE(oggCrc(page), 22);
  return page;
}

/** Ogg Opus: OpusHead, OpusTags, and one page of silent frames whose granule position gives the length. */
export function oggOpus(seconds: number): Buffer {
  const head = Buffer.alloc(19);
  head.write('OpusHead', 0, 'ascii');
  head[8] = 1; // version
  head[9] = 1; // channels
  head.writeUInt16LE(312, 10); // pre-skip
  head.writeUInt32LE(48000, 12);
  const vendor = 'gateway-tests';
  const tags = Buffer.alloc(8 + 4 + vendor.length + 4);
  tags.write('OpusTags', 0, 'ascii');
  tags.writeUInt32LE(vendor.length, 8);
  tags.write(vendor, 12, 'ascii');
  // 20 ms silent CELT frames (TOC 0xf8 + one byte), as many as fit one page.
  const frames = Buffer.alloc(2 * 100);
  for (let i = 0; i < 100; i++) frames[2 * i] = 0xf8;
  return Buffer.concat([
    oggPage(head, 0x02, 0n, 0),
    oggPage(tags, 0x00, 0n, 1),
    oggPage(frames.subarray(0, 2), 0x04, BigInt(Math.round(seconds * 48000) + 312), 2),
  ]);
}

/** An EBML element: id bytes, a size as an 8-byte vint, the body. */
function ebml(id: number[], body: Buffer): Buffer {
  const size = Buffer.alloc(8);
  size.writeBigUInt64BE(BigInt(body.length) | (1n << 56n));
  return Buffer.concat([Buffer.from(id), size, body]);
}
const uint = (n: number) => Buffer.from([n & 0xff]);
const text = (s: string) => Buffer.from(s, 'ascii');
function float64(x: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(x);
  return b;
}

/** WebM with one Opus audio track and a segment duration of `seconds`. */
export function webm(seconds: number): Buffer {
  const header = ebml([0x1a, 0x45, 0xdf, 0xa3], Buffer.concat([
    ebml([0x42, 0x86], uint(1)),
    ebml([0x42, 0xf7], uint(1)),
    ebml([0x42, 0xf2], uint(4)),
    ebml([0x42, 0xf3], uint(8)),
    ebml([0x42, 0x82], text('webm')),
    ebml([0x42, 0x87], uint(4)),
    ebml([0x42, 0x85], uint(2)),
  ]));
  const info = ebml([0x15, 0x49, 0xa9, 0x66], Buffer.concat([
    ebml([0x2a, 0xd7, 0xb1], Buffer.from([0x0f, 0x42, 0x40])), // TimecodeScale 1,000,000 ns
    ebml([0x44, 0x89], float64(seconds * 1000)),
    ebml([0x4d, 0x80], text('gateway-tests')),
    ebml([0x57, 0x41], text('gateway-tests')),
  ]));
  const track = ebml([0xae], Buffer.concat([
    ebml([0xd7], uint(1)),
    ebml([0x73, 0xc5], uint(1)),
    ebml([0x83], uint(2)), // audio
    ebml([0x86], text('A_OPUS')),
    ebml([0xe1], Buffer.concat([ebml([0xb5], float64(48000)), ebml([0x9f], uint(1))])),
  ]));
  const segment = ebml([0x18, 0x53, 0x80, 0x67], Buffer.concat([info, ebml([0x16, 0x54, 0xae, 0x6b], track)]));
  return Buffer.concat([header, segment]);
}
