/**
 * GET /api/v1/openapi.json and /docs: the document lints clean (Redocly, recommended rules),
 * names every registered route and nothing else, and the routes hold to it: a body it calls
 * invalid is refused, and real answers fit its schemas.
 */
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../src/openapi/operations.ts';
import { ERROR_CODES } from '../src/shared/errors.ts';
import { money, sseEvents, startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { http } from './helpers/gateway.ts';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

let h: ChatHarness;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the document is inspected freely
let doc: any;
let text: string;
const ajv = new AjvJsonSchemaValidator();
const validatorOf = (name: string) => ajv.getValidator<unknown>(doc.components.schemas[name]);
function fits(name: string, value: unknown): string | undefined {
  const result = validatorOf(name)(value);
  return result.valid ? undefined : result.errorMessage;
}

beforeAll(async () => {
  h = await startChatHarness({ METRICS_TOKEN });
  const r = await h.gw.api('/openapi.json');
  expect(r.status).toBe(200);
  expect(r.headers['content-type']).toMatch(/^application\/json/);
  text = r.text;
  doc = r.json;
});
afterAll(async () => h.close());

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 and lints clean with the recommended ruleset', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: text, absoluteRef: 'openapi.json', config });
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([]);
  });

  it('every registered route is in it, and everything in it is a registered route', () => {
    const registered = new Set(h.gw.gateway.app.registeredRoutes().map((r) => `${r.method} ${r.url}`));
    const documented = new Set(OPERATIONS.map((op) => `${op.method.toUpperCase()} ${op.route}`));
    expect([...registered].filter((r) => !documented.has(r)).sort()).toEqual([]);
    expect([...documented].filter((r) => !registered.has(r)).sort()).toEqual([]);
    for (const op of OPERATIONS) expect(doc.paths[op.path]?.[op.method]?.operationId, `${op.method} ${op.path}`).toBe(op.operationId);
  });

  it('the error object lists every code of the catalogue', () => {
    expect(doc.components.schemas.Error.properties.error.properties.code.enum).toEqual(ERROR_CODES);
    for (const code of ERROR_CODES) expect(doc.components.schemas.Error.description).toContain(`\`${code}\``);
  });

  it('every route of the spec is built: none answers 501', async () => {
    const { key } = await h.gw.account({ key: { scopes: ['all'] } });
    for (const op of OPERATIONS.filter((o) => o.route.startsWith('/api/v1/'))) {
      const url = op.route.replace(/:(\w+)/g, '00000000-0000-4000-8000-000000000000');
      const r = await http(h.gw.url + url, { method: op.method.toUpperCase() as 'GET' | 'POST', key, body: op.method === 'post' ? {} : undefined });
      expect(r.status, `${op.method} ${url}`).not.toBe(501);
    }
  });
});

