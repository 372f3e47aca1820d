/**
 * The money path alone, without HTTP: `npx tsx bench/money-path.ts`
 *   [--explain]            print EXPLAIN of every money statement on PostgreSQL (docs/money-path.md)
 *   [--ops N] [--concurrency C] [--accounts A]  hold+settle pairs on A accounts (default 1, round-robin), on SQLite (file) and PostgreSQL,
 *                          with group commit and (on PostgreSQL) without it
 * PostgreSQL: TEST_POSTGRES_URL or postgres://postgres@127.0.0.1:5432/test, in a schema of its own.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openStore, type StoreOptions } from '../src/store/open-store.ts';
import { closeMovement, type Closing } from '../src/store/sql/money/close-movement.ts';
import { holdMovement } from '../src/store/sql/money/hold-movement.ts';
import { postgresStatement, type AnyMovement } from '../src/store/sql/money/movement.ts';
import type { NewHold } from '../src/store/money-contract.ts';
import type { Store } from '../src/store/types.ts';

const PG_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};

async function schema(): Promise<{ url: string; client: pg.Client; drop: () => Promise<void> }> {
  const name = `bench_${randomUUID().replace(/-/g, '')}`;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`create schema ${name}`);
  await client.query(`set search_path = ${name}`);
  return { url: `${PG_URL}?schema=${name}`, client, drop: async () => {
    await client.query(`drop schema ${name} cascade`);
    await client.end();
  } };
}

async function payer(store: Store): Promise<{ accountId: string; keyId: string }> {
  const account = await store.accounts.createAccount({ name: 'bench', email: 'ops@example.test', createdAt: 0, hasPurchase: true, billingEmails: true });
  await store.accounts.addCredits(account.id, 1e15, 'topup', Date.now());
  const keyId = randomUUID();
  await store.keys.createKey({
    id: keyId, accountId: account.id, familyId: keyId, hash: randomUUID(), prefix: 'svc_live_b', name: 'k', scopes: ['chat'], requestsPerMinute: 6000,
    ipAllowlist: [], dailyLimit: 1e15, monthlyLimit: null, expiresAt: null, warningThreshold: 0.8, emailAlerts: true, createdAt: 0, revokedAt: null,
  }, 20, Date.now());
  return { accountId: account.id, keyId };
}

const newHold = (accountId: string, keyId: string): NewHold => ({
  jobId: randomUUID(), accountId, keyId, keyFamilyId: keyId, kind: 'chat', model: 'm', amount: 1_000, at: Date.now(), instanceId: 'bench',
  clientAddress: '198.51.100.1', countsTowardKeyLimits: true,
});

async function throughput(label: string, url: string, options: StoreOptions, ops: number, concurrency: number, accounts: number): Promise<void> {
  const store = await openStore(url, options);
  const payers = await Promise.all(Array.from({ length: accounts }, () => payer(store)));
  let started = 0;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (started < ops) {
      const { accountId, keyId } = payers[started++ % accounts] as { accountId: string; keyId: string };
      const hold = newHold(accountId, keyId);
      const held = await store.money.hold(hold);
      if (!held.ok) throw new Error(JSON.stringify(held));
      await store.money.settle(hold.jobId, { cost: 500, usage: { prompt_tokens: 3, completion_tokens: 4 }, status: 'succeeded', at: Date.now() });
    }
  }));
  const seconds = (performance.now() - t0) / 1000;
  // This process's CPU per pair: on SQLite all of the work, whatever else the machine runs.
  const cpu = process.cpuUsage(cpu0);
  const cpuPerPair = (cpu.user + cpu.system) / ops;
  for (const [i, { accountId }] of payers.entries()) {
    const account = await store.accounts.getAccount(accountId);
    const pairs = Math.floor(ops / accounts) + (i < ops % accounts ? 1 : 0);
    if (account?.held !== 0 || account.balance !== 1e15 - pairs * 500) throw new Error(`money does not add up: ${JSON.stringify(account)}`);
  }
  console.log(`| ${label} | ${accounts} | ${concurrency} | ${ops} | ${Math.round(ops / seconds)} | ${Math.round(cpuPerPair)} |`);
  await store.close();
}

async function explain(): Promise<void> {
  const db = await schema();
  const store = await openStore(db.url);
  // Some volume, so that the planner's choices are the ones of a used database.
  const accounts = await Promise.all(Array.from({ length: 1_000 }, () => payer(store)));
  for (let i = 0; i < 5_000; i++) {
    const { accountId, keyId } = accounts[i % accounts.length] as { accountId: string; keyId: string };
    const hold = newHold(accountId, keyId);
    await store.money.hold(hold);
    if (i % 10 !== 0) await store.money.settle(hold.jobId, { cost: 500, usage: { prompt_tokens: 1 }, status: 'succeeded', at: Date.now() });
  }
  await db.client.query('analyze');
  const { accountId, keyId } = accounts[0] as { accountId: string; keyId: string };
  const inputs: [AnyMovement, unknown][] = [
    [holdMovement as AnyMovement, newHold(accountId, keyId)],
    [closeMovement as AnyMovement, { jobId: randomUUID(), refund: false, status: 'succeeded', cost: 1, usage: null, output: null, errorCode: null, at: Date.now(), failure: false } satisfies Closing],
  ];
  for (const generic of [false, true]) {
    await db.client.query(`set plan_cache_mode = ${generic ? 'force_generic_plan' : 'auto'}`);
    for (const [movement, input] of inputs) {
      const { text, order } = postgresStatement(movement);
      const params = movement.bind(input);
      const values = order.map((name) => params[name] ?? null);
      const literal = (v: unknown) => (v === null ? 'null' : typeof v === 'number' ? String(v) : db.client.escapeLiteral(String(v)));
      const plan = generic
        ? (await db.client.query(`prepare m as ${text}`), await db.client.query(`explain (costs off) execute m(${values.map(literal).join(', ')})`))
        : await db.client.query(`explain (costs off) ${text}`, values);
      if (generic) await db.client.query('deallocate m');
      console.log(`\n#### ${movement.name}${generic ? ' (generic plan, as a prepared statement runs after five executions)' : ''}\n\`\`\`\n${plan.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n')}\n\`\`\``);
    }
  }
  await store.close();
  await db.drop();
}

if (process.argv.includes('--explain')) {
  await explain();
} else {
  const ops = arg('--ops', 5_000);
  const concurrency = arg('--concurrency', 50);
  const accounts = arg('--accounts', 1);
  console.log('| store | accounts | concurrent pairs | hold+settle pairs | pairs/s | CPU µs per pair (this process) |\n|---|---|---|---|---|---|');
  const dir = mkdtempSync(join(tmpdir(), 'money-bench-'));
  await throughput('SQLite (file, WAL)', `sqlite:${join(dir, 'bench.db')}`, {}, ops, concurrency, accounts);
  rmSync(dir, { recursive: true, force: true });
  for (const groupCommit of [true, false]) {
    const db = await schema();
    await throughput(`PostgreSQL, ${groupCommit ? 'group commit (pipelined)' : 'one statement per movement, no group commit'}`, db.url, { groupCommit }, ops, concurrency, accounts);
    await db.drop();
  }
}
