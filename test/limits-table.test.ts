/**
 * Limits as a table (src/store/limits.ts): every limit the hold checks is one row, and the checks
 * (money SQL on SQLite and PostgreSQL), the same decision in TypeScript, the refusal, the admin
 * fields, the OpenAPI schemas and the docs' table derive from the rows. A limit added by its row
 * alone (a test-only per-key hourly limit here, with the columns its migration would add) is
 * checked in the hold, refused with its message, alerted, and shown in admin and OpenAPI, as
 * test/providers-descriptors.test.ts proves a provider added by its descriptor alone.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailText } from '../src/notifications/mail-sender.ts';
import { buildOpenApiDocument } from '../src/openapi/document.ts';
import { HOLD_LIMITS, holdRefusalOf, keyCreditLimit, PERIODS, type HoldFacts, type HoldLimit } from '../src/store/limits.ts';
import { LIMITS_DOC, limitsDocTable, withLimitsTable } from '../src/store/limits-doc.ts';
import { openStore } from '../src/store/open-store.ts';
import type { ApiKeyRecord, Store } from '../src/store/types.ts';
import { startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { account, hold, key, postgresSchema } from './helpers/stores.ts';

const DAY = 86_400_000;

/** The test-only limit: one row. */
const hourly = keyCreditLimit({ name: 'key_hourly', period: 'hour', setting: { field: 'hourlyLimit', column: 'hourly_limit', api: 'hourly_limit_credits' } });
const firstTrialRule = HOLD_LIMITS.findIndex((l) => l.owner === 'trial');
const WITH_HOURLY: readonly HoldLimit[] = [...HOLD_LIMITS.slice(0, firstTrialRule), hourly, ...HOLD_LIMITS.slice(firstTrialRule)];
/** What its migration adds (a shipped row's migration is a file of src/store/sql/migrations/): its setting and its period's counter. */
const HOURLY_MIGRATION = [
  'ALTER TABLE api_keys ADD COLUMN hourly_limit BIGINT',
  'ALTER TABLE key_families ADD COLUMN hour_start BIGINT NOT NULL DEFAULT 0',
  'ALTER TABLE key_families ADD COLUMN hour_used BIGINT NOT NULL DEFAULT 0',
];

