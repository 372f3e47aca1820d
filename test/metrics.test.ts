/** GET /metrics: its token, the counters and histograms moving as requests run, and labels that never carry a key, an account or an address. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, http, startGateway, type TestGateway } from './helpers/gateway.ts';
import { startChatHarness, type ChatHarness } from './helpers/chat.ts';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const ALLOWED_LABELS = new Set(['route', 'status', 'code', 'provider', 'model', 'kind', 'le']);

/** The value of one sample, or 0 when it is not there. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return 0;
}

describe('access to /metrics', () => {
  it('answers 404 when neither METRICS_TOKEN nor ADMIN_TOKEN is set', async () => {
    const gw = await startGateway({ ADMIN_TOKEN: '' });
    try {
      const r = await http(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(r.status).toBe(404);
      expect(r.json.error.code).toBe('not_found');
    } finally {
      await gw.close();
    }
  });

  it('needs Bearer METRICS_TOKEN or ADMIN_TOKEN; anything else is 401 invalid_metrics_token', async () => {
    const gw = await startGateway({ METRICS_TOKEN });
    try {
      for (const authorization of [undefined, 'Bearer wrong-token-0123456789', `Basic ${METRICS_TOKEN}`, METRICS_TOKEN]) {
        const r = await http(`${gw.url}/metrics`, { headers: authorization === undefined ? {} : { authorization } });
        expect(r.status, authorization).toBe(401);
        expect(r.json.error).toEqual({ code: 'invalid_metrics_token', type: 'authentication_error', message: 'Invalid metrics token' });
      }
      for (const token of [METRICS_TOKEN, ADMIN_TOKEN]) {
        const r = await http(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
        expect(r.status).toBe(200);
        expect(r.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
        expect(r.text).toContain('# TYPE gateway_http_requests_total counter');
      }
    } finally {
      await gw.close();
    }
  });

  it('works with ADMIN_TOKEN alone', async () => {
    const gw = await startGateway();
    try {
      expect((await http(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status).toBe(200);
    } finally {
      await gw.close();
    }
  });
});

describe('what /metrics counts', () => {
  let h: ChatHarness;
  const scrape = async () => (await http(`${h.gw.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text;
  beforeAll(async () => {
    h = await startChatHarness({ METRICS_TOKEN });
  });
  afterAll(async () => h.close());

  it('requests by route pattern, status and code, with their durations', async () => {
    const before = await scrape();
    await h.gw.api('/models?limit=1');
    await h.gw.api('/models/gpt-test');
    await h.gw.api('/models/no-such-model');
    await h.gw.api('/models?category=nope');
    const after = await scrape();
    const delta = (labels: Record<string, string>) => sample(after, 'gateway_http_requests_total', labels) - sample(before, 'gateway_http_requests_total', labels);
    expect(delta({ route: 'GET /api/v1/models', status: '200', code: 'none' })).toBe(1);
    expect(delta({ route: 'GET /api/v1/models/*', status: '200', code: 'none' })).toBe(1);
    expect(delta({ route: 'GET /api/v1/models/*', status: '404', code: 'model_not_found' })).toBe(1);
    expect(delta({ route: 'GET /api/v1/models', status: '400', code: 'invalid_category' })).toBe(1);
    const count = (text: string) => sample(text, 'gateway_http_request_duration_seconds_count', { route: 'GET /api/v1/models/*' });
    expect(count(after) - count(before)).toBe(2);
    // No provider call: the whole time is the gateway's own.
    const added = (text: string) => sample(text, 'gateway_added_latency_seconds_count', { route: 'GET /api/v1/models' });
    expect(added(after) - added(before)).toBe(2);
    expect(sample(after, 'gateway_http_request_duration_seconds_sum', { route: 'GET /api/v1/models' })).toBeGreaterThan(0);
  });

  it('a paid chat request is counted under its route; an unknown path under `unmatched`, never its URL', async () => {
    const { key } = await h.gw.account();
    h.openai.enqueue({ kind: 'text', text: 'Hi', usage: { input: 5, output: 2 } });
    const before = await scrape();
    expect((await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] } })).status).toBe(200);
    expect((await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: [] } })).status).toBe(400);
    expect((await h.gw.api('/secret-path-3f9a/anything')).status).toBe(404);
    const after = await scrape();
    const delta = (labels: Record<string, string>) => sample(after, 'gateway_http_requests_total', labels) - sample(before, 'gateway_http_requests_total', labels);
    expect(delta({ route: 'POST /api/v1/chat/completions', status: '200', code: 'none' })).toBe(1);
    expect(delta({ route: 'POST /api/v1/chat/completions', status: '400', code: 'invalid_request' })).toBe(1);
    expect(delta({ route: 'unmatched', status: '404', code: 'not_found' })).toBe(1);
    expect(after).not.toContain('secret-path-3f9a');
  });

  it('run metrics reported by the paid-run core: tokens, credits, time to first token, streams, holds, upstream errors; unknown models are `other`', async () => {
    const m = h.gw.gateway.metrics;
    const before = await scrape();
    m.holdOpened();
    m.holdOpened();
    m.holdClosed();
    m.streamOpened();
    m.firstToken({ provider: 'provider_1', model: 'gpt-test' }, 250);
    m.runSettled({ provider: 'provider_1', model: 'gpt-test', inputTokens: 12, outputTokens: 7, microCredits: 8_500 });
    m.runSettled({ provider: 'provider_1', model: 'a-model-the-client-made-up', inputTokens: 3, outputTokens: 1, microCredits: 1_000 });
    m.upstreamError('provider_7', 'upstream_error');
    m.upstreamError('not-a-provider', 'upstream_rate_limited');
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);
    expect(delta('gateway_holds_in_flight')).toBe(1);
    expect(delta('gateway_open_streams')).toBe(1);
    expect(delta('gateway_time_to_first_token_seconds_count', { provider: 'provider_1', model: 'gpt-test' })).toBe(1);
    expect(delta('gateway_time_to_first_token_seconds_sum', { provider: 'provider_1', model: 'gpt-test' })).toBeCloseTo(0.25);
    expect(delta('gateway_input_tokens_total', { provider: 'provider_1', model: 'gpt-test' })).toBe(12);
    expect(delta('gateway_output_tokens_total', { provider: 'provider_1', model: 'gpt-test' })).toBe(7);
    expect(delta('gateway_credits_charged_total', { provider: 'provider_1', model: 'gpt-test' })).toBeCloseTo(0.0085);
    expect(delta('gateway_input_tokens_total', { provider: 'provider_1', model: 'other' })).toBe(3);
    expect(delta('gateway_upstream_errors_total', { provider: 'provider_7', code: 'upstream_error' })).toBe(1);
    expect(delta('gateway_upstream_errors_total', { provider: 'other', code: 'upstream_rate_limited' })).toBe(1);
    expect(after).not.toContain('a-model-the-client-made-up');
    expect(after).not.toContain('not-a-provider');
    m.holdClosed();
    m.streamClosed();
  });

  it('event-loop delay and memory are exported', async () => {
    const text = await scrape();
    for (const name of ['gateway_event_loop_delay_p50_seconds', 'gateway_event_loop_delay_p99_seconds', 'gateway_event_loop_delay_max_seconds', 'gateway_resident_memory_bytes', 'gateway_heap_used_bytes']) {
      expect(text).toContain(`# TYPE ${name} gauge`);
    }
    expect(sample(text, 'gateway_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('no label carries a key, an account or an address; label names are route, status, code, provider, model, kind (of token) only', async () => {
    const { key, keyId, accountId } = await h.gw.account();
    h.openai.enqueue({ kind: 'text', text: 'Hi', usage: { input: 5, output: 2 } });
    await h.gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] } });
    await h.gw.api('/models', { key });
    await h.gw.api('/models', { key: 'svc_live_' + '0'.repeat(64) });
    await http(`${h.gw.url}/mcp`, { body: { jsonrpc: '2.0', id: 1, method: 'ping' }, headers: { accept: 'application/json, text/event-stream', 'x-forwarded-for': '203.0.113.9' } });
    const text = await scrape();
    for (const secret of [key, key.slice(0, 16), keyId, accountId, '127.0.0.1', '::1', '203.0.113.9', 'svc_live_']) expect(text).not.toContain(secret);
    const names = new Set<string>();
    for (const line of text.split('\n')) {
      if (line.startsWith('#')) continue;
      for (const m of line.matchAll(/[{,](\w+)="/g)) names.add(m[1] as string);
    }
    expect([...names].filter((n) => !ALLOWED_LABELS.has(n))).toEqual([]);
  });
});

describe('a gateway without metrics wiring from the core', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ METRICS_TOKEN });
  });
  afterAll(async () => gw.close());

  it('the registry is the gateway\'s own: two gateways in one process count separately', async () => {
    const other = await startGateway({ METRICS_TOKEN });
    try {
      await gw.api('/models');
      await gw.api('/models');
      await other.api('/models');
      const mine = (await http(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text;
      const theirs = (await http(`${other.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text;
      expect(sample(mine, 'gateway_http_requests_total', { route: 'GET /api/v1/models', status: '200' })).toBe(2);
      expect(sample(theirs, 'gateway_http_requests_total', { route: 'GET /api/v1/models', status: '200' })).toBe(1);
    } finally {
      await other.close();
    }
  });
});
