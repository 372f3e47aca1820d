/**
 * Hostile input (issue 10): no hang, no 500, no header injection, nothing billed for an
 * answer never sent. Each block is one of the reproductions, over real HTTP.
 */
import { connect } from 'node:net';
import { request as undiciRequest } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator } from '../emulators/index.ts';
import { openStore } from '../src/store/open-store.ts';
import type { Store } from '../src/store/types.ts';
import { writeCatalog } from './fixtures/catalog.ts';
import { chatCatalog, money, startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { startGateway } from './helpers/gateway.ts';

let h: ChatHarness;
beforeAll(async () => {
  h = await startChatHarness({ NONSTREAM_KEEPALIVE_MS: '60000' });
});
afterAll(async () => h.close());
beforeEach(() => {
  h.openai.reset();
});

const hi = [{ role: 'user', content: 'repro' }];
/** A request either answers within this bound or the test fails (a hang is a failure, not a timeout of the suite). */
const ANSWER_WITHIN_MS = 10_000;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are inspected freely
  json: any;
}

/** POSTs a raw JSON text; fails (rejects) when no full answer arrives within the bound. */
async function post(key: string, raw: string): Promise<Answer> {
  const response = await undiciRequest(`${h.gw.url}/api/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: raw,
    headersTimeout: ANSWER_WITHIN_MS,
    bodyTimeout: ANSWER_WITHIN_MS,
  });
  const text = await response.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.statusCode, headers: response.headers, text, json };
}

async function ledgerKinds(accountId: string): Promise<string[]> {
  const ledger = (await h.gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger`)).json as { kind: string }[];
  return ledger.map((e) => e.kind).filter((k) => k !== 'topup' && k !== 'grant').reverse();
}

/** Visible ASCII (and the ", " separator) only: nothing a header can be injected with. */
const VISIBLE_ASCII = /^[\x21-\x7e]+(, [\x21-\x7e]+)*$/;

