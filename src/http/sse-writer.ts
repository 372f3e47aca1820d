/**
 * A server-sent-event answer: the 200 with event-stream headers, writes coalesced so
 * that what one upstream read produced leaves in one socket write, `: keep-alive`
 * comments while the run is quiet, and an error as the final event once started.
 */
import type { ServerResponse } from 'node:http';

export class SseWriter {
  private out = '';
  private lastWrite = Date.now();
  private opened = false;
  private readonly keepalive: NodeJS.Timeout;

  constructor(private readonly res: ServerResponse, private readonly headers: Record<string, string>, keepaliveMs: number) {
    this.keepalive = setInterval(() => {
      if (this.opened && Date.now() - this.lastWrite >= keepaliveMs) {
        this.write(': keep-alive\n\n');
        this.flush();
      }
    }, Math.max(10, Math.floor(keepaliveMs / 2)));
  }

  /** True once the 200 and the first bytes were sent. */
  get started(): boolean {
    return this.opened;
  }

  /** Sends the 200 with the event-stream headers. */
  open(): void {
    this.res.writeHead(200, { ...this.headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    this.opened = true;
  }

  /** Buffers an event; `flush` sends what was buffered in one write. */
  write(text: string): void {
    this.out += text;
  }

  flush(): void {
    if (this.out === '') return;
    this.lastWrite = Date.now();
    if (!this.res.destroyed) this.res.write(this.out);
    this.out = '';
  }

  /** Ends the stream with what is buffered plus `text`. */
  end(text = ''): void {
    this.stop();
    if (!this.res.destroyed) this.res.end(this.out + text);
    this.out = '';
  }

  /** An error: a normal HTTP error before the first byte, one `data: {error}` event (no [DONE]) after it. */
  fail(status: number, body: object): void {
    if (this.opened) {
      this.end(`data: ${JSON.stringify(body)}\n\n`);
      return;
    }
    this.stop();
    if (this.res.destroyed) return;
    this.res.writeHead(status, { ...this.headers, 'content-type': 'application/json; charset=utf-8' });
    this.res.end(JSON.stringify(body));
  }

  /** Calls `listener` when the client goes away before the answer was complete; returns the unsubscribe. */
  onClientClose(listener: () => void): () => void {
    const onClose = () => {
      if (!this.res.writableFinished) listener();
    };
    this.res.on('close', onClose);
    return () => this.res.off('close', onClose);
  }

  stop(): void {
    clearInterval(this.keepalive);
  }
}
