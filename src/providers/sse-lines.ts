/**
 * Server-sent events from an upstream body: LF or CRLF lines, `event:` and `data:`
 * fields, comments (`: keep-alive`) skipped, one event per blank line.
 */
import type { StreamDecoder } from './adapter.ts';
import type { StreamEvent } from '../shared/chat-wire.ts';

export interface SseEvent {
  event: string | undefined;
  data: string;
}

export class SseLines {
  private buffer = '';
  private event: string | undefined;
  private data: string[] = [];

  push(chunk: string): SseEvent[] {
    this.buffer += chunk;
    const events: SseEvent[] = [];
    let start = 0;
    for (;;) {
      const newline = this.buffer.indexOf('\n', start);
      if (newline === -1) break;
      let line = this.buffer.slice(start, newline);
      start = newline + 1;
      if (line.endsWith('\r')) line = line.slice(0, -1);
      this.line(line, events);
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  /** Flushes an event left without its closing blank line. */
  end(): SseEvent[] {
    const events: SseEvent[] = [];
    if (this.buffer !== '') this.line(this.buffer.replace(/\r$/, ''), events);
    this.buffer = '';
    this.line('', events);
    return events;
  }

  private line(line: string, events: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) events.push({ event: this.event, data: this.data.join('\n') });
      this.event = undefined;
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
  }
}

/**
 * A stream decoder over server-sent events: `decode` turns one event into normalized
 * events; `complete` tells, at the end, whether the protocol's own end was seen.
 */
export function sseDecoder(decode: (event: SseEvent, out: StreamEvent[]) => void, complete: () => boolean): StreamDecoder {
  const sse = new SseLines();
  return {
    push(text) {
      const out: StreamEvent[] = [];
      for (const event of sse.push(text)) decode(event, out);
      return out;
    },
    end() {
      const out: StreamEvent[] = [];
      for (const event of sse.end()) decode(event, out);
      return { events: out, complete: complete() };
    },
  };
}
