/**
 * DATABASE_URL → a migrated Store: `sqlite:PATH`, `sqlite::memory:` or `postgres://…`.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Store } from './types.ts';
import { SqlStore } from './sql/sql-store.ts';
import { SqliteStore } from './sql/sqlite-store.ts';
import type { Database } from './sql/schema.ts';

export async function openStore(databaseUrl: string): Promise<Store> {
  const store = databaseUrl.startsWith('sqlite:') ? openSqlite(databaseUrl.slice('sqlite:'.length)) : openPostgres(databaseUrl);
  await store.migrate();
  return store;
}

function openSqlite(path: string): SqliteStore {
  const file = path === ':memory:' ? ':memory:' : path;
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const database = new BetterSqlite3(file);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  return new SqliteStore(database, file);
}

function openPostgres(url: string): SqlStore {
  // int8 (bigint) columns hold micro-credits and milliseconds, all far below 2^53.
  pg.types.setTypeParser(20, (value: string) => Number(value));
  // `?schema=NAME` keeps the gateway's tables in their own schema (tests use one per run).
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema');
  parsed.searchParams.delete('schema');
  const pool = new pg.Pool({
    connectionString: parsed.toString(),
    max: 10,
    ...(schema === null ? {} : { options: `-c search_path=${schema.replace(/[^a-zA-Z0-9_]/g, '')}` }),
  });
  return new SqlStore('postgres', (onQuery) =>
    new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: () => onQuery() }),
  );
}
