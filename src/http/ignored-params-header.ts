/**
 * The value of X-Service-Ignored-Params (DECISIONS.md, Rate limits and keys): visible
 * ASCII only, whatever the client named its fields.
 * - Every character outside `!`…`~` is percent-encoded as UTF-8 (a lone surrogate as
 *   U+FFFD); so are `%`, `,` and `"`, so that an entry is never read as an escape, as
 *   two names, or as the quoted empty name `""` (what an empty name becomes).
 * - An entry over 128 characters is cut to 128, ending in `...`, never inside an escape.
 * - The header stays under 4,096 bytes: names past that are left out and the last entry is `...`.
 * Only as much of each name is read as can be shown, so a huge name costs nothing more.
 */

export const MAX_ENTRY_CHARS = 128;
/** The header value is always shorter than this many bytes. */
export const MAX_HEADER_BYTES = 4096;

const SEPARATOR = ', ';
const MORE = '...';
const EMPTY_NAME = '""';

/** The header value for these names, or undefined when there are none. */
export function ignoredParamsHeader(names: readonly string[]): string | undefined {
  if (names.length === 0) return undefined;
  let out = '';
  for (let i = 0; i < names.length; i++) {
    const entry = headerEntry(names[i] as string);
    const candidate = out === '' ? entry : out + SEPARATOR + entry;
    // Room for a closing ", ..." stays free while more names follow.
    const reserve = i === names.length - 1 ? 0 : SEPARATOR.length + MORE.length;
    if (candidate.length + reserve < MAX_HEADER_BYTES) {
      out = candidate;
      continue;
    }
    return out === '' ? MORE : out + SEPARATOR + MORE;
  }
  return out;
}

/** One name as it appears in the header: encoded, and cut to MAX_ENTRY_CHARS. */
export function headerEntry(name: string): string {
  if (name === '') return EMPTY_NAME;
  const pieces: string[] = [];
  let length = 0;
  for (const char of name) {
    const piece = encodeChar(char);
    pieces.push(piece);
    length += piece.length;
    if (length > MAX_ENTRY_CHARS) break;
  }
  if (length <= MAX_ENTRY_CHARS) return pieces.join('');
  let kept = '';
  for (const piece of pieces) {
    if (kept.length + piece.length > MAX_ENTRY_CHARS - MORE.length) break;
    kept += piece;
  }
  return kept + MORE;
}

function encodeChar(char: string): string {
  const code = char.codePointAt(0) as number;
  if (code >= 0x21 && code <= 0x7e && char !== '%' && char !== ',' && char !== '"') return char;
  let out = '';
  for (const byte of Buffer.from(char, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}
