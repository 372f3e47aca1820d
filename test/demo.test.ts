/**
 * `npm run demo`: serves on the emulators and prints a working key and where everything is
 * (/api/v1, /admin, /docs, /mcp); chat answers, streamed and not; the emulated providers
 * answer tools with a tool call and json_schema with JSON valid against the schema, on all
 * four chat providers, through the `openai` SDK; Ctrl+C removes what the demo made.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startDemo, type DemoProcess } from './helpers/demo.ts';
import { http } from './helpers/gateway.ts';

let demo: DemoProcess;
let stopped: number | null | undefined;
beforeAll(async () => {
  demo = await startDemo();
}, 90_000);
afterAll(async () => {
  if (stopped === undefined) await demo?.stop();
});

describe('npm run demo', () => {
  it('prints where the API, the dashboard, the API reference and the MCP endpoint are, and each answers', async () => {
    const { base, printed } = demo;
    for (const path of ['/api/v1', '/admin', '/docs', '/mcp']) expect(printed.split(/\s+/)).toContain(`${base}${path}`);
    const page = await http(`${base}/admin`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    const script = /<script type="module"[^>]*src="([^"]+)"/.exec(page.text)?.[1] as string;
    expect((await http(`${base}${script}`)).headers['content-type']).toContain('text/javascript');
    expect(await http(`${base}/admin/v1/accounts?limit=1`, { headers: { authorization: `Bearer ${demo.adminToken}` } })).toMatchObject({ status: 200 });
    const docs = await http(`${base}/docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers['content-type']).toContain('text/html');
    const mcp = new Client({ name: 'demo-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    try {
      expect((await mcp.listTools()).tools.map((t) => t.name)).toContain('estimate_cost');
    } finally {
      await mcp.close();
    }
  });

  it("prints a portal sign-in link that signs the account's owner in, once; buying credits goes to the demo's Stripe emulator", async () => {
    const { base, printed } = demo;
    expect((await http(`${base}/portal`)).status).toBe(200);
    const token = /Portal sign-in link:\s+http:\/\/\S+\/portal\/#\/link\/([A-Za-z0-9_-]+)/.exec(printed)?.[1] as string;
    const signedIn = await http(`${base}/portal/api/sign-in/link`, { body: { token } });
    expect(signedIn.status).toBe(200);
    expect(signedIn.json).toMatchObject({ email: 'demo@example.com', accounts: [{ name: 'Demo account', role: 'owner' }] });
    const cookie = String(signedIn.headers['set-cookie']).split(';')[0] as string;
    const checkout = await http(`${base}/portal/api/accounts/${signedIn.json.accounts[0].id}/checkout`, {
      body: { amount_usd: 10 }, headers: { cookie, 'x-csrf-token': signedIn.json.csrf_token },
    });
    expect(checkout.status).toBe(201);
    expect(checkout.json.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/pay\/cs_test_/);
  });

  it('prints a key that answers a chat completion, streaming and not, embeddings, an image and a video, from the emulators', async () => {
    const { base, key, printed } = demo;
    expect(printed).toContain('curl');
    const models = await http(`${base}/api/v1/models?limit=3`, { key });
    expect(models.status).toBe(200);
    const answer = await http(`${base}/api/v1/chat/completions`, { key, body: { model: 'gpt-6-luna', messages: [{ role: 'user', content: 'Hello!' }] } });
    expect(answer.status).toBe(200);
    expect(answer.json.choices[0].message.content).toContain('Hello');
    const streamed = await http(`${base}/api/v1/chat/completions`, { key, body: { model: 'deepseek-flash', stream: true, messages: [{ role: 'user', content: 'Stream, please' }] } });
    expect(streamed.status).toBe(200);
    expect(streamed.text).toContain('"chat.completion.chunk"');
    expect(streamed.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const embedded = await http(`${base}/api/v1/embeddings`, { key, body: { input: ['Hello!', 'Bonjour!'], dimensions: 4 } });
    expect(embedded.status).toBe(200);
    expect(embedded.json.data.map((d: { embedding: number[] }) => d.embedding.length)).toEqual([4, 4]);
    const job = await http(`${base}/api/v1/jobs/${String(embedded.headers['x-job-id'])}`, { key });
    expect(job.json).toMatchObject({ kind: 'embeddings', status: 'succeeded' });
    // An image and a video on the predictions emulator, with the calls the demo prints.
    expect(printed).toContain('/api/v1/images/generations');
    expect(printed).toContain('/api/v1/videos/generations');
    const image = await http(`${base}/api/v1/images/generations`, { key, body: { model: 'flux-2-pro', prompt: 'A lighthouse at dawn, watercolour', n: 2 } });
    expect(image.status).toBe(200);
    expect(image.json.data).toHaveLength(2);
    expect((await http(image.json.data[0].url as string)).headers['content-type']).toBe('image/png');
    const video = await http(`${base}/api/v1/videos/generations`, { key, body: { model: 'kling-v3-standard', prompt: 'Waves rolling onto a beach at night', duration: 5 } });
    expect(video.status).toBe(202);
    expect(video.headers.location).toBe(`/api/v1/jobs/${video.json.job_id}`);
  });

  it("the README's fine-tuning example runs as written: 200, a job that trains and succeeds", async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const body = /fine_tuning\/jobs[^\n]*\n\s*-d '([^']+)'/.exec(readme)?.[1] as string;
    expect(JSON.parse(body).training_file).toMatch(/^data:application\/jsonl;base64,/);
    const created = await http(`${demo.base}/api/v1/fine_tuning/jobs`, { key: demo.key, rawBody: body });
    expect(created.status, created.text).toBe(200);
    expect(created.json).toMatchObject({ object: 'fine_tuning.job', model: 'gpt-4o-mini' });
    let job = created.json;
    for (let i = 0; i < 100 && job.status !== 'succeeded' && job.status !== 'failed'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      job = (await http(`${demo.base}/api/v1/fine_tuning/jobs/${created.json.id}`, { key: demo.key })).json;
    }
    expect(job.status).toBe('succeeded');
  });

  describe('tools and structured output through the openai SDK, on every chat provider', () => {
    const weather = {
      type: 'object',
      properties: {
        city: { type: 'string', minLength: 2 },
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        days: { type: 'integer', minimum: 1, maximum: 7 },
      },
      required: ['city', 'unit', 'days'],
      additionalProperties: false,
    };
    const tools: ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', description: 'The forecast for a city', parameters: weather } },
      { type: 'function', function: { name: 'get_time', description: 'The time in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } } },
    ];
    const report = {
      type: 'object',
      properties: {
        city: { type: 'string' },
        temperature_c: { type: 'number', minimum: -50, maximum: 60 },
        conditions: { type: 'string', enum: ['sunny', 'cloudy', 'rain'] },
        hourly: {
          type: 'array',
          minItems: 2,
          items: { type: 'object', properties: { hour: { type: 'integer', minimum: 0, maximum: 23 }, celsius: { type: 'number' } }, required: ['hour', 'celsius'], additionalProperties: false },
        },
        alert: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      },
      required: ['city', 'temperature_c', 'conditions', 'hourly', 'alert'],
      additionalProperties: false,
    };
    const ask = [{ role: 'user' as const, content: 'What is the weather in Paris this week?' }];
    const client = () => new OpenAI({ apiKey: demo.key, baseURL: `${demo.base}/api/v1` });
    const valid = (schema: object, value: unknown) => z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]).parse(value);

    for (const model of ['gpt-6-luna', 'claude-sonnet-5-5', 'gemini-4-argon', 'deepseek-flash']) {
      it(`${model}: tool_choice "required" and a named tool → a tool call whose arguments fit the tool's schema`, async () => {
        const required = await client().chat.completions.create({ model, messages: ask, tools, tool_choice: 'required' });
        const call = required.choices[0]?.message.tool_calls?.[0];
        expect(call?.type).toBe('function');
        if (call?.type !== 'function') return;
        expect(call.function.name).toBe('get_weather');
        expect(valid(weather, JSON.parse(call.function.arguments))).toBeDefined();
        const named = await client().chat.completions.create({ model, messages: ask, tools, tool_choice: { type: 'function', function: { name: 'get_time' } } });
        const namedCall = named.choices[0]?.message.tool_calls?.[0];
        expect(namedCall?.type === 'function' ? namedCall.function.name : undefined).toBe('get_time');
      });

      it(`${model}: tools offered ("auto") → a tool call; its result sent back → an answer in words`, async () => {
        const first = await client().chat.completions.create({ model, messages: ask, tools });
        const message = first.choices[0]?.message;
        expect(first.choices[0]?.finish_reason).toBe('tool_calls');
        const call = message?.tool_calls?.[0];
        if (message === undefined || call === undefined || call.type !== 'function') throw new Error('no tool call');
        const second = await client().chat.completions.create({
          model,
          tools,
          messages: [...ask, { role: 'assistant', content: message.content, tool_calls: message.tool_calls }, { role: 'tool', tool_call_id: call.id, content: '{"forecast":"sunny, 21 °C"}' }],
        });
        expect(second.choices[0]?.finish_reason).toBe('stop');
        expect(second.choices[0]?.message.tool_calls ?? []).toEqual([]);
        expect(second.choices[0]?.message.content).toBeTruthy();
      });

      it(`${model}: response_format json_schema → JSON valid against the schema, streamed and not`, async () => {
        const response_format = { type: 'json_schema' as const, json_schema: { name: 'weather_report', strict: true, schema: report } };
        const answer = await client().chat.completions.create({ model, messages: ask, response_format });
        expect(valid(report, JSON.parse(answer.choices[0]?.message.content ?? ''))).toBeDefined();
        const stream = await client().chat.completions.create({ model, messages: ask, response_format, stream: true });
        let text = '';
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
        expect(valid(report, JSON.parse(text))).toBeDefined();
      });
    }
  });

  // Last before Ctrl+C: a throttled provider's key may rest a while afterwards.
  it("the demo's emulators take scripts: provider_1 scripted to throttle → the gateway answers 429 upstream_rate_limited, refunded", async () => {
    const emulator = /provider_1 → openai emulator at (http:\/\/[^/\s]+)/.exec(demo.printed)?.[1] as string;
    // Every request, so retries (where the gateway makes them) meet it too; set back afterwards.
    expect((await http(`${emulator}/__emulator/default`, { body: { scenario: { kind: 'error', status: 429 } } })).status).toBe(200);
    try {
      const answer = await http(`${demo.base}/api/v1/chat/completions`, { key: demo.key, body: { model: 'gpt-6-luna', messages: [{ role: 'user', content: 'Hello!' }] } });
      expect(answer.status).toBe(429);
      expect(answer.json.error.code).toBe('upstream_rate_limited');
    } finally {
      await http(`${emulator}/__emulator/default`, { body: { scenario: null } });
    }
  });

  it('Ctrl+C: exits 0 and removes what it made (database files, dashboard build)', async () => {
    const pid = demo.child.pid as number;
    stopped = await demo.stop();
    expect(stopped).toBe(0);
    expect(readdirSync(tmpdir()).filter((name) => name.startsWith(`model-gateway-demo-${pid}`))).toEqual([]);
  });
});
