/**
 * A database of an earlier main upgraded in place: `makeOld` builds it (migrations and rows) on a
 * fresh SQLite file or PostgreSQL schema, through a Kysely of its own; then `check` opens the store
 * on it by its URL, which runs the forward migrations.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { migrationProvider } from '../../src/store/sql/migrations/index.ts';
import { postgresSchema } from './stores.ts';

export type Dialect = 'sqlite' | 'postgres';
export type MakeOld = (db: Kysely<unknown>, dialect: Dialect, schema?: string) => Promise<void>;

/** Runs the migrations whose names `keep` lets through, as an earlier main had them. */
export async function migrateOnly(db: Kysely<unknown>, dialect: Dialect, keep: (name: string) => boolean, schema?: string): Promise<void> {
  const all = migrationProvider(dialect);
  const provider = { getMigrations: async () => Object.fromEntries(Object.entries(await all.getMigrations()).filter(([name]) => keep(name))) };
  const { error } = await new Migrator({ db, provider, ...(schema === undefined ? {} : { migrationTableSchema: schema }) }).migrateToLatest();
  if (error !== undefined) throw error;
}

export async function upgradeInPlace(dialect: Dialect, makeOld: MakeOld, check: (url: string) => Promise<void>): Promise<void> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'gw-upgrade-'));
    try {
      const file = join(dir, 'gateway.db');
      const old = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new BetterSqlite3(file) }) });
      await makeOld(old, 'sqlite');
      await old.destroy();
      await check(`sqlite:${file}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return;
  }
  const schema = await postgresSchema();
  try {
    const name = /\?schema=(\w+)/.exec(schema.url)?.[1] as string;
    const pool = new pg.Pool({ connectionString: schema.url.replace(/\?schema=\w+/, ''), options: `-c search_path=${name}` });
    const old = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
    await makeOld(old, 'postgres', name);
    await old.destroy();
    await check(schema.url);
  } finally {
    await schema.drop();
  }
}
