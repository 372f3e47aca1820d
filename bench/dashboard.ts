/**
 * Dashboard benchmark: seeds 1,000,000 jobs (and their hourly rollups) into a SQLite file, then
 * times every dashboard API answer through a real gateway. Each must answer under 200 ms.
 *
 *   npm run bench:dashboard            # 1,000,000 jobs; results in bench/results/dashboard.json
 *   npm run bench:dashboard -- --jobs 100000
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { loadConfig } from '../src/config.ts';
import { createGateway } from '../src/gateway.ts';
import { openStore } from '../src/store/open-store.ts';

const TOKEN = 'bench-admin-token-0123456789';
const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? undefined : process.argv[i + 1];
};
const JOBS = Number(arg('jobs') ?? 1_000_000);
const ACCOUNTS = 50;
const KEYS_PER_ACCOUNT = 4;
const MODELS = ['gpt-test', 'gpt-reasoner', 'claude-test', 'claude-legacy', 'gemini-test', 'deepseek-test', 'gpt-mini', 'gemini-flash'];
const CODES = ['upstream_error', 'provider_timeout', 'model_unavailable', 'invalid_api_key'];
const DAY = 86_400_000;
const BUDGET_MS = 200;

async function seed(file: string): Promise<{ accountId: string; keyId: string; now: number }> {
  const store = await openStore(`sqlite:${file}`);
  await store.close();
  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const now = Date.now();
  const accounts: string[] = [];
  const keys: { id: string; account: string }[] = [];
  const insertAccount = db.prepare('INSERT INTO accounts (id, name, email, created_at, has_purchase, billing_emails, balance, held) VALUES (?, ?, ?, ?, 1, 1, 1000000000000, 0)');
  const insertKey = db.prepare(
    `INSERT INTO api_keys (id, account_id, family_id, hash, prefix, name, scopes, requests_per_minute, ip_allowlist, warning_threshold, email_alerts, created_at)
     VALUES (?, ?, ?, ?, 'svc_live_bench', ?, '["read","chat"]', 600, '[]', 0.8, 0, ?)`,
  );
  db.transaction(() => {
    for (let a = 0; a < ACCOUNTS; a++) {
      const id = `acct-${String(a).padStart(4, '0')}`;
      accounts.push(id);
      insertAccount.run(id, `Bench account ${a}`, `ops${a}@bench.test`, now - 60 * DAY);
      for (let k = 0; k < KEYS_PER_ACCOUNT; k++) {
        const keyId = `${id}-key-${k}`;
        keys.push({ id: keyId, account: id });
        insertKey.run(keyId, id, keyId, `hash-${keyId}`, `key ${k}`, now - 60 * DAY);
      }
    }
  })();
  const insertJob = db.prepare(
    `INSERT INTO jobs (id, account_id, key_id, key_family_id, kind, model, status, held, cost, usage, error_code, instance_id, created_at, finished_at)
     VALUES (?, ?, ?, ?, 'chat', ?, ?, ?, ?, ?, ?, 'bench', ?, ?)`,
  );
  let rnd = 42;
  const random = () => ((rnd = (rnd * 1103515245 + 12345) % 2147483648) / 2147483648);
  const started = performance.now();
  const BATCH = 50_000;
  for (let done = 0; done < JOBS; done += BATCH) {
    db.transaction(() => {
      for (let i = done; i < Math.min(JOBS, done + BATCH); i++) {
        const key = keys[Math.floor(random() * keys.length)] ?? keys[0];
        if (key === undefined) throw new Error('no keys');
        const created = now - Math.floor(random() * 30 * DAY);
        const failed = random() < 0.03;
        const prompt = 100 + Math.floor(random() * 2000);
        const completion = 20 + Math.floor(random() * 800);
        // A failed run is refunded: it costs 0 and has no usage.
        const cost = failed ? 0 : prompt * 125 + completion * 1000;
        const usage = failed ? null : JSON.stringify({ prompt_tokens: prompt, completion_tokens: completion });
        insertJob.run(
          `job-${String(i).padStart(8, '0')}`, key.account, key.id, key.id, MODELS[i % MODELS.length] ?? 'gpt-test',
          failed ? 'failed' : 'succeeded', 5_000_000, cost, usage,
          failed ? (CODES[i % CODES.length] ?? 'upstream_error') : null, created, created + 200 + Math.floor(random() * 3000),
        );
      }
    })();
  }
  console.log(`seeded ${JOBS.toLocaleString('en-US')} jobs in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  // The rollups the ledger trigger would have written with each settlement, computed once here.
  const rolled = performance.now();
  db.exec(`INSERT INTO usage_rollups (hour, account_id, key_id, model, code, requests, credits, prompt_tokens, completion_tokens)
    SELECT (created_at / 3600000) * 3600000, account_id, coalesce(key_id, ''), model, coalesce(error_code, ''), count(*),
           sum(coalesce(cost, 0)), sum(coalesce(json_extract(usage, '$.prompt_tokens'), 0)),
           sum(coalesce(json_extract(usage, '$.completion_tokens'), 0))
    FROM jobs GROUP BY 1, 2, 3, 4, 5`);
  const rows = (db.prepare('SELECT count(*) AS n FROM usage_rollups').get() as { n: number }).n;
  console.log(`rolled up into ${rows.toLocaleString('en-US')} hourly rows in ${((performance.now() - rolled) / 1000).toFixed(1)} s`);
  db.exec('ANALYZE');
  db.close();
  return { accountId: accounts[7] ?? '', keyId: keys[13]?.id ?? '', now };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-dash-bench-'));
  const file = join(dir, 'gateway.db');
  try {
    const { accountId, keyId, now } = await seed(file);
    const gateway = await createGateway(loadConfig({ DATABASE_URL: `sqlite:${file}`, ADMIN_TOKEN: TOKEN, LOG_LEVEL: 'silent', PORT: '0', HOST: '127.0.0.1' }));
    await gateway.app.listen({ port: 0, host: '127.0.0.1' });
    const address = gateway.app.server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    const base = `http://127.0.0.1:${address.port}`;
    const get = async (path: string) => {
      const response = await fetch(base + path, { headers: { authorization: `Bearer ${TOKEN}` } });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`${path}: ${response.status} ${text}`);
      return text;
    };
    const page = JSON.parse(await get('/admin/v1/jobs?limit=50')) as { next_cursor: string };
    const iso = (ms: number) => new Date(ms).toISOString();
    const paths: [string, string][] = [
      ['overview, last 24 hours (hourly)', `/admin/v1/usage?from=${iso(now - DAY)}&to=${iso(now)}`],
      ['overview, last 30 days (daily)', `/admin/v1/usage?from=${iso(now - 30 * DAY)}&to=${iso(now)}&bucket=day`],
      ['overview, last 30 days (hourly)', `/admin/v1/usage?from=${iso(now - 30 * DAY)}&to=${iso(now)}&bucket=hour`],
      ['one account, last 30 days (daily)', `/admin/v1/usage?from=${iso(now - 30 * DAY)}&to=${iso(now)}&bucket=day&account_id=${accountId}`],
      ['request log, first page', '/admin/v1/jobs?limit=50'],
      ['request log, next page (cursor)', `/admin/v1/jobs?limit=50&cursor=${page.next_cursor}`],
      ['request log, one account', `/admin/v1/jobs?limit=50&account_id=${accountId}`],
      ['request log, one key', `/admin/v1/jobs?limit=50&key_id=${keyId}`],
      ['request log, one model', '/admin/v1/jobs?limit=50&model=claude-test'],
      ['request log, one error code', '/admin/v1/jobs?limit=50&code=provider_timeout'],
      ['request log, failed', '/admin/v1/jobs?limit=50&status=failed'],
      ['request log, key + model + code', `/admin/v1/jobs?limit=50&key_id=${keyId}&model=gpt-test&code=upstream_error`],
      ['request log CSV, one key (5,000 rows)', `/admin/v1/jobs.csv?key_id=${keyId}&model=gpt-test`],
      ['accounts, search', '/admin/v1/accounts?q=account%204'],
      ['accounts, newest 50', '/admin/v1/accounts'],
      ['account', `/admin/v1/accounts/${accountId}`],
      ['account keys', `/admin/v1/accounts/${accountId}/keys`],
      ['key usage (day, month)', `/admin/v1/keys/${keyId}/usage`],
      ['account ledger', `/admin/v1/accounts/${accountId}/ledger?limit=20`],
    ];
    const results: { name: string; median_ms: number; max_ms: number; bytes: number; ok: boolean }[] = [];
    for (const [name, path] of paths) {
      const times: number[] = [];
      let bytes = 0;
      for (let i = 0; i < 7; i++) {
        const t = performance.now();
        bytes = (await get(path)).length;
        times.push(performance.now() - t);
      }
      times.sort((a, b) => a - b);
      const median = times[3] ?? 0;
      const max = times.at(-1) ?? 0;
      results.push({ name, median_ms: Math.round(median * 10) / 10, max_ms: Math.round(max * 10) / 10, bytes, ok: median < BUDGET_MS });
      console.log(`${median < BUDGET_MS ? 'ok  ' : 'SLOW'} ${name.padEnd(42)} median ${median.toFixed(1).padStart(7)} ms  max ${max.toFixed(1).padStart(7)} ms  ${bytes} bytes`);
    }
    await gateway.close();
    mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
    writeFileSync(new URL('./results/dashboard.json', import.meta.url), JSON.stringify({ jobs: JOBS, budget_ms: BUDGET_MS, results }, null, 2) + '\n');
    if (results.some((r) => !r.ok)) process.exitCode = 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
