/**
 * Migration 120: the customer portal (src/store/portal.ts): members of accounts, sign-in links,
 * sessions and the admin audit log. Only adds tables; every account with an e-mail address gets
 * that address as its first owner, so a database made by an earlier main upgrades in place.
 */
import { type Kysely, type Migration, sql } from 'kysely';
import type { Dialect } from '../tables.ts';

export function portalMigration(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('portal_members')
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('invited_by', 'text')
        .addPrimaryKeyConstraint('portal_members_pk', ['account_id', 'email'])
        .execute();
      await db.schema.createIndex('portal_members_email').on('portal_members').column('email').execute();
      await sql`INSERT INTO portal_members (account_id, email, role, created_at, invited_by)
                SELECT id, lower(trim(email)), 'owner', created_at, NULL FROM accounts WHERE email IS NOT NULL AND trim(email) <> ''`.execute(db);

      await db.schema
        .createTable('portal_links')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('used_at', 'bigint')
        .execute();
      await db.schema.createIndex('portal_links_expires').on('portal_links').column('expires_at').execute();

      await db.schema
        .createTable('auth_sessions')
        .addColumn('id_hash', 'text', (c) => c.primaryKey())
        .addColumn('realm', 'text', (c) => c.notNull())
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('csrf_token', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('auth_sessions_email').on('auth_sessions').columns(['realm', 'email']).execute();

      await db.schema
        .createTable('admin_audit')
        .addColumn('id', dialect === 'postgres' ? 'bigserial' : 'integer', (c) => c.primaryKey())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('account_id', 'text')
        .addColumn('target', 'text')
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('detail', 'text')
        .execute();
    },
  };
}
