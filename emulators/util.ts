/** Small helpers shared by every emulator: ids, text splitting, token estimates, vectors. */
import { randomUUID } from 'node:crypto';

const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A random base-62 string (ids only; not security sensitive, so Math.random is enough and cheap). */
export function randomId(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += B62[(Math.random() * 62) | 0];
  return out;
}

export function uuid(): string {
  return randomUUID();
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** ~4 characters per token, never negative; zero characters is zero tokens. */
export function tokensFor(chars: number): number {
  return chars <= 0 ? 0 : Math.ceil(chars / 4);
}

/** Splits text into `n` non-empty pieces of near-equal length (fewer when the text is shorter), never inside a surrogate pair. */
export function splitText(text: string, n: number): string[] {
  const len = text.length;
  if (len === 0) return [];
  const parts = Math.max(1, Math.min(Math.floor(n), len));
  if (parts === 1) return [text];
  const out: string[] = [];
  let start = 0;
  for (let i = 1; i <= parts; i++) {
    let end = i === parts ? len : Math.round((i * len) / parts);
    if (end < len && end > start) {
      const c = text.charCodeAt(end - 1);
      if (c >= 0xd800 && c <= 0xdbff) end++;
    }
    if (end > start) {
      out.push(text.slice(start, end));
      start = end;
    }
  }
  return out;
}

/** Fragments of a JSON string as a model streams them: a handful of short pieces. */
export function fragments(json: string): string[] {
  return splitText(json, Math.min(5, Math.max(1, Math.ceil(json.length / 6))));
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const vectorCache = new Map<string, number[]>();

/** A deterministic unit vector of `dims` floats, seeded by the text (mulberry32 over an FNV-1a seed). */
export function unitVector(seed: string, dims: number): number[] {
  const key = `${dims}:${seed}`;
  const hit = vectorCache.get(key);
  if (hit !== undefined) return hit;
  let a = fnv1a(seed) || 1;
  const v = new Array<number>(dims);
  let norm = 0;
  for (let i = 0; i < dims; i++) {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    const x = ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
    v[i] = x;
    norm += x * x;
  }
  const inv = 1 / Math.sqrt(norm);
  for (let i = 0; i < dims; i++) v[i] = Math.fround((v[i] as number) * inv);
  if (vectorCache.size >= 512) vectorCache.clear();
  vectorCache.set(key, v);
  return v;
}

/** Little-endian float32 bytes, base64 (OpenAI's `encoding_format: "base64"`). */
export function float32Base64(v: number[]): string {
  const buf = Buffer.allocUnsafe(v.length * 4);
  for (let i = 0; i < v.length; i++) buf.writeFloatLE(v[i] as number, i * 4);
  return buf.toString('base64');
}

export function truncate(s: string, max: number): string {
  return s.length <= max ? s : s.slice(0, max);
}

/** The number in a header value, or undefined. */
export function headerString(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
