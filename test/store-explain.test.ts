/**
 * The money statements' PostgreSQL plans on a database with some volume: every row the
 * path touches is found by its key, in the plan a prepared statement keeps after five
 * executions as well (docs/money-path.md shows the full plans; bench/money-path.ts --explain
 * prints them).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/store/open-store.ts';
import { closeMovement } from '../src/store/sql/money/close-movement.ts';
import { holdMovement, leanHoldMovement } from '../src/store/sql/money/hold-movement.ts';
import { postgresStatement, type AnyMovement } from '../src/store/sql/money/movement.ts';
import type { Store } from '../src/store/types.ts';
import { postgresSchema } from './helpers/stores.ts';

describe('money statements on PostgreSQL', () => {
  let db: Awaited<ReturnType<typeof postgresSchema>>;
  let store: Store;
  beforeAll(async () => {
    db = await postgresSchema();
    store = await openStore(db.url);
    const n = 5_000;
    await db.client.query(`insert into accounts (id, name, email, created_at, has_purchase, billing_emails, balance, held)
      select 'a' || g, 'n', null, 0, 1, 1, 1000000, 0 from generate_series(1, ${n}) g`);
    await db.client.query(`insert into key_families (family_id, account_id, day_start, day_used, month_start, month_used)
      select 'k' || g, 'a' || g, 0, 0, 0, 0 from generate_series(1, ${n}) g`);
    await db.client.query(`insert into api_keys (id, account_id, family_id, hash, prefix, name, scopes, requests_per_minute, ip_allowlist,
      warning_threshold, email_alerts, created_at) select 'k' || g, 'a' || g, 'k' || g, 'h' || g, 'p', 'n', 'chat', 600, '[]', 0.8, 0, 0
      from generate_series(1, ${n}) g`);
    await db.client.query(`insert into jobs (id, account_id, key_id, key_family_id, kind, model, status, held, cost, instance_id, counts_key, created_at)
      select 'j' || g, 'a' || (g % ${n} + 1), 'k' || (g % ${n} + 1), 'k' || (g % ${n} + 1), 'chat', 'm',
        case when g % 10 = 0 then 'processing' else 'succeeded' end, 100, 50, 'i', 1, g from generate_series(1, ${5 * n}) g`);
    await db.client.query('analyze');
  }, 120_000);
  afterAll(async () => {
    await store.close();
    await db.drop();
  });

  const newHold = {
    jobId: randomUUID(), accountId: 'a7', keyId: 'k7', keyFamilyId: 'k7', kind: 'chat', model: 'm', amount: 10, at: Date.now(),
    instanceId: 'i', clientAddress: '198.51.100.7', countsTowardKeyLimits: true,
  };
  const inputs: [string, AnyMovement, unknown][] = [
    ['hold', holdMovement as AnyMovement, newHold],
    ['hold_lean', leanHoldMovement as AnyMovement, newHold],
    ['close', closeMovement as AnyMovement, {
      jobId: 'j70', refund: false, status: 'succeeded', cost: 1, usage: null, output: null, errorCode: null, at: Date.now(), failure: false,
    }],
  ];

  for (const [name, movement, input] of inputs) {
    it(`${name}: one statement whose every table access is by key, in the custom and in the generic plan`, async () => {
      const { text, order } = postgresStatement(movement);
      const params = movement.bind(input);
      const values = order.map((n) => params[n] ?? null);
      const custom = (await db.client.query(`explain (costs off) ${text}`, values)).rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
      const literal = (v: unknown) => (v === null ? 'null' : typeof v === 'number' ? String(v) : db.client.escapeLiteral(String(v)));
      await db.client.query('set plan_cache_mode = force_generic_plan');
      await db.client.query(`prepare m_${name} as ${text}`);
      const generic = (await db.client.query(`explain (costs off) execute m_${name}(${values.map(literal).join(', ')})`)).rows
        .map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
      await db.client.query('reset plan_cache_mode');
      for (const plan of [custom, generic]) {
        expect(plan).not.toMatch(/Seq Scan on (accounts|jobs|key_families|api_keys|ledger|notifications|mail_outbox|trial_addresses)/);
        if (name === 'close') expect(plan).toMatch(/Index Scan using jobs_pkey on jobs/);
        if (name.startsWith('hold')) expect(plan).toMatch(/LockRows[\s\S]*Index Scan using accounts_pkey on accounts a[\s\S]*Index Scan using key_families_pkey on key_families f/);
      }
    });
  }
});