describe('the routes hold to the document', () => {
  const base = { model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] };
  const candidates: unknown[] = [
    {},
    { model: 'gpt-test' },
    { ...base, messages: [] },
    { ...base, model: '' },
    { ...base, temperature: 3 },
    { ...base, top_p: -1 },
    { ...base, max_tokens: 0 },
    { ...base, n: 2 },
    { ...base, logprobs: true },
    { ...base, functions: [{ name: 'f' }] },
    { ...base, modalities: ['audio'] },
    { ...base, stop: Array.from({ length: 17 }, String) },
    { ...base, tools: [{ type: 'retrieval' }] },
    { ...base, tools: [{ type: 'function', function: { name: 'has spaces' } }] },
    { ...base, response_format: { type: 'xml' } },
    { ...base, response_format: { type: 'json_schema', json_schema: { name: 'x', schema: [] } } },
    { ...base, messages: [{ role: 'function', name: 'f', content: 'x' }] },
    { ...base, messages: [{ role: 'tool', content: 'x' }] },
    { ...base, messages: [{ role: 'user', content: [{ type: 'text' }] }] },
    { ...base, messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: null }] },
    { ...base, messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: null, tool_calls: [] }] },
    { ...base, user: 'u'.repeat(513) },
    { ...base, stream: 'yes' },
    { ...base, logit_bias: { abc: 1 } },
  ];

  it('every chat body the document calls invalid is refused with 400 invalid_request, nothing held', async () => {
    const { key, accountId } = await h.gw.account();
    const before = await money(h.gw, accountId);
    const invalid = candidates.filter((b) => fits('ChatCompletionRequest', b) !== undefined);
    expect(invalid).toHaveLength(candidates.length);
    for (const body of invalid) {
      const r = await h.gw.api('/chat/completions', { key, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error.code).toBe('invalid_request');
    }
    expect(await money(h.gw, accountId)).toEqual(before);
  });

  it('a chat body the document calls valid, with null optional fields and an unknown field, runs', async () => {
    const { key } = await h.gw.account();
    const body = { ...base, temperature: null, stop: null, tools: null, store: true, max_completion_tokens: 50 };
    expect(fits('ChatCompletionRequest', body)).toBeUndefined();
    h.openai.enqueue({ kind: 'text', text: 'Hello', usage: { input: 5, output: 1 } });
    const r = await h.gw.api('/chat/completions', { key, body });
    expect(r.status).toBe(200);
    expect(r.headers['x-service-ignored-params']).toBe('store');
  });

  it('catalog filters outside the document are refused: limit above its maximum, a category outside its enum', async () => {
    const params = doc.paths['/api/v1/models'].get.parameters as { name: string; schema: { maximum?: number; enum?: string[] } }[];
    const limit = params.find((p) => p.name === 'limit')?.schema;
    expect(limit?.maximum).toBe(500);
    expect((await h.gw.api(`/models?limit=${(limit?.maximum as number) + 1}`)).json.error).toMatchObject({ code: 'invalid_request', param: 'limit' });
    expect(params.find((p) => p.name === 'category')?.schema.enum).toContain('text');
    expect((await h.gw.api('/models?category=poetry')).json.error.code).toBe('invalid_category');
  });

  it('an admin body the document calls invalid is refused with 400 validation_failed', async () => {
    const { accountId } = await h.gw.account();
    for (const body of [{ name: 'k', requests_per_minute: 50 }, { name: '' }, { name: 'k', scopes: ['root'] }, { name: 'k', surprise: 1 }]) {
      expect(fits('NewKey', body), JSON.stringify(body)).toBeDefined();
      const r = await h.gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, body);
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('validation_failed');
    }
  });

  it('real answers fit the document: models, chat (answer and stream chunks), errors, admin views', async () => {
    const { key, accountId, keyId } = await h.gw.account();
    expect(fits('ModelList', (await h.gw.api('/models?include_unavailable=true')).json)).toBeUndefined();
    for (const slug of ['gpt-test', 'gpt-unpriced', 'gpt-gone', 'pic-1']) expect(fits('ModelDetail', (await h.gw.api(`/models/${slug}`)).json), slug).toBeUndefined();

    h.openai.enqueue({ kind: 'text', text: 'Hello', usage: { input: 5, output: 1 } });
    expect(fits('ChatCompletion', (await h.gw.api('/chat/completions', { key, body: base })).json)).toBeUndefined();
    h.openai.enqueue({ kind: 'tool_calls', calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }], usage: { input: 5, output: 3 } });
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }];
    expect(fits('ChatCompletion', (await h.gw.api('/chat/completions', { key, body: { ...base, tools } })).json)).toBeUndefined();
    h.openai.enqueue({ kind: 'text', text: 'Hello there', usage: { input: 5, output: 2 } });
    const stream = await h.gw.api('/chat/completions', { key, body: { ...base, stream: true, stream_options: { include_usage: true } } });
    const chunks = sseEvents(stream.text).filter((e) => e !== ':' && e !== '[DONE]').map((e) => JSON.parse(e) as unknown);
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) expect(fits('ChatCompletionChunk', chunk)).toBeUndefined();

    for (const r of [await h.gw.api('/models/nope'), await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test' } }), await h.gw.api('/chat/completions', { body: base })]) {
      expect(fits('Error', r.json)).toBeUndefined();
    }

    expect(fits('Account', (await h.gw.admin('GET', `/admin/v1/accounts/${accountId}`)).json)).toBeUndefined();
    for (const k of (await h.gw.admin('GET', `/admin/v1/accounts/${accountId}/keys`)).json) expect(fits('Key', k)).toBeUndefined();
    for (const e of (await h.gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger`)).json) expect(fits('LedgerEntry', e)).toBeUndefined();
    expect(fits('KeyUsage', (await h.gw.admin('GET', `/admin/v1/keys/${keyId}/usage`)).json)).toBeUndefined();
    expect(fits('IssuedKey', (await h.gw.admin('POST', `/admin/v1/keys/${keyId}/rotate`)).json)).toBeUndefined();
    expect(fits('Stats', (await h.gw.admin('GET', '/admin/v1/stats')).json)).toBeUndefined();
  });
});

describe('/docs', () => {
  it('renders Swagger UI over the document, from files served by the gateway (no CDN)', async () => {
    const page = await http(`${h.gw.url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('/docs/swagger-ui-bundle.js');
    expect(page.text).not.toMatch(/https?:\/\//);
    const init = await http(`${h.gw.url}/docs/initializer.js`);
    expect(init.text).toContain('"/api/v1/openapi.json"');
    for (const file of ['swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'swagger-ui.css']) {
      const r = await http(`${h.gw.url}/docs/${file}`);
      expect(r.status, file).toBe(200);
      expect(r.text.length).toBeGreaterThan(1000);
    }
    expect((await http(`${h.gw.url}/docs/`)).text).toBe(page.text);
  });

  it('serves nothing else from disk', async () => {
    for (const file of ['package.json', '..%2F..%2Fpackage.json', 'swagger-ui-bundle.js.map', 'index.html']) {
      const r = await http(`${h.gw.url}/docs/${file}`);
      expect(r.status, file).toBe(404);
      expect(r.json.error.code).toBe('not_found');
    }
  });
});
