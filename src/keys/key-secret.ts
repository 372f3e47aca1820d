/**
 * API key secrets: `svc_live_` + 64 lowercase hex from a cryptographic source,
 * stored only as a SHA-256 hash plus a short display prefix.
 */
import { createHash, randomBytes } from 'node:crypto';

const KEY_PREFIX = 'svc_live_';
const KEY_PATTERN = /^svc_live_[0-9a-f]{64}$/;
const DISPLAY_LENGTH = KEY_PREFIX.length + 6;

export function generateKeySecret(): string {
  return KEY_PREFIX + randomBytes(32).toString('hex');
}

export function isWellFormedKey(secret: string): boolean {
  return secret.length === KEY_PREFIX.length + 64 && KEY_PATTERN.test(secret);
}

export function hashKeySecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** What may be shown or logged of a key: `svc_live_1a2b3c…`. */
export function displayPrefix(secret: string): string {
  return secret.slice(0, DISPLAY_LENGTH);
}
