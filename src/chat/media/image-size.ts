/**
 * The pixel size of a base64 image, read from its header bytes with image-size (never by
 * decoding the image). Only as much base64 is decoded as the header needs: a few KiB for
 * PNG, GIF and WebP; a JPEG whose size marker sits behind large metadata segments gets
 * longer prefixes until the marker is found.
 */
import { imageSize } from 'image-size';
import { decodePrefix, decodedLength, type Base64DataUrl } from './data-url.ts';

export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';

export interface PixelSize {
  width: number;
  height: number;
}

export type ImageSizeResult = ({ ok: true; format: ImageFormat } & PixelSize) | { ok: false; reason: string };

/** Declared media types → the format their bytes must have. */
const DECLARED: Record<string, ImageFormat> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

const NAMES: Record<ImageFormat, string> = { png: 'PNG', jpeg: 'JPEG', gif: 'GIF', webp: 'WebP' };

/** image-size's type names → ours. */
const FROM_IMAGE_SIZE: Record<string, ImageFormat> = { png: 'png', jpg: 'jpeg', gif: 'gif', webp: 'webp' };

/** Bytes a header needs before its size can be read (a PNG with Apple's CgBI chunk needs 40). */
const HEADER_BYTES: Record<ImageFormat, number> = { png: 24, jpeg: 4, gif: 10, webp: 30 };

/** Prefixes tried in turn, in bytes; the last try is the whole payload. */
const PREFIXES = [4 * 1024, 64 * 1024, 1024 * 1024];

/** The format the first bytes announce (magic numbers), or undefined. */
function sniff(bytes: Uint8Array): ImageFormat | undefined {
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  if (bytes[0] === 0x89 && ascii(1, 8) === 'PNG\r\n\x1a\n') return 'png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (/^GIF8[79]a$/.test(ascii(0, 6))) return 'gif';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'webp';
  return undefined;
}

/** Width and height of a base64 PNG, JPEG, GIF or WebP whose bytes match its declared type. */
export function readImageSize(data: Base64DataUrl): ImageSizeResult {
  const declared = DECLARED[data.mimeType];
  if (declared === undefined) return { ok: false, reason: `images are accepted as PNG, JPEG, GIF or WebP, not ${data.mimeType}` };
  const total = decodedLength(data);
  for (const want of [...PREFIXES.filter((n) => n < total), total]) {
    const bytes = decodePrefix(data, want);
    const actual = sniff(bytes);
    if (actual === undefined) return { ok: false, reason: `the data is not a PNG, JPEG, GIF or WebP image although it is declared as ${data.mimeType}` };
    if (actual !== declared) return { ok: false, reason: `the data is a ${NAMES[actual]} image but is declared as ${data.mimeType}` };
    const needs = actual === 'png' && String.fromCharCode(...bytes.subarray(12, 16)) === 'CgBI' ? 40 : HEADER_BYTES[actual];
    if (bytes.length < needs) break;
    let size: { width?: number; height?: number; type?: string };
    try {
      size = imageSize(bytes);
    } catch {
      continue; // the header needs more bytes (or is broken: the last try says so)
    }
    if (size.type === undefined || FROM_IMAGE_SIZE[size.type] !== actual) continue;
    const { width, height } = size;
    if (!isDimension(width) || !isDimension(height)) return { ok: false, reason: `the ${NAMES[actual]} header gives no valid pixel size` };
    return { ok: true, format: actual, width, height };
  }
  return { ok: false, reason: `the pixel size of this ${NAMES[declared]} image cannot be read` };
}

function isDimension(n: number | undefined): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n > 0;
}
