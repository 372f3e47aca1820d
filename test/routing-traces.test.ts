/**
 * Traces (DECISIONS.md "Routing"; OpenTelemetry GenAI semantic conventions): with
 * OTEL_EXPORTER_OTLP_ENDPOINT set, every run is a span and every provider call a child span
 * (provider, deployment, key index — never the key —, status, retry reason, tokens), received
 * here over OTLP/HTTP by a small receiver in the test.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../emulators/index.ts';
import type { Emulator } from '../emulators/types.ts';
import { writeCatalog } from './fixtures/catalog.ts';
import { chatCatalog } from './helpers/chat.ts';
import { startGateway, type TestGateway } from './helpers/gateway.ts';

interface OtlpValue { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number }
interface OtlpSpan { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes: { key: string; value: OtlpValue }[]; status?: { code?: number } }
interface OtlpExport { resourceSpans: { resource: { attributes: { key: string; value: OtlpValue }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[] }

const SERVER = 2;
const CLIENT = 3;

let receiver: Server;
const bodies: string[] = [];
const paths: string[] = [];
let openai: Emulator;
let gw: TestGateway;

function attributes(span: OtlpSpan): Record<string, string | number | boolean | undefined> {
  return Object.fromEntries(span.attributes.map(({ key, value }) => [key, value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.boolValue ?? value.doubleValue]));
}

function spans(): OtlpSpan[] {
  return bodies.flatMap((body) => (JSON.parse(body) as OtlpExport).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      bodies.push(body);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  openai = await startEmulator('openai');
  gw = await startGateway({
    CATALOG_FILE: writeCatalog(chatCatalog()),
    PROVIDER_1_BASE_URL: openai.baseUrl,
    PROVIDER_1_API_KEY: openai.apiKey,
    UPSTREAM_RETRIES: '2',
    UPSTREAM_BACKOFF_MS: '1',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
  });
});
afterAll(async () => {
  await openai.close();
  await new Promise((resolve) => receiver.close(resolve));
});

describe('spans over OTLP/HTTP', () => {
  it('a run with a failed attempt and an answer: one server span, two client spans under it, GenAI attribute names, no key', async () => {
    const { key } = await gw.account();
    openai.failFirst(1, 503);
    openai.enqueue({ kind: 'text', text: 'Hi', usage: { input: 12, output: 3 } });
    const r = await gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'Hello' }] } });
    expect(r.status).toBe(200);
    const jobId = r.headers['x-service-job-id'] as string;
    // Closing the gateway sends what the batch processor holds: bounded by work, not a wait.
    await gw.close();

    expect(paths[0]).toMatch(/^POST \/v1\/traces application\/json/);
    const all = spans();
    const run = all.find((s) => attributes(s)['gateway.job_id'] === jobId) as OtlpSpan;
    expect(run).toBeDefined();
    expect(run.name).toBe('chat gpt-test');
    expect(run.kind).toBe(SERVER);
    expect(attributes(run)).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-test',
      'gen_ai.response.model': 'gpt-test',
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 3,
    });
    const attempts = all.filter((s) => s.parentSpanId === run.spanId);
    expect(attempts).toHaveLength(2);
    for (const attempt of attempts) {
      expect(attempt.traceId).toBe(run.traceId);
      expect(attempt.kind).toBe(CLIENT);
      expect(attempt.name).toBe('chat gpt-test-2026-01-01');
      expect(attributes(attempt)).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-test-2026-01-01',
        'server.address': '127.0.0.1',
        'gateway.provider': 'provider_1',
        'gateway.key_index': 0,
      });
    }
    const [failed, answered] = [...attempts].sort((x, y) => Number(attributes(x)['gateway.attempt']) - Number(attributes(y)['gateway.attempt']));
    expect(attributes(failed as OtlpSpan)).toMatchObject({ 'gateway.attempt': 1, 'http.response.status_code': 503, 'error.type': 'upstream_error', 'gateway.retry_reason': 'failed' });
    expect(failed?.status?.code).toBe(2);
    expect(attributes(answered as OtlpSpan)).toMatchObject({ 'gateway.attempt': 2, 'http.response.status_code': 200, 'gen_ai.usage.input_tokens': 12, 'gen_ai.usage.output_tokens': 3 });
    expect(attributes(answered as OtlpSpan)).not.toHaveProperty('error.type');
    const resource = (JSON.parse(bodies[0] as string) as OtlpExport).resourceSpans[0]?.resource.attributes.find((a) => a.key === 'service.name');
    expect(resource?.value.stringValue).toBe('model-gateway');
    expect(bodies.join('')).not.toContain(openai.apiKey);
  });
});
