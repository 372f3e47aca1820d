/**
 * PostgreSQL for tests: a database of its own per test (created on TEST_POSTGRES_URL's
 * server, dropped afterwards). Nothing here skips: with PostgreSQL down, the tests fail.
 *
 * A database rather than a `?schema=` of the shared `test` database: each gateway process of a
 * multi-process test connects on its own, and a database is what a deployment gives them. (The
 * migrator once took another schema's bookkeeping tables for its own; fixed in 1831ced, and
 * test/store-upgrade.test.ts migrates a fresh schema beside a migrated one.)
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';

export const PG_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestDatabase {
  /** DATABASE_URL of the new database. */
  url: string;
  drop(): Promise<void>;
}

/** Runs one statement on the server of `serverUrl` (the bench uses it too, with its own server). */
export async function onServer(statement: string, serverUrl = PG_URL): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

export async function createDatabase(): Promise<TestDatabase> {
  const name = `gw_test_${randomUUID().replace(/-/g, '')}`;
  await onServer(`create database ${name}`);
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => onServer(`drop database if exists ${name} with (force)`) };
}
