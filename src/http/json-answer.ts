/**
 * A JSON answer that may be slow: after `keepaliveMs` without an answer the 200 is sent
 * with one space, and another space every `keepaliveMs`, so proxies keep the connection
 * open; a later failure then arrives as an `{error}` body under that 200.
 */
import type { ServerResponse } from 'node:http';

export class JsonAnswer {
  private timer: NodeJS.Timeout;

  constructor(private readonly res: ServerResponse, private readonly headers: Record<string, string>, private readonly keepaliveMs: number) {
    this.timer = setTimeout(() => this.keepAlive(), keepaliveMs);
  }

  send(status: number, body: unknown): void {
    clearTimeout(this.timer);
    if (this.res.destroyed) return;
    const text = JSON.stringify(body);
    // With its length, the answer goes out in one write and the client reads no chunk framing.
    if (!this.res.headersSent) this.res.writeHead(status, { ...this.headers, 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(text)) });
    this.res.end(text);
  }

  private keepAlive(): void {
    if (!this.res.headersSent && !this.res.destroyed) this.res.writeHead(200, { ...this.headers, 'content-type': 'application/json; charset=utf-8' });
    if (!this.res.destroyed) this.res.write(' ');
    this.timer = setTimeout(() => this.keepAlive(), this.keepaliveMs);
  }
}
