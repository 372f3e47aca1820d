/** A gateway's log lines kept in memory (GatewayOverrides.logStream), parsed on demand. */
import { Writable } from 'node:stream';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- log lines are inspected freely
export type LogLine = Record<string, any>;

export interface LogCapture {
  stream: Writable;
  /** Everything written so far, as text. */
  text(): string;
  lines(): LogLine[];
  /** The one-per-request lines (`msg: "request"`). */
  requestLines(): LogLine[];
}

export function captureLog(): LogCapture {
  let raw = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      raw += chunk.toString();
      done();
    },
  });
  const lines = () => raw.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as LogLine);
  return { stream, text: () => raw, lines, requestLines: () => lines().filter((l) => l.msg === 'request') };
}
