/**
 * Seeds the dashboard benchmark's database (bench/dashboard.ts): 50 accounts of 4 keys, `jobs`
 * chat jobs spread over the last 30 days (3 % failed and refunded), each with its hold and its
 * settle or refund ledger row and its row pending for the usage roller, as the money path
 * writes them, then the roller's own statements roll them all up; a few notifications. SQLite row
 * by row in batches, PostgreSQL in set-based SQL.
 */
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { startOfUtcMonth } from '../src/shared/time.ts';
import { postgresRollup, sqliteRollup } from '../src/store/sql/usage-pending.ts';

export const ACCOUNTS = 50;
export const KEYS_PER_ACCOUNT = 4;
const MODELS = ['gpt-test', 'gpt-reasoner', 'claude-test', 'claude-legacy', 'gemini-test', 'deepseek-test', 'gpt-mini', 'gemini-flash'];
const CODES = ['upstream_error', 'provider_timeout', 'model_unavailable', 'invalid_api_key'];
const DAY = 86_400_000;

/** The spending limit's counter of this month's settled charges, as the settlements would have left it. */
const MONTH_COUNTERS = `UPDATE accounts SET month_start = $1, month_settled = coalesce((SELECT sum(l.amount) FROM ledger l
  WHERE l.account_id = accounts.id AND l.kind = 'settle' AND l.created_at >= $1), 0)`;

export interface Seeded {
  accountId: string;
  keyId: string;
}

const accountId = (a: number) => `acct-${String(a).padStart(4, '0')}`;
export const SEEDED: Seeded = { accountId: accountId(7), keyId: `${accountId(3)}-key-1` };