/** A database of either kind, opened with a limit table, with raw reads beside the store (as the hold reads its rows). */
interface Database {
  store: Store;
  /** Runs SQL with `?` placeholders outside the store. */
  run(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

const DATABASES = [
  {
    name: 'sqlite',
    open: async (limits: readonly HoldLimit[], migration: readonly string[] = []): Promise<Database> => {
      const dir = mkdtempSync(join(tmpdir(), 'limits-'));
      const file = join(dir, 'gateway.db');
      const store = await openStore(`sqlite:${file}`, { limits });
      const raw = new BetterSqlite3(file);
      for (const statement of migration) raw.exec(statement);
      return {
        store,
        run: async (sql, params = []) => {
          const statement = raw.prepare(sql);
          return statement.reader ? (statement.all(...params) as Record<string, unknown>[]) : (statement.run(...params), []);
        },
        close: async () => {
          raw.close();
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'postgres',
    open: async (limits: readonly HoldLimit[], migration: readonly string[] = []): Promise<Database> => {
      const schema = await postgresSchema();
      const store = await openStore(schema.url, { limits });
      for (const statement of migration) await schema.client.query(statement);
      return {
        store,
        run: async (sql, params = []) => {
          let n = 0;
          return (await schema.client.query(sql.replace(/\?/g, () => `$${++n}`), params)).rows as Record<string, unknown>[];
        },
        close: async () => {
          await store.close();
          await schema.drop();
        },
      };
    },
  },
] as const;

describe('the shipped table', () => {
  it('the docs hold the table generated from the rows', () => {
    const page = readFileSync(LIMITS_DOC.file, 'utf8');
    expect(page).toBe(withLimitsTable(page, HOLD_LIMITS));
  });

  it("is in the spec's order of checks: credits, spending limit, key limits, trial rules (the client address last)", () => {
    expect(HOLD_LIMITS.map((l) => l.name)).toEqual([
      'insufficient_credits', 'spending_limit', 'key_daily', 'key_monthly',
      'hold_too_large', 'runs_per_day', 'failures_in_a_row', 'account_too_new', 'runs_per_address',
    ]);
  });

  it('no module that derives from the table names a limit of it', () => {
    const derived = [
      'src/store/sql/money/hold-movement.ts', 'src/store/sql/money/close-movement.ts', 'src/store/sql/money/limit-sql.ts', 'src/billing/hold-refusal.ts',
      'src/admin/key-requests.ts', 'src/admin/views.ts', 'src/admin/limit-fields.ts', 'src/openapi/schemas.ts', 'src/openapi/components.ts',
      'src/key-info/route.ts', 'src/portal/account-routes.ts', 'src/portal/key-routes.ts', 'src/fine-tuning/routes.ts', 'src/cli/admin-cli.ts',
    ];
    // Their SQL columns, API fields and row names (the records' typed fields dailyLimit… stay, for the store's callers).
    const names = /\b(daily_limit|monthly_limit|monthly_spending_limit)(_credits)?\b|\b(day_used|month_used)\b|'(key_daily|key_monthly|spending_limit)'/;
    for (const file of derived) expect(readFileSync(file, 'utf8'), file).not.toMatch(names);
  });
});

/** The facts of a hold, read from the rows the hold locks. */
async function factsOf(db: Database, h: { accountId: string; key: ApiKeyRecord | null; counts: boolean; amount: number; at: number; address: string | null }): Promise<HoldFacts> {
  const [a] = await db.run('SELECT * FROM accounts WHERE id = ?', [h.accountId]);
  if (a === undefined) throw new Error('no account');
  const n = (v: unknown) => Number(v ?? 0);
  const runs = String(a.trial_runs).match(/.{13}/g)?.map(Number) ?? [];
  let key: HoldFacts['key'] = null;
  if (h.key !== null && h.counts) {
    const [k] = await db.run('SELECT * FROM api_keys WHERE id = ?', [h.key.id]);
    const [f] = await db.run('SELECT * FROM key_families WHERE family_id = ?', [h.key.familyId]);
    if (k === undefined || f === undefined) throw new Error('no key');
    const used = (p: 'day' | 'month') => (n(f[`${p}_start`]) >= PERIODS[p].start(h.at) ? n(f[`${p}_used`]) : 0);
    key = { settings: { dailyLimit: k.daily_limit === null ? null : n(k.daily_limit), monthlyLimit: k.monthly_limit === null ? null : n(k.monthly_limit) }, used: { day: used('day'), month: used('month') } };
  }
  let addressRuns: number | null = null;
  if (h.address !== null) {
    const [t] = await db.run('SELECT runs FROM trial_addresses WHERE address = ?', [h.address]);
    addressRuns = (String(t?.runs ?? '').match(/.{13}/g)?.map(Number) ?? []).filter((s) => s > h.at - DAY).length;
  }
  return {
    amount: h.amount,
    at: h.at,
    account: {
      balance: n(a.balance), held: n(a.held), monthSettled: n(a.month_start) >= PERIODS.month.start(h.at) ? n(a.month_settled) : 0,
      hasPurchase: n(a.has_purchase) === 1, createdAt: n(a.created_at), trialRuns: runs, trialFailures: n(a.trial_failures),
      settings: { monthlySpendingLimit: a.monthly_spending_limit === null ? null : n(a.monthly_spending_limit) },
    },
    key,
    addressRuns,
  };
}

/** A small deterministic random source (the same sequence on every run). */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    return s / 2_147_483_648;
  };
}

for (const database of DATABASES) {
  describe(`on ${database.name}`, () => {
    it('the TypeScript decision (a reservation in memory) refuses exactly what the hold in SQL refuses, with the same answer', async () => {
      const db = await database.open(HOLD_LIMITS);
      try {
        const rnd = random(29);
        const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)] as T;
        const store = db.store;
        const paying = await account(store, { credits: 6_000_000 });
        await store.accounts.updateAccount(paying, { monthlySpendingLimit: 4_500_000 });
        const trials: string[] = [];
        for (let i = 0; i < 8; i++) trials.push(await account(store, { credits: 9_000_000, purchase: false }));
        // Its runs fail, from no client address: the trial rule of failures in a row meets it.
        const failing = trials[1] as string;
        const young = await account(store, { credits: 3_000_000, purchase: false, createdAt: Date.now() - 3_600_000 });
        const keys = [await key(store, paying, { dailyLimit: 2_500_000, monthlyLimit: 3_000_000 }), await key(store, paying, { monthlyLimit: 1_200_000 }), await key(store, trials[0] as string, { dailyLimit: 900_000 })];
        const decided = new Map<string, number>();
        for (let i = 0; i < 160; i++) {
          const accountId = pick([paying, paying, paying, paying, ...trials, young]);
          const own = keys.filter((k) => k.accountId === accountId);
          const h = {
            accountId, key: own.length > 0 && rnd() < 0.7 ? pick(own) : null, counts: rnd() < 0.9, amount: 1 + Math.floor(rnd() * 2_400_000),
            at: Date.now(), address: accountId === failing || rnd() < 0.2 ? null : pick(['10.0.0.1', '10.0.0.1', '10.0.0.1', '10.0.0.2']),
          };
          const expected = holdRefusalOf(HOLD_LIMITS, await factsOf(db, h));
          const jobId = randomUUID();
          const result = await hold(store, h.accountId, h.amount, { key: h.key ?? undefined, counts: h.counts, at: h.at, address: h.address, jobId });
          expect(result, `hold ${i}`).toEqual(expected === null ? { ok: true } : { ok: false, ...expected });
          const name = expected === null ? 'passed' : HOLD_LIMITS.find((l) => l.matches(expected))?.name ?? '?';
          decided.set(name, (decided.get(name) ?? 0) + 1);
          if (result.ok && (accountId === failing || rnd() < 0.6)) {
            if (accountId !== failing && rnd() < 0.8) await store.money.settle(jobId, { cost: Math.floor(h.amount * rnd()), usage: {}, status: 'succeeded', at: h.at });
            else await store.money.refund(jobId, { status: 'failed', errorCode: 'provider_error', at: h.at });
          }
        }
        // The sequence met every row, and passes: the comparison is not vacuous.
        expect([...decided.keys()].sort()).toEqual([...HOLD_LIMITS.map((l) => l.name), 'passed'].sort());
      } finally {
        await db.close();
      }
    });

    describe('a per-key hourly limit added by its row alone', () => {
      let db: Database;
      let h: ChatHarness;
      const body = { model: 'gpt-test', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 1000 };
      beforeAll(async () => {
        db = await database.open(WITH_HOURLY, HOURLY_MIGRATION);
        h = await startChatHarness({}, [], { store: db.store });
        h.openai.setDefault({ kind: 'text', text: 'ok', usage: { input: 10, output: 1 } });
      });
      afterAll(async () => {
        await h.close();
        await db.close();
      });

      it('is set through the admin API, refused at the hold with its message and X-Key-Limit-Reset, alerted, and lifted by an edit', async () => {
        const { key: secret, keyId, accountId } = await h.gw.account({ key: { hourly_limit_credits: 1.5 } });
        const listed = (await h.gw.admin('GET', `/admin/v1/accounts/${accountId}/keys`)).json as Record<string, unknown>[];
        expect(listed.find((k) => k.id === keyId)).toMatchObject({ hourly_limit_credits: 1.5, daily_limit_credits: null });

        // The first run costs about one credit (its whole output); the second hold (about one credit) would pass 1.5 this hour.
        h.openai.enqueue({ kind: 'text', text: 'ok', usage: { input: 10, output: 1000 } });
        expect((await h.gw.api('/chat/completions', { key: secret, body })).status).toBe(200);
        const before = (await h.gw.admin('GET', `/admin/v1/accounts/${accountId}`)).json;
        const refused = await h.gw.api('/chat/completions', { key: secret, body });
        expect(refused.status).toBe(429);
        expect(refused.json.error).toMatchObject({ code: 'api_key_limit_exceeded', type: 'rate_limit_error' });
        expect(refused.json.error.message).toMatch(/^This API key's hourly credit limit of 1\.5 credits would be exceeded \(1\.00\d+ used; this request holds 1\.\d+\)\. Nothing was charged\.$/);
        const nextHour = new Date();
        nextHour.setUTCMinutes(60, 0, 0);
        expect(refused.headers['x-key-limit-reset']).toBe(nextHour.toISOString());
        expect((await h.gw.admin('GET', `/admin/v1/accounts/${accountId}`)).json).toMatchObject({ balance_credits: before.balance_credits, held_credits: 0 });
        const notes = (await h.gw.admin('GET', `/admin/v1/accounts/${accountId}/notifications`)).json as Record<string, unknown>[];
        expect(notes).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'limit_reached', key_id: keyId, limit: 'hourly' })]));

        const bad = await h.gw.admin('PATCH', `/admin/v1/keys/${keyId}`, { hourly_limit_credits: -1 });
        expect(bad.status).toBe(400);
        expect(bad.json.error).toMatchObject({ code: 'validation_failed' });
        expect(bad.json.error.message).toMatch(/^hourly_limit_credits: /);
        const lifted = await h.gw.admin('PATCH', `/admin/v1/keys/${keyId}`, { hourly_limit_credits: null });
        expect(lifted.json).toMatchObject({ hourly_limit_credits: null });
        expect((await h.gw.api('/chat/completions', { key: secret, body })).status).toBe(200);
      });

      it('a rotated key keeps it; the key reads it on GET /api/v1/key', async () => {
        const { keyId } = await h.gw.account({ key: { hourly_limit_credits: 2 } });
        const rotated = await h.gw.admin('POST', `/admin/v1/keys/${keyId}/rotate`);
        expect(rotated.json).toMatchObject({ hourly_limit_credits: 2 });
        const own = await h.gw.api('/key', { key: rotated.json.key as string });
        expect(own.json).toMatchObject({ hourly_limit_credits: 2 });
      });

      it('the OpenAPI document carries its field in the key bodies and answers, with its description; the shipped one does not', async () => {
        const doc = (await h.gw.api('/openapi.json')).json as { components: { schemas: Record<string, { properties: Record<string, { description?: string }> }> } };
        for (const name of ['NewKey', 'KeyPatch', 'Key', 'IssuedKey']) {
          expect(doc.components.schemas[name]?.properties.hourly_limit_credits, name).toBeDefined();
        }
        expect(doc.components.schemas.Key?.properties.hourly_limit_credits?.description).toMatch(/hourly credit limit/);
        const shipped = buildOpenApiDocument('test') as typeof doc;
        expect(shipped.components.schemas.Key?.properties.hourly_limit_credits).toBeUndefined();
      });
    });
  });
}

