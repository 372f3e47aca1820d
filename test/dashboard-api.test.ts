/** The dashboard's admin reads: usage rollups written with each settlement, the job log by cursor, CSV, account search. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { loadConfig } from '../src/config.ts';
import { createGateway } from '../src/gateway.ts';
import { ADMIN_TOKEN, http } from './helpers/gateway.ts';

const hi = [{ role: 'user', content: 'Hello there' }];

describe('dashboard admin API', () => {
  let h: ChatHarness;
  let accountId: string;
  let keyId: string;
  beforeAll(async () => {
    h = await startChatHarness();
    ({ accountId, keyId } = await (async () => {
      const a = await h.gw.account({ credits: 100 });
      h.openai.enqueue({ kind: 'text', text: 'one', usage: { input: 10, output: 2 } });
      h.openai.enqueue({ kind: 'text', text: 'two', usage: { input: 20, output: 3 } });
      h.openai.enqueue({ kind: 'error', status: 500 });
      for (let i = 0; i < 3; i++) await h.gw.api('/chat/completions', { key: a.key, body: { model: 'gpt-test', messages: hi } });
      return a;
    })());
  });
  afterAll(async () => h.close());

  it('usage: requests, errors by code, credits and tokens per hour, top models and keys, from the rollups', async () => {
    const r = await h.gw.admin('GET', `/admin/v1/usage?account_id=${accountId}`);
    expect(r.status).toBe(200);
    expect(r.json.totals).toEqual({ requests: 3, errors: 1, credits: (30 * 125 + 5 * 1000) / 1e6 });
    // Every hour the last 24 hours touch (25 unless they start on the hour), zeros where nothing ran.
    expect(r.json.series.length).toBeGreaterThanOrEqual(24);
    expect(r.json.series.filter((p: { requests: number }) => p.requests > 0)).toEqual([expect.objectContaining({ requests: 3, errors: 1, prompt_tokens: 30, completion_tokens: 5 })]);
    expect(r.json.errors_by_code).toEqual([{ code: 'upstream_error', requests: 1 }]);
    expect(r.json.top_models).toEqual([{ model: 'gpt-test', requests: 3, credits: 0.00875 }]);
    expect(r.json.top_keys).toEqual([{ key_id: keyId, key_name: 'test key', account_id: accountId, requests: 3, credits: 0.00875 }]);
    const daily = await h.gw.admin('GET', `/admin/v1/usage?bucket=day&from=${new Date(Date.now() - 30 * 86_400_000).toISOString()}`);
    expect(daily.json.series.at(-1).t).toMatch(/T00:00:00.000Z$/);
  });

  it('usage: a 30-day range in hours, or from after to → 400 validation_failed in words', async () => {
    const wide = await h.gw.admin('GET', `/admin/v1/usage?from=2020-01-01&to=2020-03-01`);
    expect(wide.status).toBe(400);
    expect(wide.json.error.message).toContain('bucket=day');
    const backwards = await h.gw.admin('GET', `/admin/v1/usage?from=2020-03-01&to=2020-01-01&bucket=day`);
    expect(backwards.json.error.code).toBe('validation_failed');
  });

  it('job log: newest first, filters, pages by cursor with nothing repeated or lost', async () => {
    const all = await h.gw.admin('GET', `/admin/v1/jobs?account_id=${accountId}`);
    expect(all.json.data).toHaveLength(3);
    expect(all.json.data[0]).toMatchObject({ status: 'failed', code: 'upstream_error', model: 'gpt-test', key_name: 'test key' });
    expect(all.json.data[1]).toMatchObject({ status: 'succeeded', prompt_tokens: 20, completion_tokens: 3, credits: 0.0055 });
    expect(all.json.data[1].latency_ms).toBeGreaterThanOrEqual(0);
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await h.gw.admin('GET', `/admin/v1/jobs?key_id=${keyId}&limit=1${cursor === null ? '' : `&cursor=${cursor}`}`);
      ids.push(...page.json.data.map((j: { id: string }) => j.id));
      cursor = page.json.next_cursor;
    } while (cursor !== null);
    expect(ids).toEqual(all.json.data.map((j: { id: string }) => j.id));
    const failed = await h.gw.admin('GET', `/admin/v1/jobs?account_id=${accountId}&code=upstream_error`);
    expect(failed.json.data).toHaveLength(1);
    expect((await h.gw.admin('GET', '/admin/v1/jobs?status=nope')).status).toBe(400);
    expect((await h.gw.admin('GET', '/admin/v1/jobs?cursor=zzz')).status).toBe(400);
  });

  it('job log as CSV: a header row and one row per job', async () => {
    const r = await http(`${h.gw.url}/admin/v1/jobs.csv?account_id=${accountId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(r.headers['content-type']).toContain('text/csv');
    const lines = r.text.trim().split('\n');
    expect(lines[0]).toBe('created_at,id,account_id,key_id,key_name,kind,model,status,code,prompt_tokens,completion_tokens,cache_read_tokens,cache_write_tokens,credits,latency_ms');
    expect(lines).toHaveLength(4);
  });

  it('account search by name, e-mail or id; wildcards are literal', async () => {
    const made = await h.gw.admin('POST', '/admin/v1/accounts', { name: 'Zebra 100% Ltd', email: 'ops@zebra.test' });
    expect((await h.gw.admin('GET', '/admin/v1/accounts?q=zebra')).json.data.map((a: { id: string }) => a.id)).toEqual([made.json.id]);
    expect((await h.gw.admin('GET', '/admin/v1/accounts?q=ops@zebra')).json.data).toHaveLength(1);
    expect((await h.gw.admin('GET', `/admin/v1/accounts?q=${made.json.id}`)).json.data).toHaveLength(1);
    expect((await h.gw.admin('GET', '/admin/v1/accounts?q=0%25')).json.data).toHaveLength(1);
    expect((await h.gw.admin('GET', '/admin/v1/accounts?q=_')).json.data).toHaveLength(0);
  });

  it('the dashboard routes need the token like every admin read', async () => {
    expect((await http(`${h.gw.url}/admin/v1/usage`)).status).toBe(401);
    expect((await http(`${h.gw.url}/admin/v1/jobs`)).status).toBe(401);
    expect((await http(`${h.gw.url}/admin/assets/../../package.json`)).status).toBe(404);
  });

  it('without ADMIN_TOKEN the dashboard and its API answer 404', async () => {
    const config = { ...loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent', ADMIN_TOKEN }), adminToken: undefined };
    const gateway = await createGateway(config);
    try {
      for (const url of ['/admin', '/admin/', '/admin/assets/index.js', '/admin/v1/usage', '/admin/v1/jobs']) {
        expect((await gateway.app.inject({ url })).statusCode, url).toBe(404);
      }
    } finally {
      await gateway.close();
    }
  });
});