function report(label: string, started: number): void {
  console.log(`${label} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

export function seedSqlite(file: string, jobs: number, now: number): Seeded {
  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const keys: { id: string; account: string }[] = [];
  const insertAccount = db.prepare('INSERT INTO accounts (id, name, email, created_at, has_purchase, billing_emails, balance, held) VALUES (?, ?, ?, ?, 1, 1, 1000000000000, 0)');
  const insertKey = db.prepare(
    `INSERT INTO api_keys (id, account_id, family_id, hash, prefix, name, scopes, requests_per_minute, ip_allowlist, warning_threshold, email_alerts, created_at)
     VALUES (?, ?, ?, ?, 'svc_live_bench', ?, '["read","chat"]', 600, '[]', 0.8, 0, ?)`,
  );
  const insertNotification = db.prepare(
    `INSERT INTO notifications (account_id, key_id, key_family_id, kind, limit_period, period_start, threshold, created_at) VALUES (?, ?, ?, 'warning', 'day', ?, 0.8, ?)`,
  );
  db.transaction(() => {
    for (let a = 0; a < ACCOUNTS; a++) {
      const id = accountId(a);
      insertAccount.run(id, `Bench account ${a}`, `ops${a}@bench.test`, now - 60 * DAY);
      for (let k = 0; k < KEYS_PER_ACCOUNT; k++) {
        const keyId = `${id}-key-${k}`;
        keys.push({ id: keyId, account: id });
        insertKey.run(keyId, id, keyId, `hash-${keyId}`, `key ${k}`, now - 60 * DAY);
        for (let d = 1; d <= 5; d++) insertNotification.run(id, keyId, keyId, now - d * DAY, now - d * DAY);
      }
    }
  })();
  const insertJob = db.prepare(
    `INSERT INTO jobs (id, account_id, key_id, key_family_id, kind, model, status, held, cost, usage, error_code, instance_id, created_at, finished_at)
     VALUES (?, ?, ?, ?, 'chat', ?, ?, ?, ?, ?, ?, 'bench', ?, ?)`,
  );
  const insertLedger = db.prepare('INSERT INTO ledger (account_id, key_id, key_family_id, job_id, kind, amount, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const insertPending = db.prepare('INSERT INTO usage_pending (job_id, kind, amount) VALUES (?, ?, ?)');
  // mulberry32: evenly spread keys, times and sizes (an LCG computed in doubles repeated itself).
  let seed = 42;
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const started = performance.now();
  const BATCH = 50_000;
  for (let done = 0; done < jobs; done += BATCH) {
    db.transaction(() => {
      for (let i = done; i < Math.min(jobs, done + BATCH); i++) {
        const key = keys[Math.floor(random() * keys.length)] ?? keys[0];
        if (key === undefined) throw new Error('no keys');
        const created = now - Math.floor(random() * 30 * DAY);
        const failed = random() < 0.03;
        const prompt = 100 + Math.floor(random() * 2000);
        const completion = 20 + Math.floor(random() * 800);
        // A failed run is refunded: it costs 0 and has no usage.
        const cost = failed ? 0 : prompt * 125 + completion * 1000;
        const usage = failed ? null : JSON.stringify({ prompt_tokens: prompt, completion_tokens: completion });
        const id = `job-${String(i).padStart(8, '0')}`;
        const finished = created + 200 + Math.floor(random() * 3000);
        insertJob.run(
          id, key.account, key.id, key.id, MODELS[i % MODELS.length] ?? 'gpt-test', failed ? 'failed' : 'succeeded', 5_000_000, cost, usage,
          failed ? (CODES[i % CODES.length] ?? 'upstream_error') : null, created, finished,
        );
        insertLedger.run(key.account, key.id, key.id, id, 'hold', 5_000_000, created);
        // The closing row, and the job pending for the usage roller (as the closing movement writes them).
        insertLedger.run(key.account, key.id, key.id, id, failed ? 'refund' : 'settle', failed ? 5_000_000 : cost, finished);
        insertPending.run(id, failed ? 'refund' : 'settle', failed ? 0 : cost);
      }
    })();
  }
  report(`seeded ${jobs.toLocaleString('en-US')} jobs and their ledger rows`, started);
  const rolling = performance.now();
  const [createBatch, ...roll] = sqliteRollup();
  db.exec(createBatch as string);
  const upto = db.prepare('SELECT max(rowid) FROM usage_pending').pluck().get();
  db.transaction(() => {
    for (const text of roll) db.prepare(text).run(...(text.includes('?') ? [upto] : []));
  })();
  report('usage rolled up (the roller\'s statements)', rolling);
  db.prepare(MONTH_COUNTERS.replaceAll('$1', '?')).run(startOfUtcMonth(now), startOfUtcMonth(now));
  db.exec('ANALYZE');
  db.close();
  return SEEDED;
}

export async function seedPostgres(client: pg.Client, jobs: number, now: number): Promise<Seeded> {
  const started = performance.now();
  await client.query(`INSERT INTO accounts (id, name, email, created_at, has_purchase, billing_emails, balance, held)
    SELECT 'acct-' || lpad(a::text, 4, '0'), 'Bench account ' || a, 'ops' || a || '@bench.test', $1::bigint, 1, 1, 1000000000000, 0
    FROM generate_series(0, ${ACCOUNTS - 1}) a`, [now - 60 * DAY]);
  await client.query(`INSERT INTO api_keys (id, account_id, family_id, hash, prefix, name, scopes, requests_per_minute, ip_allowlist, warning_threshold, email_alerts, created_at)
    SELECT a.id || '-key-' || k, a.id, a.id || '-key-' || k, 'hash-' || a.id || '-key-' || k, 'svc_live_bench', 'key ' || k, '["read","chat"]', 600, '[]', 0.8, 0, a.created_at
    FROM accounts a, generate_series(0, ${KEYS_PER_ACCOUNT - 1}) k`);
  await client.query(`INSERT INTO notifications (account_id, key_id, key_family_id, kind, limit_period, period_start, threshold, created_at)
    SELECT account_id, id, id, 'warning', 'day', $1::bigint - d * ${DAY}, 0.8, $1::bigint - d * ${DAY} FROM api_keys, generate_series(1, 5) d`, [now]);
  await client.query('SELECT setseed(0.42)');
  const models = `(ARRAY[${MODELS.map((m) => `'${m}'`).join(',')}])`;
  const codes = `(ARRAY[${CODES.map((c) => `'${c}'`).join(',')}])`;
  await client.query(`INSERT INTO jobs (id, account_id, key_id, key_family_id, kind, model, status, held, cost, usage, error_code, instance_id, created_at, finished_at)
    SELECT 'job-' || lpad(i::text, 8, '0'), 'acct-' || lpad((k / ${KEYS_PER_ACCOUNT})::text, 4, '0'),
           'acct-' || lpad((k / ${KEYS_PER_ACCOUNT})::text, 4, '0') || '-key-' || (k % ${KEYS_PER_ACCOUNT}),
           'acct-' || lpad((k / ${KEYS_PER_ACCOUNT})::text, 4, '0') || '-key-' || (k % ${KEYS_PER_ACCOUNT}),
           'chat', ${models}[i % ${MODELS.length} + 1], CASE WHEN failed THEN 'failed' ELSE 'succeeded' END, 5000000,
           CASE WHEN failed THEN 0 ELSE p * 125 + c * 1000 END,
           CASE WHEN failed THEN NULL ELSE '{"prompt_tokens":' || p || ',"completion_tokens":' || c || '}' END,
           CASE WHEN failed THEN ${codes}[i % ${CODES.length} + 1] END, 'bench', created, created + 200 + lat
    FROM (SELECT i, floor(random() * ${ACCOUNTS * KEYS_PER_ACCOUNT})::int AS k, $1::bigint - floor(random() * ${30 * DAY})::bigint AS created,
                 random() < 0.03 AS failed, 100 + floor(random() * 2000)::int AS p, 20 + floor(random() * 800)::int AS c, floor(random() * 3000)::int AS lat
          FROM generate_series(0, ${jobs - 1}) i) s`, [now]);
  report(`seeded ${jobs.toLocaleString('en-US')} jobs`, started);
  const ledger = performance.now();
  await client.query(`INSERT INTO ledger (account_id, key_id, key_family_id, job_id, kind, amount, created_at)
    SELECT account_id, key_id, key_family_id, id, 'hold', held, created_at FROM jobs ORDER BY created_at`);
  // The closing rows, and each job pending for the usage roller (as the closing movement writes them).
  await client.query(`INSERT INTO ledger (account_id, key_id, key_family_id, job_id, kind, amount, created_at)
    SELECT account_id, key_id, key_family_id, id, CASE WHEN status = 'failed' THEN 'refund' ELSE 'settle' END,
           CASE WHEN status = 'failed' THEN held ELSE cost END, finished_at FROM jobs ORDER BY finished_at`);
  await client.query(`INSERT INTO usage_pending (job_id, kind, amount)
    SELECT id, CASE WHEN status = 'failed' THEN 'refund' ELSE 'settle' END, CASE WHEN status = 'failed' THEN 0 ELSE cost END FROM jobs`);
  report('ledger rows', ledger);
  const rolling = performance.now();
  await client.query(postgresRollup());
  report('usage rolled up (the roller\'s statement)', rolling);
  await client.query(MONTH_COUNTERS, [startOfUtcMonth(now)]);
  // Visibility maps for index-only scans, and statistics; these tables only, not the whole shared database.
  await client.query('VACUUM ANALYZE accounts, api_keys, notifications, jobs, ledger, usage_pending, usage_rollups, usage_key_hours, usage_key_days, usage_model_days, usage_model_hours, usage_code_days');
  return SEEDED;
}
