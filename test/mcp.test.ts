/** POST /mcp through the official MCP client (Streamable HTTP): every tool listed, described and called, answers matching the REST routes. */
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatEntry, imageEntry, writeCatalog } from './fixtures/catalog.ts';
import { chatCatalog } from './helpers/chat.ts';
import { startGateway, type TestGateway } from './helpers/gateway.ts';

let gw: TestGateway;
let client: Client;

async function connect(key?: string): Promise<Client> {
  const c = new Client({ name: 'gateway-test', version: '1.0.0' });
  const headers: Record<string, string> = key === undefined ? {} : { authorization: `Bearer ${key}` };
  await c.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers } }));
  return c;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tool answers are inspected freely
async function call(name: string, args: Record<string, unknown>, c: Client = client): Promise<any> {
  return c.callTool({ name, arguments: args });
}

beforeAll(async () => {
  gw = await startGateway({
    CATALOG_FILE: writeCatalog([
      ...chatCatalog(),
      imageEntry('pic-featured', { is_featured: true }),
      chatEntry('cheap-chat', 'provider_7', { pricing: { unit: 'per_token', input_usd_per_1m: '0.27', output_usd_per_1m: '1.1' } }),
      imageEntry('clip-5s', { category: 'video', pricing: { unit: 'per_second_of_output', usd: '0.4625', basis: 'a default 5-second clip' }, configuration: { input_schema: { type: 'object' }, default_params: { duration: 5 } } }),
      imageEntry('voice', { category: 'speech_tts', pricing: { unit: 'per_1000_characters', usd: '0.1', basis: '1,000 characters' } }),
      imageEntry('robot', { category: 'vla_robotics', pricing: { unit: 'per_gpu_second', usd_per_second: '0.000975', estimated_seconds: 8, hold_seconds: 60, basis: 'one episode' } }),
    ]),
    PROVIDER_1_API_KEY: 'sk-test',
    PROVIDER_7_API_KEY: 'sk-test',
  });
  // A key lifts this file's calls above the 30 per minute an anonymous address gets (mcp-limits.test.ts tests those).
  client = await connect((await gw.account({ key: { scopes: ['read'] } })).key);
});
afterAll(async () => {
  await client.close();
  await gw.close();
});

describe('tools/list', () => {
  it('lists the five read-only tools, each with a description, an input schema and an output schema', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['estimate_cost', 'get_doc', 'get_model', 'list_models', 'search_docs']);
    for (const tool of tools) {
      expect(tool.description, tool.name).toBeTruthy();
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
    }
    const list = tools.find((t) => t.name === 'list_models');
    expect(Object.keys(list?.inputSchema.properties ?? {}).sort()).toEqual(['category', 'featured', 'include_unavailable', 'limit', 'offset', 'provider']);
  });

  it('the server introduces itself without a session', async () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'model-gateway' });
    expect(client.getInstructions()).toContain('1 credit = USD 0.01');
  });
});

describe('catalog tools answer what the REST routes answer', () => {
  const queries: [Record<string, unknown>, string][] = [
    [{}, ''],
    [{ category: 'text' }, '?category=text'],
    [{ provider: 'provider_7', include_unavailable: true }, '?provider=provider_7&include_unavailable=true'],
    [{ featured: true }, '?featured=true'],
    [{ include_unavailable: true, limit: 3, offset: 2 }, '?include_unavailable=true&limit=3&offset=2'],
    [{ limit: 0 }, '?limit=0'],
  ];
  it.each(queries)('list_models %j = GET /api/v1/models%s', async (args, query) => {
    const tool = await call('list_models', args);
    const rest = await gw.api(`/models${query}`);
    expect(rest.status).toBe(200);
    expect(tool.isError).toBeFalsy();
    expect(tool.structuredContent).toEqual(rest.json);
    expect(JSON.parse(tool.content[0].text)).toEqual(rest.json);
  });

  it('get_model = GET /api/v1/models/{slug}, also for an unavailable model and a provider model id', async () => {
    for (const slug of ['gpt-test', 'gpt-unpriced', 'gpt-test-2026-01-01', 'pic-featured']) {
      const tool = await call('get_model', { slug });
      expect(tool.structuredContent, slug).toEqual((await gw.api(`/models/${slug}`)).json);
    }
  });

  it('an unknown slug is a tool error carrying the same error object as the route', async () => {
    const tool = await call('get_model', { slug: 'no-such-model' });
    expect(tool.isError).toBe(true);
    expect(JSON.parse(tool.content[0].text)).toEqual((await gw.api('/models/no-such-model')).json);
  });

  it('a filter outside its enum is a tool error naming the argument', async () => {
    const tool = await call('list_models', { category: 'poetry' });
    expect(tool.isError).toBe(true);
    expect(tool.content[0].text).toMatch(/category/);
  });
});

