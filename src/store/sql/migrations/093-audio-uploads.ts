/**
 * Migration 093: voice-sample uploads with their bytes (src/store/audio-uploads.ts). Only
 * adds a table, so a database made by earlier versions upgrades in place.
 */
import { type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../tables.ts';

export function audioUploadsMigration(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('audio_uploads')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('key_id', 'text')
        .addColumn('content_type', 'text', (c) => c.notNull())
        .addColumn('bytes', dialect === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
        .addColumn('duration_ms', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('audio_uploads_expires_at').on('audio_uploads').column('expires_at').execute();
    },
  };
}
