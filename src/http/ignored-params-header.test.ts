import { validateHeaderValue } from 'node:http';
import { describe, expect, it } from 'vitest';
import { headerEntry, ignoredParamsHeader, MAX_ENTRY_CHARS, MAX_HEADER_BYTES } from './ignored-params-header.ts';

describe('X-Service-Ignored-Params value', () => {
  it('is absent without names, and plain names pass unchanged', () => {
    expect(ignoredParamsHeader([])).toBeUndefined();
    expect(ignoredParamsHeader(['foo', 'top_p', 'a-b.c'])).toBe('foo, top_p, a-b.c');
  });

  it('percent-encodes as UTF-8 everything outside ! … ~, and %, comma and double quote', () => {
    expect(headerEntry('a b')).toBe('a%20b');
    expect(headerEntry('100%,"x"')).toBe('100%25%2C%22x%22');
    expect(headerEntry('ß\u0000\u007f')).toBe('%C3%9F%00%7F');
    expect(headerEntry('\ud800')).toBe('%EF%BF%BD');
    expect(headerEntry('')).toBe('""');
  });

  it('an entry of exactly 128 characters stays whole; one more is cut to 125 plus "..."', () => {
    expect(headerEntry('x'.repeat(MAX_ENTRY_CHARS))).toBe('x'.repeat(MAX_ENTRY_CHARS));
    expect(headerEntry('x'.repeat(MAX_ENTRY_CHARS + 1))).toBe(`${'x'.repeat(125)}...`);
    // 42 escapes of 3 characters are 126: the 43rd would cross 125, so 41 are kept.
    expect(headerEntry('\u0001'.repeat(50))).toBe(`${'%01'.repeat(41)}...`);
  });

  it('stays under 4,096 bytes, ending in "..." when names are left out, and is always a valid header value', () => {
    const names = Array.from({ length: 2000 }, (_, i) => `name_${i}_\u00e9\r\n`);
    const value = ignoredParamsHeader(names) as string;
    expect(value.length).toBeLessThan(MAX_HEADER_BYTES);
    expect(value.endsWith(', ...')).toBe(true);
    expect(() => validateHeaderValue('x-service-ignored-params', value)).not.toThrow();
    // Everything fits: no "...".
    const few = ignoredParamsHeader(['a'.repeat(128), 'b'.repeat(128)]) as string;
    expect(few.endsWith('...')).toBe(false);
  });
});
