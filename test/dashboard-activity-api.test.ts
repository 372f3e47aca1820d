/**
 * The admin API behind the dashboard's activity view (issue 32): one request in detail (provider,
 * provider's model id, the message its client got, hold against charge, attempts, ledger rows), an
 * account's statement with its running balance, the request log in a time range, usage charts with
 * every bucket and stacked groups, keys' last use, accounts' month spend and last activity; and a
 * database of main before migrations 135 and 136 upgrading in place.
 */
import { CompiledQuery, Kysely } from 'kysely';
import { migrateOnly, upgradeInPlace, type MakeOld } from './helpers/upgrade.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/store/open-store.ts';
import { startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { ADMIN_TOKEN } from './helpers/gateway.ts';

const HOUR = 3_600_000;
const hi = [{ role: 'user', content: 'Hello there' }];

describe('the activity view admin API', () => {
  let h: ChatHarness;
  let a: { accountId: string; keyId: string; key: string };
  const chat = async (model = 'gpt-test') => (await h.gw.api('/chat/completions', { key: a.key, body: { model, messages: hi } })).status;
  beforeAll(async () => {
    h = await startChatHarness({ UPSTREAM_RETRIES: '1' });
    a = await h.gw.account({ credits: 10 });
    h.openai.enqueue({ kind: 'text', text: 'one', usage: { input: 10, output: 2 } });
    expect(await chat()).toBe(200);
    h.openai.enqueue({ kind: 'error', status: 500 });
    h.openai.enqueue({ kind: 'error', status: 503 });
    expect(await chat()).toBe(502);
    h.anthropic.enqueue({ kind: 'text', text: 'two', usage: { input: 20, output: 3 } });
    expect(await chat('claude-test')).toBe(200);
  });
  afterAll(async () => h.close());

  it('a request in detail: provider and its model id from the answering attempt, hold against charge, its ledger rows', async () => {
    const log = (await h.gw.admin('GET', `/admin/v1/jobs?account_id=${a.accountId}`)).json.data;
    const claude = await h.gw.admin('GET', `/admin/v1/jobs/${log[0].id}`);
    expect(claude.status).toBe(200);
    expect(claude.json).toMatchObject({
      id: log[0].id, status: 'succeeded', model: 'claude-test', provider: 'provider_2', provider_model_id: 'claude-sonnet-5-5-test',
      account_name: 'test account', key_name: 'test key', error_message: null, credits: (20 * 125 + 3 * 1000) / 1e6,
    });
    expect(claude.json.ledger.map((l: { kind: string; credits: number }) => [l.kind, l.credits])).toEqual([['hold', claude.json.held_credits], ['settle', 0.0055]]);
    expect(claude.json.attempts).toEqual([expect.objectContaining({ provider: 'provider_2', deployment: 'claude-sonnet-5-5-test', status: 200 })]);
  });

  it('a failed request keeps the message its client got and why, every attempt, and its hold released', async () => {
    const failed = (await h.gw.admin('GET', `/admin/v1/jobs?account_id=${a.accountId}&status=failed`)).json.data[0];
    const detail = (await h.gw.admin('GET', `/admin/v1/jobs/${failed.id}`)).json;
    expect(detail).toMatchObject({ status: 'failed', code: 'upstream_error', credits: 0, provider: 'provider_1', provider_model_id: 'gpt-test-2026-01-01' });
    expect(detail.error_message).toBe('The model provider failed (HTTP 503). Retry with backoff. (the provider answered HTTP 503)');
    expect(detail.attempts.map((t: { status: number; retry?: string }) => [t.status, t.retry])).toEqual([[500, 'failed'], [503, undefined]]);
    expect(detail.ledger.map((l: { kind: string }) => l.kind)).toEqual(['hold', 'refund']);
    expect((await h.gw.admin('GET', '/admin/v1/jobs/no-such-job')).json.error.code).toBe('job_not_found');
  });

  it("the statement: balance-moving rows newest first, signed, each with the balance it left, paged", async () => {
    const first = (await h.gw.admin('GET', `/admin/v1/accounts/${a.accountId}/statement?limit=2`)).json;
    expect(first.balance_credits).toBe(10 - 0.00325 - 0.0055);
    expect(first.data.map((l: { kind: string; change_credits: number; balance_after_credits: number }) => [l.kind, l.change_credits, l.balance_after_credits]))
      .toEqual([['settle', -0.0055, 9.99125], ['settle', -0.00325, 9.99675]]);
    const next = (await h.gw.admin('GET', `/admin/v1/accounts/${a.accountId}/statement?limit=2&before=${first.next_before}`)).json;
    expect(next.data.map((l: { kind: string; change_credits: number; balance_after_credits: number }) => [l.kind, l.change_credits, l.balance_after_credits]))
      .toEqual([['topup', 10, 10]]);
    expect(next.next_before).toBeNull();
  });

  it('the request log in a time range, and as CSV of that range', async () => {
    const now = Date.now();
    const iso = (ms: number) => new Date(ms).toISOString();
    expect((await h.gw.admin('GET', `/admin/v1/jobs?account_id=${a.accountId}&from=${iso(now - HOUR)}`)).json.data).toHaveLength(3);
    expect((await h.gw.admin('GET', `/admin/v1/jobs?account_id=${a.accountId}&to=${iso(now - HOUR)}`)).json.data).toHaveLength(0);
    expect((await h.gw.admin('GET', `/admin/v1/jobs?from=2020-01-01&to=2020-01-02`)).json.data).toHaveLength(0);
    const csv = await fetch(`${h.gw.url}/admin/v1/jobs.csv?account_id=${a.accountId}&from=${iso(now - HOUR)}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect((await csv.text()).trim().split('\n')).toHaveLength(4);
  });

  it('usage: every bucket of the range (zeros where nothing ran), and bars stacked by model or key', async () => {
    const to = Math.ceil(Date.now() / HOUR) * HOUR;
    const range = `from=${new Date(to - 24 * HOUR).toISOString()}&to=${new Date(to).toISOString()}`;
    const usage = (await h.gw.admin('GET', `/admin/v1/usage?${range}&account_id=${a.accountId}&stack=model`)).json;
    expect(usage.series).toHaveLength(24);
    expect(usage.series.map((p: { t: string }) => Date.parse(p.t))).toEqual(Array.from({ length: 24 }, (_, i) => to - (24 - i) * HOUR));
    expect(usage.series.slice(0, 23).every((p: { requests: number }) => p.requests === 0)).toBe(true);
    expect(usage.series[23]).toMatchObject({ requests: 3, errors: 1, credits: 0.00875 });
    expect(usage.stacks.map((s: { label: string; credits: number[]; requests: number[] }) => [s.label, s.credits[23], s.requests[23], s.credits.length]))
      .toEqual([['claude-test', 0.0055, 1, 24], ['gpt-test', 0.00325, 2, 24]]);
    const byKey = (await h.gw.admin('GET', `/admin/v1/usage?${range}&stack=key`)).json;
    expect(byKey.stacks.map((s: { name: string; label: string }) => [s.name, s.label])).toEqual([[a.keyId, 'test key']]);
    const daily = (await h.gw.admin('GET', `/admin/v1/usage?from=${new Date(to - 30 * 24 * HOUR).toISOString()}&to=${new Date(to).toISOString()}&bucket=day&stack=model`)).json;
    expect(daily.series.length).toBeGreaterThanOrEqual(30);
    expect(daily.stacks.map((s: { label: string; credits: number[] }) => [s.label, s.credits.reduce((x, y) => x + y, 0)])).toEqual([['claude-test', 0.0055], ['gpt-test', 0.00325]]);
  });

  it("keys with their last use; accounts with this month's spend and last activity", async () => {
    const keys = (await h.gw.admin('GET', `/admin/v1/accounts/${a.accountId}/keys`)).json;
    const newest = (await h.gw.admin('GET', `/admin/v1/jobs?key_id=${a.keyId}&limit=1`)).json.data[0].created_at;
    expect(keys).toEqual([expect.objectContaining({ id: a.keyId, last_used_at: newest })]);
    const idle = await h.gw.account({ credits: 1 });
    const accounts = (await h.gw.admin('GET', '/admin/v1/accounts')).json.data;
    const row = (id: string) => accounts.find((x: { id: string }) => x.id === id);
    expect(row(a.accountId)).toMatchObject({ month_spent_credits: 0.00875, last_activity_at: newest });
    expect(row(idle.accountId)).toMatchObject({ month_spent_credits: 0, last_activity_at: null });
    expect((await h.gw.admin('GET', `/admin/v1/accounts/${idle.accountId}/keys`)).json[0].last_used_at).toBeNull();
  });
});

/** A database of main before issue 32 (migrations through 121): a job refunded then, with its ledger rows. */
async function fillBefore135(db: Kysely<unknown>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  const exec = (text: string, ...values: unknown[]) => {
    let n = 0;
    return db.executeQuery(CompiledQuery.raw(dialect === 'sqlite' ? text : text.replace(/\?/g, () => `$${++n}`), values));
  };
  const at = Date.now() - 60_000;
  await exec('insert into accounts (id, name, created_at, has_purchase, billing_emails, balance, held) values (?, ?, ?, 1, 1, 5000000, 0)', 'acc-old', 'Old', at);
  await exec(`insert into jobs (id, account_id, kind, model, status, held, cost, error_code, instance_id, created_at, finished_at)
    values ('j-old', 'acc-old', 'chat', 'gpt-test', 'failed', 700000, 0, 'upstream_error', 'old-proc', ?, ?)`, at, at + 10);
  await exec("insert into ledger (account_id, job_id, kind, amount, created_at) values ('acc-old', null, 'topup', 5000000, ?)", at - 1);
  await exec("insert into ledger (account_id, job_id, kind, amount, created_at) values ('acc-old', 'j-old', 'hold', 700000, ?)", at);
  await exec("insert into ledger (account_id, job_id, kind, amount, created_at) values ('acc-old', 'j-old', 'refund', 700000, ?)", at + 10);
}

describe('upgrading a database of main before issue 32 (through migration 121) in place', () => {
  const before135: MakeOld = async (db, dialect, schema) => {
    await migrateOnly(db, dialect, (name) => name < '135', schema);
    await fillBefore135(db, dialect);
  };
  const check = async (url: string) => {
    const store = await openStore(url);
    try {
      const job = await store.usage.job('j-old');
      expect(job).toMatchObject({ errorCode: 'upstream_error', errorMessage: null, attempts: null });
      expect(job?.ledger.map((l) => l.kind)).toEqual(['hold', 'refund']);
      expect((await store.usage.statement('acc-old', 5_000_000, 10)).map((l) => [l.entry.kind, l.change, l.balanceAfter])).toEqual([['topup', 5_000_000, 5_000_000]]);
      // The stacked bars' reads run on this database (and its new model totals, migration 137), hourly and daily, by model and key.
      const day = 86_400_000;
      for (const bucket of ['hour', 'day'] as const) {
        for (const by of ['model', 'key'] as const) {
          const stacks = await store.usage.usageStacks({ from: Date.now() - 7 * day, to: Date.now(), bucket }, by, ['gpt-test', 'other-name']);
          expect(stacks, `${bucket} ${by}`).toEqual([]);
        }
      }
    } finally {
      await store.close();
    }
  };

  it('SQLite: a job closed before keeps no message, and its ledger rows are found', async () => {
    await upgradeInPlace('sqlite', before135, check);
  });

  it('PostgreSQL: the same', async () => {
    await upgradeInPlace('postgres', before135, check);
  });
});
