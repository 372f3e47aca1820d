/**
 * Migration 096: the dashboard's usage counts cache reads and writes (DECISIONS.md "Prompt
 * caching, billed exactly"): `cache_read_tokens` and `cache_write_tokens` (every lifetime) on the
 * hourly rollups and the key totals the charts read, 0 for what was rolled up before (no run
 * reported them apart until then). Adding a column with a constant default rewrites no row, on
 * SQLite or PostgreSQL. The usage roller fills them (usage-rollup-sql.ts).
 */
import type { Kysely, Migration } from 'kysely';

const TABLES = ['usage_rollups', 'usage_key_hours', 'usage_key_days'];
const COLUMNS = ['cache_read_tokens', 'cache_write_tokens'];

export const usageCacheTokensMigration: Migration = {
  async up(db: Kysely<unknown>) {
    for (const table of TABLES) {
      for (const column of COLUMNS) await db.schema.alterTable(table).addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0)).execute();
    }
  },
};
