/**
 * Migration 110: stored responses of the Responses route (src/store/responses.ts): each
 * response's own input items, output and answer as JSON, its account, the response it
 * continues and its expiry. Only adds a table, so a database of earlier versions upgrades
 * in place.
 */
import type { Kysely, Migration } from 'kysely';

export const storedResponsesMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('stored_responses')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('previous_id', 'text')
      .addColumn('input', 'text', (c) => c.notNull())
      .addColumn('output', 'text', (c) => c.notNull())
      .addColumn('response', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('stored_responses_expires_at').on('stored_responses').column('expires_at').execute();
  },
};