/** JSON text nested `depth` levels: {"a":{"a":…1…}}. Built as text: JSON.stringify itself would overflow. */
function deepObject(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

describe('1. unknown field names that are not header-safe: answered, header encoded, billed only with an answer', () => {
  const names: [string, string, string][] = [
    ['Cyrillic', 'ключ', '%D0%BA%D0%BB%D1%8E%D1%87'],
    ['CJK', '鍵', '%E9%8D%B5'],
    ['emoji', 'k🔑', 'k%F0%9F%94%91'],
    ['CR/LF', 'a\r\nSet-Cookie: x=1', 'a%0D%0ASet-Cookie:%20x=1'],
    ['NUL', 'a\u0000b', 'a%00b'],
    ['U+2028', 'a\u2028b', 'a%E2%80%A8b'],
    ['DEL and TAB', 'a\u007f\tb', 'a%7F%09b'],
  ];

  for (const [label, name, encoded] of names) {
    it(`${label}: non-stream answers 200 with the name percent-encoded; hold then settle`, async () => {
      const { key, accountId } = await h.gw.account();
      const raw = JSON.stringify({ model: 'gpt-test', messages: hi, max_tokens: 16, [name]: 1 });
      const r = await post(key, raw);
      expect(r.status).toBe(200);
      expect(r.json.object).toBe('chat.completion');
      expect(r.headers['x-service-ignored-params']).toBe(encoded);
      expect(r.headers['set-cookie']).toBeUndefined();
      expect(await ledgerKinds(accountId)).toEqual(['hold', 'settle']);
      expect((await money(h.gw, accountId)).held).toBe(0);
    });
  }

  it('the issue\'s exact body (ключ) streaming: the stream arrives and ends with [DONE]', async () => {
    const { key, accountId } = await h.gw.account();
    const r = await post(key, '{"model":"gpt-test","messages":[{"role":"user","content":"repro"}],"max_tokens":16,"ключ":1,"stream":true}');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(r.headers['x-service-ignored-params']).toBe('%D0%BA%D0%BB%D1%8E%D1%87');
    expect(r.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(await ledgerKinds(accountId)).toEqual(['hold', 'settle']);
  });

  it('a 20,000-character unknown name is cut to 128 characters ending in "..."', async () => {
    const { key } = await h.gw.account();
    const r = await post(key, JSON.stringify({ model: 'gpt-test', messages: hi, max_tokens: 16, ['x'.repeat(20_000)]: 1 }));
    expect(r.status).toBe(200);
    expect(r.headers['x-service-ignored-params']).toBe('x'.repeat(125) + '...');
  });

  it('a cut never splits a percent-escape', async () => {
    const { key } = await h.gw.account();
    const r = await post(key, JSON.stringify({ model: 'gpt-test', messages: hi, ['é'.repeat(200)]: 1 }));
    const header = r.headers['x-service-ignored-params'] as string;
    expect(header.length).toBeLessThanOrEqual(128);
    expect(header).toMatch(/^(%C3%A9)+\.\.\.$/);
  });

  it('thousands of unknown names: the header stays under 4,096 bytes and its last entry is "..."', async () => {
    const { key } = await h.gw.account();
    const body: Record<string, unknown> = { model: 'gpt-test', messages: hi, max_tokens: 16 };
    for (let i = 0; i < 3000; i++) body[`field_${i}_${'ü'.repeat(i % 40)}`] = i;
    const r = await post(key, JSON.stringify(body));
    expect(r.status).toBe(200);
    const header = r.headers['x-service-ignored-params'] as string;
    expect(Buffer.byteLength(header)).toBeLessThan(4096);
    expect(header).toMatch(VISIBLE_ASCII);
    const entries = header.split(', ');
    expect(entries[0]).toBe('field_0_');
    expect(entries[entries.length - 1]).toBe('...');
  });

  it('a name with a comma or a percent sign cannot be mistaken for two names or an escape', async () => {
    const { key } = await h.gw.account();
    const r = await post(key, JSON.stringify({ model: 'gpt-test', messages: hi, 'a,b': 1, '100%': 2 }));
    expect(r.headers['x-service-ignored-params']).toBe('a%2Cb, 100%25');
  });
});

describe('2. deep nesting: 400 invalid_request naming the field, before any hold', () => {
  const DEEP = 10_000;
  /** [label, body around the deep value, param, levels of the checked field above the deep value]. */
  const cases: [string, (deep: string) => string, string, number][] = [
    [
      "a tool's parameters",
      (deep) => `{"model":"gpt-test","messages":[{"role":"user","content":"repro"}],"tools":[{"type":"function","function":{"name":"f","parameters":${deep}}}]}`,
      'tools[0].function.parameters',
      0,
    ],
    [
      'a json_schema.schema',
      (deep) => `{"model":"gpt-test","messages":[{"role":"user","content":"repro"}],"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":${deep}}}}`,
      'response_format.json_schema.schema',
      0,
    ],
    [
      'tool-call arguments given as an object',
      (deep) => `{"model":"gpt-test","messages":[{"role":"user","content":"repro"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":${deep}}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}`,
      'messages[1].tool_calls[0].function.arguments',
      0,
    ],
    [
      'an extra field on a text part',
      (deep) => `{"model":"gpt-test","messages":[{"role":"user","content":[{"type":"text","text":"repro","extra":${deep}}]}]}`,
      'messages[0].content[0]',
      1,
    ],
  ];

  for (const [label, body, param, above] of cases) {
    it(`${label} nested ${DEEP.toLocaleString('en')} levels → 400 invalid_request, param ${param}, nothing held`, async () => {
      const { key, accountId } = await h.gw.account();
      const r = await post(key, body(deepObject(DEEP)));
      expect(r.status).toBe(400);
      expect(r.json.error).toEqual({ message: expect.any(String), type: 'invalid_request_error', code: 'invalid_request', param });
      expect(await ledgerKinds(accountId)).toEqual([]);
      expect(h.openai.requests).toHaveLength(0);
    });

    it(`${label}: 64 levels are accepted, 65 refused`, async () => {
      const { key } = await h.gw.account();
      // The field's own value is level 1.
      const ok = await post(key, body(deepObject(64 - above)));
      expect(ok.status).toBe(200);
      const refused = await post(key, body(deepObject(65 - above)));
      expect(refused.status).toBe(400);
      expect(refused.json.error.param).toBe(param);
    });
  }

  it('tool-call arguments sent as JSON text are bounded the same way', async () => {
    const { key } = await h.gw.account();
    const args = JSON.stringify(deepObject(65));
    const r = await post(key, `{"model":"gpt-test","messages":[{"role":"user","content":"repro"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":${args}}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}`);
    expect(r.status).toBe(400);
    expect(r.json.error.param).toBe('messages[1].tool_calls[0].function.arguments');
  });

  it('provider_3: a tool result that is JSON nested 10,000 levels travels as text, and the run is answered', async () => {
    const { key } = await h.gw.account();
    const content = JSON.stringify(deepObject(DEEP));
    const r = await post(key, `{"model":"gemini-test","messages":[{"role":"user","content":"repro"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":${content}}]}`);
    expect(r.status).toBe(200);
    const sent = h.gemini.requests[h.gemini.requests.length - 1]?.body as { contents: { parts: { functionResponse?: { response: unknown } }[] }[] };
    const response = sent.contents.flatMap((c) => c.parts).find((p) => p.functionResponse !== undefined)?.functionResponse?.response as { result: string };
    expect(response.result.startsWith('{"a":{"a":')).toBe(true);
  });

  it('arrays count as levels too', async () => {
    const { key } = await h.gw.account();
    const deepArray = '['.repeat(DEEP) + ']'.repeat(DEEP);
    const r = await post(key, `{"model":"gpt-test","messages":[{"role":"user","content":"repro"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","enum":${deepArray}}}}]}`);
    expect(r.status).toBe(400);
    expect(r.json.error.param).toBe('tools[0].function.parameters');
  });

  it('an unknown top-level field nested 100,000 levels is dropped, not walked: 200, named in the header', async () => {
    const { key, accountId } = await h.gw.account();
    const r = await post(key, `{"model":"gpt-test","messages":[{"role":"user","content":"repro"}],"max_tokens":16,"deep":${deepObject(100_000)}}`);
    expect(r.status).toBe(200);
    expect(r.headers['x-service-ignored-params']).toBe('deep');
    expect(await ledgerKinds(accountId)).toEqual(['hold', 'settle']);
  });

  it('provider_3: $ref chains that would expand exponentially are refused before any hold', async () => {
    const { key, accountId } = await h.gw.account();
    // Each definition refers to the next one twice: 2^40 nodes once inlined.
    const defs: Record<string, unknown> = {};
    for (let i = 0; i < 40; i++) defs[`d${i}`] = { type: 'object', properties: { a: { $ref: `#/$defs/d${i + 1}` }, b: { $ref: `#/$defs/d${i + 1}` } } };
    defs.d40 = { type: 'string' };
    const parameters = { $ref: '#/$defs/d0', $defs: defs };
    const started = Date.now();
    const r = await post(key, JSON.stringify({ model: 'gemini-test', messages: hi, tools: [{ type: 'function', function: { name: 'f', parameters } }] }));
    expect(Date.now() - started).toBeLessThan(ANSWER_WITHIN_MS);
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'invalid_request', param: 'tools[0].function.parameters' });
    expect(await ledgerKinds(accountId)).toEqual([]);
  });
});

