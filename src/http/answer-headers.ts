/**
 * The headers of an answer, decided and checked before any money moves: a value Node
 * would refuse in writeHead (a control or non-Latin-1 character) is dropped here and
 * reported, so that sending the headers can never fail after a run was held or settled.
 * A header is never the reason a request fails.
 */
import { validateHeaderName, validateHeaderValue } from 'node:http';

export type DroppedHeader = (name: string, error: unknown) => void;

/**
 * `decided` (headers already set on the reply, e.g. rate limits) plus `added` (undefined
 * values left out), as strings, keeping only names and values Node accepts.
 */
export function answerHeaders(decided: Record<string, string | number | readonly string[] | undefined>, added: Record<string, string | undefined>, dropped: DroppedHeader = () => undefined): Record<string, string> {
  const out: Record<string, string> = {};
  const put = (name: string, value: string) => {
    try {
      validateHeaderName(name);
      validateHeaderValue(name, value);
      out[name] = value;
    } catch (error) {
      dropped(name, error);
    }
  };
  for (const [name, value] of Object.entries(decided)) {
    if (value === undefined) continue;
    put(name, Array.isArray(value) ? value.join(', ') : String(value));
  }
  for (const [name, value] of Object.entries(added)) if (value !== undefined) put(name, value);
  return out;
}
