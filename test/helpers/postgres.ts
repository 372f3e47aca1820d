/**
 * PostgreSQL for tests: a schema of its own per test (TEST_POSTGRES_URL, database `test`),
 * dropped afterwards. Nothing here skips: with PostgreSQL down, the tests that use it fail.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';

export const PG_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestSchema {
  /** DATABASE_URL for the schema: `postgres://…/test?schema=NAME`. */
  url: string;
  drop(): Promise<void>;
}

export async function createSchema(): Promise<TestSchema> {
  const schema = `t_${randomUUID().replace(/-/g, '')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    await admin.query(`create schema ${schema}`);
  } finally {
    await admin.end();
  }
  return {
    url: `${PG_URL}?schema=${schema}`,
    async drop() {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      try {
        await client.query(`drop schema ${schema} cascade`);
      } finally {
        await client.end();
      }
    },
  };
}
