/**
 * A raw HTTP/1.1 client for hostile requests: sends any bytes (header values with NUL,
 * bare CR, non-Latin-1 characters, broken framing) over a fresh connection with
 * `connection: close`, and reads the first answer. Every exchange ends within a bound:
 * a server that does not answer in time is reported, never waited on.
 */
import { connect } from 'node:net';

export interface RawRequest {
  method: string;
  /** Path and query, sent as they are. */
  path: string;
  /** Header lines, in order. Values are sent as Latin-1 when every character fits, else as UTF-8. */
  headers: [string, string][];
  /** Lines sent verbatim after the headers (deliberately malformed syntax). */
  rawLines?: readonly string[];
  /** undefined: no body (and no length header). */
  body?: string | Buffer;
  /** Send the body with chunked transfer coding instead of Content-Length. */
  chunked?: boolean;
}

export interface RawAnswer {
  status: number;
  /** Lower-case names; repeated headers joined with ', '. */
  headers: Record<string, string>;
  body: string;
  /** The whole exchange as received (Latin-1), for failure reports. */
  raw: string;
}

export class NoAnswer extends Error {}

function bytesOf(text: string): Buffer {
  // eslint-disable-next-line no-control-regex -- the whole point: any character
  return /^[\u0000-\u00ff]*$/.test(text) ? Buffer.from(text, 'latin1') : Buffer.from(text, 'utf8');
}

export function encodeRequest(request: RawRequest): Buffer {
  const parts: Buffer[] = [bytesOf(`${request.method} ${request.path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n`)];
  for (const [name, value] of request.headers) parts.push(bytesOf(`${name}: `), bytesOf(value), Buffer.from('\r\n'));
  for (const line of request.rawLines ?? []) parts.push(bytesOf(line), Buffer.from('\r\n'));
  const body = request.body === undefined ? undefined : typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body;
  if (body !== undefined) {
    if (request.chunked === true) {
      parts.push(Buffer.from('transfer-encoding: chunked\r\n\r\n'));
      if (body.length > 0) parts.push(Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n'));
      parts.push(Buffer.from('0\r\n\r\n'));
    } else {
      parts.push(Buffer.from(`content-length: ${body.length}\r\n\r\n`), body);
    }
  } else {
    parts.push(Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

/** Sends the request and resolves with the first final answer; rejects with NoAnswer on silence or a close without an answer. */
export function rawExchange(port: number, request: RawRequest, withinMs: number): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const head = request.method === 'HEAD';
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const received = Buffer.concat(chunks);
      const answer = parseAnswer(received, { head, closed: true });
      if (answer === undefined) reject(new NoAnswer(`the connection closed without a complete answer (received ${received.length} bytes: ${received.toString('latin1').slice(0, 500)})`));
      else resolve(answer);
    };
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      socket.destroy();
      reject(new NoAnswer(`no answer within ${withinMs} ms (received: ${Buffer.concat(chunks).toString('latin1').slice(0, 500)})`));
    }, withinMs);
    socket.on('data', (data: Buffer) => {
      chunks.push(data);
      // A complete answer ends the exchange even if the server keeps the socket open.
      if (parseAnswer(Buffer.concat(chunks), { head, closed: false }) !== undefined) finish();
    });
    // The server may close while the request is still being written (an early 413): what arrived counts.
    socket.on('error', finish);
    socket.on('close', finish);
    socket.write(encodeRequest(request));
  });
}

/**
 * The first final (non-1xx) answer in the bytes, or undefined while incomplete.
 * `head`: the request was HEAD (no body follows); `closed`: the server closed, so an
 * unframed body runs to the end.
 */
export function parseAnswer(received: Buffer, how: { head: boolean; closed: boolean }): RawAnswer | undefined {
  let rest = received;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) return undefined;
    const head = rest.subarray(0, end).toString('latin1');
    const [statusLine = '', ...lines] = head.split('\r\n');
    const status = Number(statusLine.split(' ')[1]);
    if (!Number.isInteger(status)) return undefined;
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    const body = rest.subarray(end + 4);
    if (status >= 100 && status < 200) {
      rest = body;
      continue;
    }
    const decoded = how.head || status === 204 || status === 304 ? Buffer.alloc(0) : bodyOf(body, headers, how.closed);
    if (decoded === undefined) return undefined;
    return { status, headers, body: decoded.toString('utf8'), raw: received.toString('latin1') };
  }
}

function bodyOf(body: Buffer, headers: Record<string, string>, closed: boolean): Buffer | undefined {
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const out: Buffer[] = [];
    let at = 0;
    for (;;) {
      const lineEnd = body.indexOf('\r\n', at);
      if (lineEnd === -1) return undefined;
      const size = parseInt(body.subarray(at, lineEnd).toString('latin1'), 16);
      if (!Number.isFinite(size)) return undefined;
      if (size === 0) return Buffer.concat(out);
      if (body.length < lineEnd + 2 + size + 2) return undefined;
      out.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  const length = headers['content-length'];
  if (length !== undefined) {
    const n = Number(length);
    return body.length >= n ? body.subarray(0, n) : undefined;
  }
  // Neither: the body runs to the close.
  return closed ? body : undefined;
}