/** Writes raw bytes to the gateway and reads until the server closes (or 5 s pass). */
function rawExchange(bytes: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(h.gw.url).port), '127.0.0.1');
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

describe('3. errors raised by the HTTP parser answer in our error object', () => {
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

describe('3b. what the fuzz suite found before routing: also in our error object', () => {
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
    const r = await h.gw.api('/models/%25E0');
    expect(r.status).toBe(404);
    expect(r.json.error).toMatchObject({ code: 'model_not_found', param: 'model' });
    expect(r.json.error.message).toContain("'%E0'");
  });

  it('a path parameter of 5,000 characters is an unknown id (404), not a router error (414 in Fastify\'s shape)', async () => {
    const r = await h.gw.admin('GET', `/admin/v1/accounts/${'x'.repeat(5000)}`);
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('account_not_found');
  });
});

describe('4. the answer\'s headers are decided, and valid, before money moves', () => {
  it('a provider failure after the hold answers with the headers decided before it (job id, encoded ignored params), refunded', async () => {
    const { key, accountId } = await h.gw.account();
    h.openai.enqueue({ kind: 'error', status: 500 });
    const r = await post(key, JSON.stringify({ model: 'gpt-test', messages: hi, max_tokens: 16, 'ключ\n': 1 }));
    expect(r.status).toBe(502);
    expect(r.headers['x-service-job-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.headers['x-service-ignored-params']).toBe('%D0%BA%D0%BB%D1%8E%D1%87%0A');
    expect(await ledgerKinds(accountId)).toEqual(['hold', 'refund']);
  });

  it('nothing is settled without an answer: every hostile name, stream and non-stream, answered within the bound', async () => {
    const { key, accountId } = await h.gw.account();
    const names = ['ключ', '鍵', '🔑', '\r\n', '\u0000', '\u2028', '\u00ff', 'x'.repeat(5000)];
    let answered = 0;
    for (const stream of [false, true]) {
      for (const name of names) {
        const r = await post(key, JSON.stringify({ model: 'gpt-test', messages: hi, max_tokens: 16, stream, [name]: 1 }));
        expect(r.status).toBe(200);
        expect(r.headers['x-service-ignored-params']).toMatch(VISIBLE_ASCII);
        answered++;
      }
    }
    const kinds = await ledgerKinds(accountId);
    expect(kinds.filter((k) => k === 'settle')).toHaveLength(answered);
    expect(kinds.filter((k) => k === 'refund')).toHaveLength(0);
  });

  it('a store failure while the run ends (settle and refund both fail) still ends the answer: 500 internal_error, never a hang', async () => {
    const emulator = await startEmulator('openai', { record: false });
    const real = await openStore('sqlite::memory:');
    let broken = false;
    const store = new Proxy(real, {
      get(target, name, receiver) {
        const value: unknown = Reflect.get(target, name, receiver);
        if ((name === 'settle' || name === 'refund') && typeof value === 'function') {
          return (...args: unknown[]) => (broken ? Promise.reject(new Error('disk full')) : (value as (...a: unknown[]) => unknown).apply(target, args));
        }
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    }) as Store;
    const gw = await startGateway({ CATALOG_FILE: writeCatalog(chatCatalog()), PROVIDER_1_BASE_URL: emulator.baseUrl, PROVIDER_1_API_KEY: emulator.apiKey }, { store });
    try {
      const { key } = await gw.account();
      broken = true;
      for (const stream of [false, true]) {
        const response = await undiciRequest(`${gw.url}/api/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-test', messages: hi, stream }),
          headersTimeout: ANSWER_WITHIN_MS,
          bodyTimeout: ANSWER_WITHIN_MS,
        });
        const text = await response.body.text().catch(() => '(connection closed)');
        if (stream) {
          // The stream had started: it ends (closed or with an error event), without [DONE].
          expect(text).not.toContain('[DONE]');
        } else {
          expect(response.statusCode).toBe(500);
          expect(JSON.parse(text).error).toEqual({ message: expect.any(String), type: 'api_error', code: 'internal_error', param: null });
        }
      }
    } finally {
      broken = false;
      await gw.close();
      await real.close();
      await emulator.close();
    }
  });
});
