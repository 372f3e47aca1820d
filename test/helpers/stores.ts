/**
 * Stores for tests on both databases. PostgreSQL must be reachable (127.0.0.1:5432,
 * database `test`, or TEST_POSTGRES_URL): tests that use it fail, never skip, without it.
 * Each PostgreSQL store lives in its own schema; `another()` opens a second store on the
 * same database, as a second gateway process would.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';
import type { ApiKeyRecord, Store } from '../../src/store/types.ts';

export const PG_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestStore {
  store: Store;
  /** Another store on the same database (another process); closed by drop(). */
  another(): Promise<Store>;
  drop(): Promise<void>;
}

/** A fresh PostgreSQL schema; `open` runs in it. */
export async function postgresSchema(): Promise<{ url: string; client: pg.Client; drop: () => Promise<void> }> {
  const schema = `t_${randomUUID().replace(/-/g, '')}`;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`create schema ${schema}`);
  await client.query(`set search_path = ${schema}`);
  return {
    url: `${PG_URL}?schema=${schema}`,
    client,
    drop: async () => {
      await client.query(`drop schema ${schema} cascade`);
      await client.end();
    },
  };
}

async function postgresStore(): Promise<TestStore> {
  const schema = await postgresSchema();
  const stores = [await openStore(schema.url)];
  return {
    store: stores[0] as Store,
    another: async () => {
      const store = await openStore(schema.url);
      stores.push(store);
      return store;
    },
    drop: async () => {
      for (const store of stores) await store.close();
      await schema.drop();
    },
  };
}

async function sqliteStore(): Promise<TestStore> {
  const store = await openStore('sqlite::memory:');
  // One SQLite database has one gateway process: "another" is the same store.
  return { store, another: async () => store, drop: () => store.close() };
}

export const DIALECTS = [
  { name: 'sqlite', open: sqliteStore },
  { name: 'postgres', open: postgresStore },
] as const;

/** A database per dialect for a gateway under test to open itself (DATABASE_URL): fresh in-memory SQLite, or a fresh PostgreSQL schema. */
export const DATABASE_URLS = [
  { name: 'sqlite', open: async () => ({ url: 'sqlite::memory:', drop: async () => {} }) },
  {
    name: 'postgres',
    open: async () => {
      const schema = await postgresSchema();
      return { url: schema.url, drop: schema.drop };
    },
  },
] as const;

const DAY = 86_400_000;

/** An account with credits; trial accounts (no purchase) get a grant and are two days old unless told. */
export async function account(store: Store, options: { credits?: number; purchase?: boolean; createdAt?: number; email?: string | null } = {}): Promise<string> {
  const purchase = options.purchase ?? true;
  const created = await store.accounts.createAccount({
    name: 'a', email: options.email ?? null, createdAt: options.createdAt ?? Date.now() - 2 * DAY, hasPurchase: purchase, billingEmails: true,
  });
  if ((options.credits ?? 0) > 0) await store.accounts.addCredits(created.id, options.credits as number, purchase ? 'topup' : 'grant', Date.now());
  return created.id;
}

/** A key (and its family) on the account. */
export async function key(store: Store, accountId: string, settings: Partial<ApiKeyRecord> = {}): Promise<ApiKeyRecord> {
  const id = randomUUID();
  const record: ApiKeyRecord = {
    id, accountId, familyId: id, hash: randomUUID(), prefix: 'svc_live_x', name: 'k', scopes: ['chat'], requestsPerMinute: 600, ipAllowlist: [],
    dailyLimit: null, monthlyLimit: null, expiresAt: null, warningThreshold: 0.8, emailAlerts: false, createdAt: Date.now(), revokedAt: null,
    ...settings,
  };
  const created = await store.keys.createKey(record, 20, Date.now());
  if (!created.ok) throw new Error('too many keys');
  return record;
}

export interface HoldOptions {
  key?: ApiKeyRecord;
  at?: number;
  address?: string | null;
  counts?: boolean;
  instanceId?: string;
  jobId?: string;
}

/** A chat hold of `amount` micro-credits. */
export function hold(store: Store, accountId: string, amount: number, options: HoldOptions = {}) {
  return store.money.hold({
    jobId: options.jobId ?? randomUUID(), accountId, keyId: options.key?.id ?? null, keyFamilyId: options.key?.familyId ?? null,
    kind: 'chat', model: 'm', amount, at: options.at ?? Date.now(), instanceId: options.instanceId ?? 'i1',
    clientAddress: options.address ?? null, countsTowardKeyLimits: options.counts ?? true,
  });
}

/** The store's money, recomputed from its ledger: balance and open holds. */
export async function ledgerMoney(store: Store, accountId: string): Promise<{ balance: number; held: number }> {
  const rows = await store.accounts.listLedger(accountId, 100_000);
  const credited = rows.filter((r) => r.kind === 'topup' || r.kind === 'grant').reduce((s, r) => s + r.amount, 0);
  const settled = rows.filter((r) => r.kind === 'settle' || r.kind === 'payment_refund').reduce((s, r) => s + r.amount, 0);
  const closed = new Set(rows.filter((r) => r.kind === 'settle' || r.kind === 'refund').map((r) => r.jobId));
  const open = rows.filter((r) => r.kind === 'hold' && !closed.has(r.jobId)).reduce((s, r) => s + r.amount, 0);
  return { balance: credited - settled, held: open };
}

/** A store for the surrounding describe block (opened before its tests, dropped after), and on PostgreSQL two more processes' stores. */
export function storesFor(dialect: (typeof DIALECTS)[number]): { store: Store; stores: Store[]; opened: TestStore } {
  const context = {} as { store: Store; stores: Store[]; opened: TestStore };
  beforeAll(async () => {
    context.opened = await dialect.open();
    context.store = context.opened.store;
    context.stores = [context.store, await context.opened.another(), await context.opened.another()];
  });
  afterAll(async () => context.opened.drop());
  return context;
}