describe('estimate_cost prices as billing does', () => {
  it('token models: input and output tokens at the catalog prices, rounded up once to a micro-credit', async () => {
    // 1.25 USD/1M in, 10 USD/1M out: 1,000 in + 500 out = 0.00125 + 0.005 USD = 0.625 credits
    const tool = await call('estimate_cost', { model: 'gpt-test', usage: { input_tokens: 1000, output_tokens: 500, images: 3 } });
    expect(tool.structuredContent).toMatchObject({ model: 'gpt-test', unit: 'per_token', usage: { input_tokens: 1000, output_tokens: 500 }, ignored: ['images'], credits: 0.625, usd: 0.00625, available: true });
    // 0.27 USD/1M × 1 token = 0.000027 credits = 27 micro-credits exactly; 1.1 USD/1M × 1 = 110 micro-credits
    expect((await call('estimate_cost', { model: 'cheap-chat', usage: { input_tokens: 1, output_tokens: 1 } })).structuredContent.credits).toBe(0.000137);
    // A provider model id resolves to its slug.
    expect((await call('estimate_cost', { model: 'gpt-test-2026-01-01', usage: { input_tokens: 10 } })).structuredContent.model).toBe('gpt-test');
  });

  it('per-call units: images, seconds of output, characters, GPU seconds (capped at the hold)', async () => {
    const images = (await call('estimate_cost', { model: 'pic-featured', usage: { images: 3 } })).structuredContent;
    expect(images).toMatchObject({ unit: 'per_image', usage: { images: 3 }, credits: 12, usd: 0.12 });
    expect((await call('estimate_cost', { model: 'pic-featured' })).structuredContent).toMatchObject({ usage: { images: 1 }, credits: 4 });
    // 0.4625 USD per default 5 s → 0.0925 USD/s; 8 s = 0.74 USD
    expect((await call('estimate_cost', { model: 'clip-5s', usage: { seconds: 8 } })).structuredContent).toMatchObject({ unit: 'per_second_of_output', credits: 74, usd: 0.74 });
    // 0.1 USD per 1,000 characters; 2,500 characters = 0.25 USD
    expect((await call('estimate_cost', { model: 'voice', usage: { characters: 2500 } })).structuredContent).toMatchObject({ unit: 'per_1000_characters', credits: 25 });
    // 0.000975 USD/s × 20 s = 0.0195 USD; 600 s is billed as the 60 s limit = 0.0585 USD
    expect((await call('estimate_cost', { model: 'robot', usage: { gpu_seconds: 20 } })).structuredContent).toMatchObject({ unit: 'per_gpu_second', credits: 1.95 });
    expect((await call('estimate_cost', { model: 'robot', usage: { gpu_seconds: 600 } })).structuredContent).toMatchObject({ credits: 5.85 });
  });

  it('an unpriced model is model_unavailable, an unknown one model_not_found', async () => {
    const unpriced = await call('estimate_cost', { model: 'gpt-unpriced', usage: { input_tokens: 10 } });
    expect(unpriced.isError).toBe(true);
    expect(JSON.parse(unpriced.content[0].text).error.code).toBe('model_unavailable');
    expect(JSON.parse((await call('estimate_cost', { model: 'nope' })).content[0].text).error.code).toBe('model_not_found');
  });
});

describe('docs tools', () => {
  it('search_docs finds the sections that answer a question, and get_doc returns them', async () => {
    const found = (await call('search_docs', { query: 'MCP 429 limit per account', limit: 3 })).structuredContent.results;
    expect(found.length).toBeGreaterThan(0);
    expect(found.map((r: { page: string }) => r.page)).toContain('limits');
    const hit = found[0];
    const section = (await call('get_doc', { page: hit.page, section: hit.anchor })).structuredContent;
    expect(section.page).toBe(hit.page);
    expect(section.markdown.toLowerCase()).toContain('429');
  });

  it('get_doc returns a whole page as shipped in docs/api', async () => {
    const page = (await call('get_doc', { page: 'errors' })).structuredContent;
    expect(page.markdown).toBe(readFileSync(new URL('../docs/api/errors.md', import.meta.url), 'utf8'));
    expect(page.title).toBe('Errors');
    expect(page.sections.map((s: { anchor: string }) => s.anchor)).toContain('every-code');
  });

  it('an unknown section is a tool error listing the sections', async () => {
    const tool = await call('get_doc', { page: 'errors', section: 'nothing-like-this' });
    expect(tool.isError).toBe(true);
    expect(tool.content[0].text).toContain('every-code');
  });
});

describe('protocol errors', () => {
  it('an unknown tool is a tool error; an unknown method a JSON-RPC -32601', async () => {
    const tool = await call('delete_everything', {});
    expect(tool.isError).toBe(true);
    const { key } = await gw.account();
    const r = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${key}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'resources/write', params: {} }),
    });
    expect(await r.json()).toMatchObject({ jsonrpc: '2.0', id: 9, error: { code: -32601 } });
  });
});

describe('with and without a key', () => {
  it('works without a key', async () => {
    const anonymous = await connect();
    try {
      expect((await anonymous.listTools()).tools).toHaveLength(5);
      expect((await call('get_model', { slug: 'gpt-test' }, anonymous)).structuredContent).toEqual((await gw.api('/models/gpt-test')).json);
    } finally {
      await anonymous.close();
    }
  });

  it('a key of any scope works, and its answers are the same', async () => {
    const { key } = await gw.account({ key: { scopes: ['embeddings'] } });
    const keyed = await connect(key);
    try {
      expect((await call('list_models', { limit: 2 }, keyed)).structuredContent).toEqual((await gw.api('/models?limit=2')).json);
    } finally {
      await keyed.close();
    }
  });
});
