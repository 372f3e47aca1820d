/** AudioUploadStore on the SQL store (both dialects, one query path); the table is migration 093's. */
import type { Kysely, Selectable } from 'kysely';
import type { AudioUploadRecord, AudioUploadStore } from '../audio-uploads.ts';
import type { AudioUploadsTable, Database } from './tables.ts';

export class SqlAudioUploads implements AudioUploadStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(u: AudioUploadRecord): Promise<void> {
    await this.db
      .insertInto('audio_uploads')
      .values({
        id: u.id,
        secret: u.secret,
        account_id: u.accountId,
        key_id: u.keyId,
        content_type: u.contentType,
        bytes: u.bytes,
        duration_ms: Math.round(u.durationSeconds * 1000),
        created_at: u.createdAt,
        expires_at: u.expiresAt,
      })
      .execute();
  }

  async get(id: string): Promise<AudioUploadRecord | undefined> {
    const row = await this.db.selectFrom('audio_uploads').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toRecord(row);
  }

  async deleteExpired(now: number): Promise<number> {
    const result = await this.db.deleteFrom('audio_uploads').where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function toRecord(row: Selectable<AudioUploadsTable>): AudioUploadRecord {
  return {
    id: row.id,
    secret: row.secret,
    accountId: row.account_id,
    keyId: row.key_id,
    contentType: row.content_type,
    bytes: Buffer.from(row.bytes),
    durationSeconds: Number(row.duration_ms) / 1000,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}
