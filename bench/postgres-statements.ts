/**
 * The money statements alone on PostgreSQL (docs/money-path.md "Where PostgreSQL's time goes"):
 *   npx tsx bench/postgres-statements.ts [--pairs N] [--rounds R] [--batch B] [--without-log-indexes] [--without-foreign-keys]
 *     the CPU of one PostgreSQL backend (from /proc) per hold+close pair, the full hold against the lean
 *     one in interleaved rounds, B movements per transaction; with --without-log-indexes the request
 *     log's indexes on jobs are dropped first (what they cost), with --without-foreign-keys the foreign
 *     keys of jobs and ledger
 *   npx tsx bench/postgres-statements.ts --sequential [--pairs N]
 *     one movement at a time through the store: p50 of a hold, a close and a bare round trip
 * PostgreSQL on this machine (it reads the backend's /proc entry): TEST_POSTGRES_URL or
 * postgres://postgres@127.0.0.1:5432/test, in a schema of its own, dropped afterwards.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { openStore } from '../src/store/open-store.ts';
import type { NewHold } from '../src/store/money-contract.ts';
import { closeMovement, type Closing } from '../src/store/sql/money/close-movement.ts';
import { holdMovement, leanHoldMovement } from '../src/store/sql/money/hold-movement.ts';
import { postgresStatement, type AnyMovement } from '../src/store/sql/money/movement.ts';

const PG_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};
const LOG_INDEXES = ['jobs_log', 'jobs_log_account', 'jobs_log_error', 'jobs_log_key', 'jobs_log_model', 'jobs_log_status'];

const schema = `bench_${randomUUID().replace(/-/g, '')}`;
const admin = new pg.Client({ connectionString: PG_URL });
await admin.connect();
await admin.query(`create schema ${schema}`);
const store = await openStore(`${PG_URL}?schema=${schema}`);
const account = await store.accounts.createAccount({ name: 'bench', email: null, createdAt: 0, hasPurchase: true, billingEmails: true });
await store.accounts.addCredits(account.id, 1e15, 'topup', Date.now());
const keyId = randomUUID();
await store.keys.createKey({
  id: keyId, accountId: account.id, familyId: keyId, hash: randomUUID(), prefix: 'svc_live_b', name: 'k', scopes: ['chat'], requestsPerMinute: 6000,
  ipAllowlist: [], dailyLimit: null, monthlyLimit: null, expiresAt: null, warningThreshold: 0.8, emailAlerts: false, createdAt: 0, revokedAt: null,
}, 20, Date.now());
const newHold = (): NewHold => ({
  jobId: randomUUID(), accountId: account.id, keyId, keyFamilyId: keyId, kind: 'chat', model: 'm', amount: 1_000, at: Date.now(), instanceId: 'bench',
  clientAddress: null, countsTowardKeyLimits: true,
});
const closing = (jobId: string): Closing => ({ jobId, refund: false, status: 'succeeded', cost: 500, usage: null, output: null, errorCode: null, at: Date.now(), failure: false });
const pairs = arg('--pairs', 3_000);
const p50 = (values: number[]) => (values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0).toFixed(3);

if (process.argv.includes('--sequential')) {
  const hold: number[] = [];
  const close: number[] = [];
  const trip: number[] = [];
  const raw = new pg.Client({ connectionString: PG_URL });
  await raw.connect();
  for (let i = 0; i < pairs; i++) {
    const h = newHold();
    const t0 = performance.now();
    await store.money.hold(h);
    const t1 = performance.now();
    await store.money.settle(h.jobId, { cost: 500, usage: { prompt_tokens: 1 }, status: 'succeeded', at: Date.now() });
    const t2 = performance.now();
    await raw.query('select 1');
    const t3 = performance.now();
    if (i >= 100) {
      hold.push(t1 - t0);
      close.push(t2 - t1);
      trip.push(t3 - t2);
    }
  }
  console.log(`one at a time, p50 of ${hold.length}: hold ${p50(hold)} ms, close ${p50(close)} ms, round trip (select 1) ${p50(trip)} ms`);
  await raw.end();
} else {
  if (process.argv.includes('--without-log-indexes')) for (const index of LOG_INDEXES) await admin.query(`drop index ${schema}.${index}`);
  if (process.argv.includes('--without-foreign-keys')) {
    for (const table of ['jobs', 'ledger']) {
      const keys = await admin.query<{ conname: string }>(`select conname from pg_constraint where conrelid = '${schema}.${table}'::regclass and contype = 'f'`);
      for (const { conname } of keys.rows) await admin.query(`alter table ${schema}.${table} drop constraint ${conname}`);
    }
  }
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`set search_path = ${schema}`);
  const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid;
  /** The backend's user + system CPU in µs (clock ticks of 10 ms). */
  const cpu = () => {
    const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  };
  const run = (movement: AnyMovement, input: unknown) => {
    const { text, order } = postgresStatement(movement);
    const params = movement.bind(input);
    return client.query({ name: movement.name, text, values: order.map((name) => params[name] ?? null) });
  };
  const batch = arg('--batch', 10);
  const round = async (hold: AnyMovement) => {
    let holding = 0;
    let closing_ = 0;
    for (let done = 0; done < pairs; done += batch) {
      const ids: string[] = [];
      const t0 = cpu();
      await client.query('BEGIN');
      for (let i = 0; i < batch; i++) {
        const h = newHold();
        await run(hold, h);
        ids.push(h.jobId);
      }
      await client.query('COMMIT');
      const t1 = cpu();
      await client.query('BEGIN');
      for (const id of ids) await run(closeMovement as AnyMovement, closing(id));
      await client.query('COMMIT');
      holding += t1 - t0;
      closing_ += cpu() - t1;
    }
    return `${((holding + closing_) / pairs).toFixed(0)} µs (hold ${(holding / pairs).toFixed(0)}, close ${(closing_ / pairs).toFixed(0)})`;
  };
  await round(holdMovement as AnyMovement);
  await round(leanHoldMovement as AnyMovement);
  for (let r = 0; r < arg('--rounds', 3); r++) {
    const full = await round(holdMovement as AnyMovement);
    const lean = await round(leanHoldMovement as AnyMovement);
    console.log(`round ${r}: PostgreSQL backend CPU per hold+close pair, full hold ${full}, lean hold ${lean} (${pairs} pairs, ${batch} movements per transaction)`);
  }
  await client.end();
}
await store.close();
await admin.query(`drop schema ${schema} cascade`);
await admin.end();
