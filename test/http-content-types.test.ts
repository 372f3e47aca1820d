/**
 * One content-type rule for every JSON route (docs/api/overview.md, "Bodies"): JSON is read
 * when sent as application/json or with no Content-Type at all; any other type is 415
 * unsupported_media_type whose message says what to send, before anything is held.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN } from './helpers/gateway.ts';
import { money, startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { rawExchange } from './helpers/raw-http.ts';

let h: ChatHarness;
let key: string;
let accountId: string;
beforeAll(async () => {
  h = await startChatHarness();
  ({ key, accountId } = await h.gw.account({ key: { scopes: ['all'] } }));
});
afterAll(async () => h?.close());

const chatBody = JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hello' }] });
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');

/** Bodies of other types, each as a client would send it. */
const REFUSED: [type: string, body: string | Buffer][] = [
  ['image/png', PNG],
  ['multipart/form-data; boundary=xyz', `--xyz\r\ncontent-disposition: form-data; name="model"\r\n\r\ngpt-test\r\n--xyz--\r\n`],
  ['application/xml', '<request><model>gpt-test</model></request>'],
  ['text/plain', chatBody],
  ['text/plain; charset=utf-8', chatBody],
  ['application/x-www-form-urlencoded', chatBody],
];

/** JSON routes of every kind: a run route with `param` on its errors, a strict-schema run route, a media route, a fine-tuning route, the admin API. */
const ROUTES: { path: string; auth: () => string; withParam: boolean }[] = [
  { path: '/api/v1/chat/completions', auth: () => key, withParam: true },
  { path: '/api/v1/embeddings', auth: () => key, withParam: false },
  { path: '/api/v1/images/generations', auth: () => key, withParam: false },
  { path: '/api/v1/fine_tuning/jobs', auth: () => key, withParam: false },
  { path: '/admin/v1/accounts', auth: () => ADMIN_TOKEN, withParam: false },
];

const port = () => Number(new URL(h.gw.url).port);

function post(path: string, headers: [string, string][], body: string | Buffer, auth: string) {
  return rawExchange(port(), { method: 'POST', path, headers: [['authorization', `Bearer ${auth}`], ...headers], body }, 10_000);
}

describe('the content-type rule of JSON routes', () => {
  for (const route of ROUTES) {
    it(`${route.path}: image/png, multipart, XML, and even valid JSON as text/plain or a form → 415 unsupported_media_type saying what to send`, async () => {
      const before = await money(h.gw, accountId);
      for (const [type, body] of REFUSED) {
        const answer = await post(route.path, [['content-type', type]], body, route.auth());
        expect(answer.status, type).toBe(415);
        const error = (JSON.parse(answer.body) as { error: Record<string, unknown> }).error;
        expect(error, type).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_media_type' });
        expect(error.message, type).toBe(`This route takes a JSON body: send it with Content-Type: application/json (the request said '${type}').`);
        expect('param' in error, type).toBe(route.withParam);
        expect(answer.headers['x-service-job-id'], type).toBeUndefined();
      }
      expect(await money(h.gw, accountId)).toEqual(before);
    });
  }

  it('application/json (any case, with a charset) runs; so does a JSON body sent with no Content-Type at all', async () => {
    for (const headers of [[['content-type', 'application/json']], [['content-type', 'Application/JSON; charset=utf-8']], []] as [string, string][][]) {
      const answer = await post('/api/v1/chat/completions', headers, chatBody, key);
      expect(answer.status, JSON.stringify(headers)).toBe(200);
      expect(JSON.parse(answer.body)).toMatchObject({ object: 'chat.completion' });
    }
  });

  it('a Content-Type that cannot be read → the same 415 and message', async () => {
    const answer = await post('/api/v1/chat/completions', [['content-type', 'application/']], chatBody, key);
    expect(answer.status).toBe(415);
    expect(JSON.parse(answer.body).error.message).toContain('send it with Content-Type: application/json');
  });
});
