/** ResponseStore on the SQL store (both dialects, one query path); the table is migration 110's. */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { ResponseStore, StoredResponseRecord } from '../responses.ts';
import type { Database, StoredResponsesTable } from './tables.ts';

export class SqlResponses implements ResponseStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(r: StoredResponseRecord): Promise<void> {
    await this.db
      .insertInto('stored_responses')
      .values({
        id: r.id,
        account_id: r.accountId,
        previous_id: r.previousId,
        input: r.input,
        output: r.output,
        response: r.response,
        created_at: r.createdAt,
        expires_at: r.expiresAt,
      })
      .execute();
  }

  async get(id: string, accountId: string, now: number): Promise<StoredResponseRecord | undefined> {
    const row = await this.db.selectFrom('stored_responses').selectAll()
      .where('id', '=', id).where('account_id', '=', accountId).where('expires_at', '>', now)
      .executeTakeFirst();
    return row === undefined ? undefined : toRecord(row);
  }

  async chain(id: string, accountId: string, now: number, depth: number): Promise<StoredResponseRecord[]> {
    // One recursive query from the response back through the ones it continued, each the account's and unexpired.
    const result = await sql<Selectable<StoredResponsesTable> & { depth: number }>`
      WITH RECURSIVE chain AS (
        SELECT r.*, 0 AS depth FROM stored_responses r
        WHERE r.id = ${id} AND r.account_id = ${accountId} AND r.expires_at > ${now}
        UNION ALL
        SELECT r.*, c.depth + 1 FROM stored_responses r JOIN chain c ON r.id = c.previous_id
        WHERE r.account_id = ${accountId} AND r.expires_at > ${now} AND c.depth < ${depth - 1}
      )
      SELECT * FROM chain ORDER BY depth DESC`.execute(this.db);
    return result.rows.map(toRecord);
  }

  async delete(id: string, accountId: string): Promise<boolean> {
    const result = await this.db.deleteFrom('stored_responses').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async deleteExpired(now: number): Promise<number> {
    const result = await this.db.deleteFrom('stored_responses').where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function toRecord(row: Selectable<StoredResponsesTable>): StoredResponseRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    previousId: row.previous_id,
    input: row.input,
    output: row.output,
    response: row.response,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}