describe('the test-only row in the derivations without a database', () => {
  it('the docs table gains its line', () => {
    expect(limitsDocTable(WITH_HOURLY)).toContain('| 5 | `key_hourly` | key (its family: the key and every key rotated from it) | the key\'s `hourly_limit_credits` | credits of the key family\'s runs (held, then corrected to cost) | UTC hour | 429 `api_key_limit_exceeded` + `X-Key-Limit-Reset` | `hourly_limit_credits` |');
  });

  it("its alert's e-mail names its period and when it frees up", () => {
    const periodStart = Date.UTC(2026, 10, 26, 9);
    const notification = { id: 1, accountId: 'a', keyId: 'k1', keyFamilyId: 'k1', kind: 'limit_reached' as const, limit: 'hourly', periodStart, threshold: 1, createdAt: periodStart, mail: 'pending' as const };
    const mail = mailText({ id: 1, accountId: 'a', to: 'a@example.com', accountName: 'Acme', notification, attempts: 0, leaseUntil: 0 }, 'ci');
    expect(mail.subject).toBe('Model Gateway: API key "ci" reached its hourly credit limit');
    expect(mail.text).toContain("it would have passed the key's hourly credit limit.\nThe limit frees up at 2026-11-26T10:00:00.000Z.");
  });

  it('the TypeScript decision refuses by it, after the daily and monthly limits and before the trial rules', () => {
    const facts: HoldFacts = {
      amount: 600_000, at: Date.now(), addressRuns: null,
      account: { balance: 10_000_000, held: 0, monthSettled: 0, hasPurchase: false, createdAt: 0, trialRuns: [], trialFailures: 5, settings: { monthlySpendingLimit: null } },
      key: { settings: { dailyLimit: null, monthlyLimit: null, hourlyLimit: 1_000_000 }, used: { hour: 500_000, day: 500_000, month: 500_000 } },
    };
    expect(holdRefusalOf(WITH_HOURLY, facts)).toEqual({ reason: 'key_limit', period: 'hourly', limit: 1_000_000, used: 500_000 });
    // Without the row, the trial rule refuses instead.
    expect(holdRefusalOf(HOLD_LIMITS, facts)).toEqual({ reason: 'trial', rule: 'failures_in_a_row' });
  });
});
