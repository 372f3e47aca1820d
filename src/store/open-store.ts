/**
 * DATABASE_URL → a migrated Store: `sqlite:PATH`, `sqlite::memory:` or `postgres://…`.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { HoldLimit } from './limits.ts';
import type { Store } from './types.ts';
import { PostgresGroupCommit } from './sql/money/postgres-group-commit.ts';
import { SqliteGroupCommit } from './sql/money/sqlite-group-commit.ts';
import { QueryCounter, sqlStore } from './sql/sql-store.ts';
import type { Database } from './sql/tables.ts';
import { postgresRollup, sqliteRollup } from './sql/usage-pending.ts';
import { startWalCheckpointer } from './sql/wal-checkpointer.ts';
import { lockDatabase } from './sql/process-lock.ts';

export interface StoreOptions {
  /** PostgreSQL connections (DATABASE_POOL_SIZE); default 10. */
  poolSize?: number;
  /** PostgreSQL: one transaction for the movements of one account in one event-loop turn (default true; off only to measure). */
  groupCommit?: boolean;
  /** PostgreSQL: money transactions in flight at once (group commit batches what queues meanwhile); default 2. */
  moneySlots?: number;
  /** The limits the hold checks; default the shipped table (limits.ts). A row beyond it needs its columns (limits.ts says which). */
  limits?: readonly HoldLimit[];
}

export async function openStore(databaseUrl: string, options: StoreOptions = {}): Promise<Store> {
  const store = databaseUrl.startsWith('sqlite:') ? openSqlite(databaseUrl.slice('sqlite:'.length), options) : openPostgres(databaseUrl, options);
  try {
    await store.migrate();
  } catch (error) {
    // Nothing left open (a pool, a file handle) by a store that could not start.
    await store.close().catch(() => undefined);
    throw error;
  }
  return store;
}

function openSqlite(path: string, options: StoreOptions): Store {
  const file = path === ':memory:' ? ':memory:' : path;
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  // One process per database: its money engine reserves in memory (an in-memory database is its connection's alone).
  const unlock = file === ':memory:' ? undefined : lockDatabase(file);
  let database: BetterSqlite3.Database;
  try {
    database = new BetterSqlite3(file);
  } catch (error) {
    unlock?.();
    throw error;
  }
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  const counter = new QueryCounter();
  const stopCheckpointer = file === ':memory:' ? undefined : startWalCheckpointer(database, file);
  const money = new SqliteGroupCommit(database, counter.tick);
  return sqlStore({
    dialect: 'sqlite',
    limits: options.limits,
    db: new Kysely<Database>({ dialect: new SqliteDialect({ database }), log: counter.tick }),
    money,
    exclusive: money,
    counter,
    beforeClose: stopCheckpointer,
    ...(unlock === undefined ? {} : { afterClose: unlock }),
    rollUsage: sqliteUsageRoller(database),
  });
}

/**
 * The usage roller on SQLite: one synchronous transaction on the money path's own connection, so
 * no money movement can come between its statements.
 */
function sqliteUsageRoller(database: BetterSqlite3.Database): () => Promise<void> {
  let roll: (() => void) | undefined;
  return async () => {
    if (roll === undefined) {
      const [createBatch, ...rest] = sqliteRollup();
      database.exec(createBatch as string);
      const last = database.prepare('SELECT max(rowid) FROM usage_pending').pluck();
      const statements = rest.map((text) => database.prepare(text));
      roll = database.transaction(() => {
        const upto = last.get() as number | null;
        if (upto === null) return;
        for (const statement of statements) statement.run(...(statement.source.includes('?') ? [upto] : []));
      });
    }
    roll();
  };
}

function openPostgres(url: string, options: StoreOptions): Store {
  // int8 (bigint) columns hold micro-credits and milliseconds, all far below 2^53.
  pg.types.setTypeParser(20, (value: string) => Number(value));
  // `?schema=NAME` keeps the gateway's tables in their own schema (tests use one per run).
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema')?.replace(/[^a-zA-Z0-9_]/g, '');
  parsed.searchParams.delete('schema');
  const config: pg.PoolConfig & { pipeline: boolean } = {
    connectionString: parsed.toString(),
    max: options.poolSize ?? 10,
    // A group commit writes BEGIN, its statements and COMMIT at once: one round trip.
    pipeline: true,
    ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
  };
  const pool = new pg.Pool(config);
  // An idle connection the server ends (a restart, a failover, an administrator) is dropped
  // from the pool by pg; without a listener its 'error' event would end the whole process.
  // The next query opens a new connection, and reports the failure itself if the server is gone.
  pool.on('error', () => undefined);
  const counter = new QueryCounter();
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: counter.tick });
  const rollup = postgresRollup();
  return sqlStore({
    dialect: 'postgres',
    limits: options.limits,
    db,
    money: new PostgresGroupCommit(pool, counter.tick, options.groupCommit ?? true, options.moneySlots ?? 2),
    counter,
    // Straight on the pool, as SQLite's roller runs on its connection: background work, not a query a request made
    // (the query count is what tests of the request path read).
    rollUsage: async () => {
      await pool.query({ name: 'usage_rollup', text: rollup });
    },
    ...(schema === undefined ? {} : { schema }),
  });
}
