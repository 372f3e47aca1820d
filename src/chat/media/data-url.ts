/**
 * Base64 data URLs read without copying their payload: the declared type, the decoded
 * size (from the length alone) and a decoded prefix (what an image header needs).
 */

export interface Base64DataUrl {
  /** The declared media type, lower-cased (`image/png`, `application/pdf`). */
  mimeType: string;
  /** The whole URL; the payload starts at `start`. */
  url: string;
  start: number;
}

const HEAD = /^data:([a-z0-9.+/-]+);base64,/i;

/** `data:<type>;base64,<payload>` → its parts; undefined for anything else. */
export function base64DataUrl(url: string): Base64DataUrl | undefined {
  const match = HEAD.exec(url.slice(0, 128));
  if (match === null) return undefined;
  return { mimeType: (match[1] as string).toLowerCase(), url, start: match[0].length };
}

/** Bytes the payload decodes to, worked out from its length (whitespace would make it an overestimate). */
export function decodedLength(data: Base64DataUrl): number {
  const chars = data.url.length - data.start;
  let padding = 0;
  if (chars > 0 && data.url.endsWith('=')) padding = data.url.endsWith('==') ? 2 : 1;
  return Math.max(0, Math.floor((chars * 3) / 4) - padding);
}

/** The first `bytes` bytes of the payload (fewer when it is shorter), decoding only what they need. */
export function decodePrefix(data: Base64DataUrl, bytes: number): Buffer {
  const chars = Math.ceil(bytes / 3) * 4;
  return Buffer.from(data.url.slice(data.start, data.start + chars), 'base64');
}
