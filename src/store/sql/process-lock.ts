/**
 * One gateway process per SQLite database (docs/money-path.md, "In memory, on SQLite"): the money
 * engine reserves in memory, which is exact only while no other process writes money to the file.
 * The lock is a second SQLite file beside the database, `<database>.lock`, held in an exclusive
 * write transaction for the store's lifetime; the operating system releases it when the process
 * ends, SIGKILL included.
 */
import { realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';

/** Another store holds the database: a second gateway process, `admin --direct`, or a second openStore(). */
export class DatabaseInUseError extends Error {
  readonly code = 'DATABASE_IN_USE';
  constructor(readonly path: string) {
    super(`the SQLite database ${path} is in use by another gateway process (${path}.lock is locked)`);
  }
}

/** Takes the lock of the database at `path`; the function returned releases it. */
export function lockDatabase(path: string): () => void {
  const lock = new BetterSqlite3(`${fileOf(path)}.lock`, { timeout: 0 });
  try {
    lock.pragma('locking_mode = EXCLUSIVE');
    lock.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    lock.close();
    if ((error as { code?: unknown }).code === 'SQLITE_BUSY') throw new DatabaseInUseError(path);
    throw error;
  }
  return () => {
    lock.exec('ROLLBACK');
    lock.close();
  };
}

/**
 * The database file the path names, symbolic links followed: every spelling of one database (a linked file or
 * directory) takes the same lock. A file not made yet: its directory's real path.
 */
function fileOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return join(realpathSync(dirname(path)), basename(path));
  }
}
