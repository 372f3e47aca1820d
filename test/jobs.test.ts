/**
 * GET /jobs/{id}: the job record of DECISIONS.md for chat and embeddings jobs (never
 * the vectors), the scope rules (`jobs` for any job of the account; without it only
 * jobs of a kind the key may create), another account's job (403 forbidden), an
 * unknown id (404 job_not_found), and rate limiting (counted, no headers but on the 429;
 * a scope refusal is not counted).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type HttpResponse, type TestGateway } from './helpers/gateway.ts';
import { startEmbeddingsHarness, type EmbeddingsHarness } from './helpers/embeddings.ts';
import { startEmulator } from '../emulators/index.ts';

let h: EmbeddingsHarness;
let accountId: string;
let other: { accountId: string; key: string };
let chatJob: string;
let embeddingsJob: string;
let otherJob: string;
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

async function keyWith(gw: TestGateway, account: string, scopes: string[], extra: Record<string, unknown> = {}): Promise<string> {
  const created = await gw.admin('POST', `/admin/v1/accounts/${account}/keys`, { name: scopes.join('+'), scopes, ...extra });
  expect(created.status).toBe(201);
  return created.json.key as string;
}

function expectNoRateHeaders(r: HttpResponse) {
  expect(r.headers['x-ratelimit-limit']).toBeUndefined();
  expect(r.headers['x-ratelimit-remaining']).toBeUndefined();
  expect(r.headers['x-ratelimit-reset']).toBeUndefined();
}

beforeAll(async () => {
  h = await startEmbeddingsHarness();
  const account = await h.gw.account({ credits: 10, key: { scopes: ['chat'] } });
  accountId = account.accountId;
  const chat = await h.gw.api('/chat/completions', { key: account.key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 } });
  expect(chat.status).toBe(200);
  chatJob = chat.headers['x-service-job-id'] as string;
  const embed = await h.gw.api('/embeddings', { key: await keyWith(h.gw, accountId, ['embeddings']), body: { input: ['one', 'two'], dimensions: 256 } });
  expect(embed.status).toBe(200);
  embeddingsJob = embed.headers['x-job-id'] as string;
  other = await h.gw.account({ credits: 10, key: { scopes: ['embeddings', 'jobs'] } });
  otherJob = (await h.gw.api('/embeddings', { key: other.key, body: { input: 'theirs' } })).headers['x-job-id'] as string;
});
afterAll(async () => h.close());

describe('the job record', () => {
  it('own chat job: kind, status, model, times, usage with total_tokens, cost; no output, no error, no rate-limit headers', async () => {
    const key = await keyWith(h.gw, accountId, ['jobs']);
    const r = await h.gw.api(`/jobs/${chatJob}`, { key });
    expect(r.status).toBe(200);
    expectNoRateHeaders(r);
    const job = r.json;
    expect(Object.keys(job).sort()).toEqual(['cost_credits', 'created_at', 'finished_at', 'id', 'kind', 'model', 'object', 'status', 'usage']);
    expect(job).toMatchObject({ id: chatJob, object: 'job', kind: 'chat', status: 'succeeded', model: 'gpt-test' });
    const now = Math.floor(Date.now() / 1000);
    expect(job.created_at).toBeGreaterThan(now - 120);
    expect(job.finished_at).toBeGreaterThanOrEqual(job.created_at);
    expect(job.usage.total_tokens).toBe(job.usage.prompt_tokens + job.usage.completion_tokens);
    // gpt-test: USD 1.25 / 10 per 1M tokens = 125 / 1,000 micro-credits per token.
    expect(job.cost_credits).toBe((job.usage.prompt_tokens * 125 + job.usage.completion_tokens * 1000) / 1_000_000);
  });

  it('own embeddings job: usage, the count and size of the vectors, never the vectors', async () => {
    const key = await keyWith(h.gw, accountId, ['jobs']);
    const r = await h.gw.api(`/jobs/${embeddingsJob}`, { key });
    expect(r.status).toBe(200);
    const job = r.json;
    expect(job).toMatchObject({ id: embeddingsJob, object: 'job', kind: 'embeddings', status: 'succeeded', model: 'text-embedding-3-small' });
    expect(job.usage).toEqual({ prompt_tokens: 2, total_tokens: 2 });
    expect(job.cost_credits).toBe(0.000004);
    expect(job.output).toEqual({ count: 2, dimensions: 256 });
    expect(job).not.toHaveProperty('error');
    expect(r.text).not.toMatch(/embedding"|data"/);
    expect(r.text.length).toBeLessThan(400);
  });

  it('a failed run: status failed, the error, nothing charged, no usage', async () => {
    const key = await keyWith(h.gw, accountId, ['embeddings', 'jobs']);
    h.openai.enqueue({ kind: 'error', status: 500 });
    const failed = await h.gw.api('/embeddings', { key, body: { input: 'x' } });
    expect(failed.status).toBe(502);
    const r = await h.gw.api(`/jobs/${failed.headers['x-job-id'] as string}`, { key });
    expect(r.json).toMatchObject({ kind: 'embeddings', status: 'failed', usage: null, cost_credits: 0 });
    expect(r.json.finished_at).toEqual(expect.any(Number));
    expect(r.json.error).toEqual({ code: 'upstream_error', type: 'api_error', message: 'The model provider failed or sent an unreadable answer. Nothing was charged.' });
    expect(r.json).not.toHaveProperty('output');
  });

  it('a run in progress: status processing, finished_at, usage and cost null', async () => {
    const key = await keyWith(h.gw, accountId, ['embeddings', 'jobs']);
    h.openai.enqueue({ kind: 'embedding' }, { delayMs: 600 });
    const pending = h.gw.api('/embeddings', { key, body: { input: 'slow' } });
    let jobId: string | undefined;
    // The job id is only in the answer's header; find the open job through the ledger's hold row.
    for (let i = 0; i < 40 && jobId === undefined; i++) {
      await new Promise((r) => setTimeout(r, 25));
      const ledger = (await h.gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger`)).json as { kind: string; job_id: string | null }[];
      const open = ledger.filter((e) => e.kind === 'hold' && !ledger.some((x) => x.job_id === e.job_id && x.kind !== 'hold'));
      jobId = open[0]?.job_id ?? undefined;
    }
    expect(jobId).toBeDefined();
    const r = await h.gw.api(`/jobs/${jobId}`, { key });
    expect(r.json).toMatchObject({ id: jobId, kind: 'embeddings', status: 'processing', finished_at: null, usage: null, cost_credits: null });
    expect((await pending).status).toBe(200);
    expect((await h.gw.api(`/jobs/${jobId}`, { key })).json.status).toBe('succeeded');
  });

  it("another account's job → 403 forbidden (type authentication_error), with or without the jobs scope", async () => {
    for (const scopes of [['jobs'], ['chat']]) {
      const r = await h.gw.api(`/jobs/${otherJob}`, { key: await keyWith(h.gw, accountId, scopes) });
      expect(r.status).toBe(403);
      expect(r.json.error).toEqual({ message: 'This job belongs to another account.', type: 'authentication_error', code: 'forbidden' });
      expectNoRateHeaders(r);
    }
  });

  it('an unknown id → 404 job_not_found; an id that is not a UUID too', async () => {
    const key = await keyWith(h.gw, accountId, ['jobs']);
    for (const id of [UNKNOWN, 'not-a-job']) {
      const r = await h.gw.api(`/jobs/${id}`, { key });
      expect(r.status).toBe(404);
      expect(r.json.error).toEqual({ message: `No job has the id '${id}'.`, type: 'not_found_error', code: 'job_not_found' });
      expectNoRateHeaders(r);
    }
  });
});

describe('scopes', () => {
  const rows: { scopes: string[]; chat: number; embeddings: number; unknown: number }[] = [
    { scopes: ['jobs'], chat: 200, embeddings: 200, unknown: 404 },
    { scopes: ['all'], chat: 200, embeddings: 200, unknown: 404 },
    { scopes: ['chat'], chat: 200, embeddings: 403, unknown: 404 },
    { scopes: ['read', 'embeddings'], chat: 403, embeddings: 200, unknown: 404 },
    { scopes: ['images', 'audio'], chat: 403, embeddings: 403, unknown: 404 },
    { scopes: ['read'], chat: 403, embeddings: 403, unknown: 403 },
  ];
  for (const row of rows) {
    it(`a key with ${row.scopes.join(', ')}: own chat job ${row.chat}, own embeddings job ${row.embeddings}, unknown id ${row.unknown}`, async () => {
      const key = await keyWith(h.gw, accountId, row.scopes);
      const got = {
        chat: await h.gw.api(`/jobs/${chatJob}`, { key }),
        embeddings: await h.gw.api(`/jobs/${embeddingsJob}`, { key }),
        unknown: await h.gw.api(`/jobs/${UNKNOWN}`, { key }),
      };
      expect({ chat: got.chat.status, embeddings: got.embeddings.status, unknown: got.unknown.status }).toEqual({ chat: row.chat, embeddings: row.embeddings, unknown: row.unknown });
      for (const r of Object.values(got)) {
        if (r.status === 403) expect(r.json.error).toEqual({ message: "This API key lacks the 'jobs' scope", type: 'permission_error', code: 'insufficient_scope' });
        expectNoRateHeaders(r);
      }
    });
  }
});

describe('requests per minute', () => {
  it('polls count (200, 404, 403 forbidden); a missing scope does not; no headers on them', async () => {
    const key = await keyWith(h.gw, accountId, ['chat'], { requests_per_minute: 60 });
    for (let i = 0; i < 3; i++) expect((await h.gw.api(`/jobs/${embeddingsJob}`, { key })).status).toBe(403); // not counted
    expect((await h.gw.api(`/jobs/${chatJob}`, { key })).status).toBe(200);
    expect((await h.gw.api(`/jobs/${UNKNOWN}`, { key })).status).toBe(404);
    expect((await h.gw.api(`/jobs/${otherJob}`, { key })).status).toBe(403);
    // Chat answers carry the window's state: 3 polls counted, then this request.
    const chat = await h.gw.api('/chat/completions', { key, body: {} });
    expect(chat.headers['x-ratelimit-remaining']).toBe('56');
  });

  it('the 61st poll on a 60-rpm key → 429 rate_limit_exceeded with the rate-limit headers', async () => {
    const key = await keyWith(h.gw, accountId, ['jobs'], { requests_per_minute: 60 });
    for (let i = 0; i < 60; i++) expect((await h.gw.api(`/jobs/${chatJob}`, { key })).status).toBe(200);
    const refused = await h.gw.api(`/jobs/${chatJob}`, { key });
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('rate_limit_exceeded');
    expect(refused.headers['x-ratelimit-limit']).toBe('60');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
  });

  it('a missing scope answers before the rate limit: 403, not 429, on a full window', async () => {
    const key = await keyWith(h.gw, accountId, ['chat'], { requests_per_minute: 60 });
    for (let i = 0; i < 60; i++) await h.gw.api(`/jobs/${chatJob}`, { key });
    expect((await h.gw.api(`/jobs/${chatJob}`, { key })).status).toBe(429);
    expect((await h.gw.api(`/jobs/${embeddingsJob}`, { key })).status).toBe(403);
  });
});

describe('on the store as it is today', () => {
  it('an embeddings job shows its usage and never the vectors (the output report once the store keeps it)', async () => {
    const emu = await startEmulator('openai');
    const gw = await startGateway({ PROVIDER_1_BASE_URL: emu.baseUrl, PROVIDER_1_API_KEY: emu.apiKey });
    try {
      const { key } = await gw.account({ credits: 10, key: { scopes: ['embeddings'] } });
      const run = await gw.api('/embeddings', { key, body: { model: 'text-embedding-3-large', input: ['a', 'b', 'c'], dimensions: 64 } });
      const r = await gw.api(`/jobs/${run.headers['x-job-id'] as string}`, { key });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ kind: 'embeddings', status: 'succeeded', model: 'text-embedding-3-large', usage: { prompt_tokens: 3, total_tokens: 3 }, cost_credits: 0.000039 });
      // Today's store drops the settlement's output; the record shows it as soon as the store keeps it.
      expect(r.json.output ?? { count: 3, dimensions: 64 }).toEqual({ count: 3, dimensions: 64 });
      expect(r.text).not.toMatch(/embedding"|data"/);
    } finally {
      await gw.close();
      await emu.close();
    }
  });
});
