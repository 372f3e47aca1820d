/**
 * Errors raised before any route runs (issue 10): Node's HTTP parser, the router, an
 * unmet Expect. They answer in our error object (`param: null`: the route is not known),
 * over a raw socket, since no well-behaved client can send these bytes.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.ts';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => gw.close());

const ANSWER_WITHIN_MS = 10_000;

/** Writes raw bytes to the gateway and reads until the server closes (or 5 s pass). */
function rawExchange(bytes: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(gw.url).port), '127.0.0.1');
    let out = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${ANSWER_WITHIN_MS} ms; got: ${out}`));
    }, ANSWER_WITHIN_MS);
    socket.on('data', (d) => (out += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
    socket.write(bytes);
  });
}

function parseRaw(raw: string): { status: number; headers: Record<string, string>; body: unknown } {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) };
}

describe('errors raised by the HTTP parser answer in our error object (issue 10, reproduction 3)', () => {
  const start = 'POST /api/v1/chat/completions HTTP/1.1\r\nHost: x\r\n';
  const cases: [string, string | Buffer, number, string][] = [
    ['a header with a NUL', Buffer.from(`${start}X-Bad: a\u0000b\r\nContent-Length: 0\r\n\r\n`, 'latin1'), 400, 'invalid_request'],
    ['a header with a bare CR', `${start}X-Bad: a\rb\r\nContent-Length: 0\r\n\r\n`, 400, 'invalid_request'],
    ['obsolete line folding', `${start}X-Folded: a\r\n  b\r\nContent-Length: 0\r\n\r\n`, 400, 'invalid_request'],
    ['a header section over 16 KiB', `${start}X-Big: ${'a'.repeat(20_000)}\r\nContent-Length: 0\r\n\r\n`, 431, 'request_header_fields_too_large'],
    ['a broken request line', 'GET /\u0001 HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'invalid_request'],
    ['Content-Length together with chunked Transfer-Encoding', `${start}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, 400, 'invalid_request'],
  ];
  for (const [label, bytes, status, code] of cases) {
    it(`${label} → ${status} ${code}`, async () => {
      const answer = parseRaw(await rawExchange(bytes));
      expect(answer.status).toBe(status);
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(answer.headers.connection).toBe('close');
      expect(answer.body).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', code, param: null } });
    });
  }
});

describe('what the fuzz suite found before routing: also in our error object', () => {
  it('a malformed percent-escape in the URL → 400 invalid_request (not Fastify\'s FST_ERR_BAD_URL shape)', async () => {
    const answer = parseRaw(await rawExchange('GET /api/v1/models/%E0%A4%A HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', code: 'invalid_request', param: null } });
  });

  it('an Expect other than 100-continue → 417 expectation_failed (Node answered an empty 417)', async () => {
    const answer = parseRaw(await rawExchange('GET /api/v1/models HTTP/1.1\r\nHost: x\r\nExpect: gzip\r\nConnection: close\r\n\r\n'));
    expect(answer.status).toBe(417);
    expect(answer.body).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', code: 'expectation_failed', param: null } });
  });

  it('a model slug with an encoded percent sign is looked up as sent (404 model_not_found, was 500 from decoding twice)', async () => {
    const r = await gw.api('/models/%25E0');
    expect(r.status).toBe(404);
    expect(r.json.error).toMatchObject({ code: 'model_not_found', param: 'model' });
    expect(r.json.error.message).toContain("'%E0'");
  });

  it('a path parameter of 5,000 characters is an unknown id (404), not a router error (414 in Fastify\'s shape)', async () => {
    const r = await gw.admin('GET', `/admin/v1/accounts/${'x'.repeat(5000)}`);
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('account_not_found');
  });
});
