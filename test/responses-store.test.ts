/**
 * Stored responses in the store (migration 110), on SQLite and PostgreSQL: a database of today's
 * main (every migration but 110, whose number sorts before ones already run) upgrades in place
 * with its money intact; a conversation is read back as its chain, oldest first, only within the
 * account and before expiry; a deleted or expired link ends it; the sweep deletes what expired.
 */
import { Kysely, sql } from 'kysely';
import { migrateOnly, upgradeInPlace } from './helpers/upgrade.ts';
import { describe, expect, it } from 'vitest';
import { openStore } from '../src/store/open-store.ts';
import type { StoredResponseRecord } from '../src/store/responses.ts';
import type { Store } from '../src/store/types.ts';

const now = Date.now();
const DAY = 86_400_000;

async function asTodaysMain(db: Kysely<unknown>, dialect: 'sqlite' | 'postgres', schema?: string): Promise<void> {
  await migrateOnly(db, dialect, (name) => !name.startsWith('110'), schema);
  await sql`INSERT INTO accounts
    (id, name, email, created_at, has_purchase, billing_emails, monthly_spending_limit, balance, held, month_start, month_settled, trial_runs, trial_failures)
    VALUES ('acc-a', 'A', NULL, ${now - DAY}, 1, 1, NULL, 7000000, 0, 0, 0, '', 0)`.execute(db);
}

const record = (id: string, previousId: string | null, accountId = 'acc-a', expiresAt = now + 30 * DAY): StoredResponseRecord => ({
  id, accountId, previousId, input: JSON.stringify([{ id: `msg_${id}`, type: 'message', role: 'user', content: `asked in ${id}` }]),
  output: JSON.stringify([{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `answered in ${id}` }] }]),
  response: JSON.stringify({ id }), createdAt: now, expiresAt,
});

async function checkStoredResponses(store: Store): Promise<void> {
  expect(await store.accounts.getAccount('acc-a')).toMatchObject({ balance: 7_000_000 });
  const { responses } = store;
  await responses.create(record('resp_1', null));
  await responses.create(record('resp_2', 'resp_1'));
  await responses.create(record('resp_3', 'resp_2'));
  await responses.create(record('resp_other', null, 'acc-b'));
  await responses.create(record('resp_old', null, 'acc-a', now - 1));
  expect((await responses.chain('resp_3', 'acc-a', now, 100)).map((r) => r.id)).toEqual(['resp_1', 'resp_2', 'resp_3']);
  expect((await responses.chain('resp_3', 'acc-a', now, 2)).map((r) => r.id)).toEqual(['resp_2', 'resp_3']);
  expect(await responses.chain('resp_3', 'acc-b', now, 100)).toEqual([]);
  expect(await responses.get('resp_other', 'acc-a', now)).toBeUndefined();
  expect(await responses.get('resp_old', 'acc-a', now)).toBeUndefined();
  expect((await responses.get('resp_2', 'acc-a', now))?.previousId).toBe('resp_1');
  // A deleted link: the chain stops at the response after it (whose previousId is not null).
  expect(await responses.delete('resp_2', 'acc-b')).toBe(false);
  expect(await responses.delete('resp_2', 'acc-a')).toBe(true);
  expect((await responses.chain('resp_3', 'acc-a', now, 100)).map((r) => [r.id, r.previousId])).toEqual([['resp_3', 'resp_2']]);
  // The sweep deletes what expired, and only that.
  expect(await responses.deleteExpired(now)).toBe(1);
  expect(await responses.get('resp_1', 'acc-a', now)).toBeDefined();
  expect(await responses.deleteExpired(now + 31 * DAY)).toBe(3);
}

describe("stored responses: a database of today's main upgrades in place", () => {
  const check = async (url: string) => {
    const store = await openStore(url);
    try {
      await checkStoredResponses(store);
    } finally {
      await store.close();
    }
  };

  it('SQLite', async () => {
    await upgradeInPlace('sqlite', asTodaysMain, check);
  });

  it('PostgreSQL', async () => {
    await upgradeInPlace('postgres', asTodaysMain, check);
  });
});
