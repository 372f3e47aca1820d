/**
 * PortalStore on the SQL store (both dialects, one query path): members, sign-in links, sessions
 * and the admin audit log (tables of migration 120, portal-migration.ts); the account reads are
 * in portal-reads.ts.
 */
import { type Kysely, sql } from 'kysely';
import type { AuditEntry, MemberRecord, MemberRole, MembershipRecord, NewAuditEntry, PortalStore, SessionRealm, SessionRecord } from '../portal.ts';
import { PortalReads } from './portal-reads.ts';
import type { Database, Dialect } from './tables.ts';
import type { PortalTables } from './portal-tables.ts';


const toMember = (r: PortalTables['portal_members']): MemberRecord => ({
  accountId: r.account_id,
  email: r.email,
  role: r.role as MemberRole,
  createdAt: Number(r.created_at),
  invitedBy: r.invited_by,
});

export class SqlPortal extends PortalReads implements PortalStore {
  constructor(db: Kysely<Database>, private readonly dialect: Dialect, rollUp: () => Promise<void>) {
    super(db.withTables<PortalTables>(), rollUp);
  }

  async addMember(member: MemberRecord): Promise<'added' | 'exists'> {
    const inserted = await this.db
      .insertInto('portal_members')
      .values({ account_id: member.accountId, email: member.email, role: member.role, created_at: member.createdAt, invited_by: member.invitedBy })
      .onConflict((oc) => oc.columns(['account_id', 'email']).doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0 ? 'added' : 'exists';
  }

  async removeMember(accountId: string, email: string): Promise<'removed' | 'not_found' | 'last_owner'> {
    return this.db.transaction().execute(async (trx) => {
      // Two owners removing each other at once must not leave the account without one: the account row is the lock.
      if (this.dialect === 'postgres') await sql`SELECT id FROM accounts WHERE id = ${accountId} FOR UPDATE`.execute(trx);
      const member = await trx.selectFrom('portal_members').selectAll().where('account_id', '=', accountId).where('email', '=', email).executeTakeFirst();
      if (member === undefined) return 'not_found';
      if (member.role === 'owner') {
        const owners = await trx.selectFrom('portal_members').select((eb) => eb.fn.countAll<number>().as('n'))
          .where('account_id', '=', accountId).where('role', '=', 'owner').executeTakeFirstOrThrow();
        if (Number(owners.n) <= 1) return 'last_owner';
      }
      await trx.deleteFrom('portal_members').where('account_id', '=', accountId).where('email', '=', email).execute();
      return 'removed';
    });
  }

  async listMembers(accountId: string): Promise<MemberRecord[]> {
    const rows = await this.db.selectFrom('portal_members').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('email').execute();
    return rows.map(toMember);
  }

  async membership(accountId: string, email: string): Promise<MemberRecord | undefined> {
    const row = await this.db.selectFrom('portal_members').selectAll().where('account_id', '=', accountId).where('email', '=', email).executeTakeFirst();
    return row === undefined ? undefined : toMember(row);
  }

  async membershipsOf(email: string): Promise<MembershipRecord[]> {
    const rows = await this.db
      .selectFrom('portal_members as m')
      .innerJoin('accounts as a', 'a.id', 'm.account_id')
      .select(['m.account_id', 'm.role', 'a.name'])
      .where('m.email', '=', email)
      .orderBy('a.name')
      .execute();
    return rows.map((r) => ({ accountId: r.account_id, accountName: r.name, role: r.role as MemberRole }));
  }

  async createLink(tokenHash: string, email: string, at: number, expiresAt: number): Promise<void> {
    await this.db.insertInto('portal_links').values({ token_hash: tokenHash, email, created_at: at, expires_at: expiresAt, used_at: null }).execute();
    // Links long expired are forgotten as new ones are made.
    await this.db.deleteFrom('portal_links').where('expires_at', '<', at - 86_400_000).execute();
  }

  async redeemLink(tokenHash: string, at: number): Promise<string | undefined> {
    // One conditional update: of two clicks at once, one wins.
    const row = await this.db
      .updateTable('portal_links')
      .set({ used_at: at })
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', at)
      .returning('email')
      .executeTakeFirst();
    return row?.email;
  }

  async createSession(idHash: string, s: SessionRecord): Promise<void> {
    await this.db.insertInto('auth_sessions').values({
      id_hash: idHash, realm: s.realm, email: s.email, csrf_token: s.csrfToken, created_at: s.createdAt, expires_at: s.expiresAt,
    }).execute();
    await this.db.deleteFrom('auth_sessions').where('expires_at', '<', s.createdAt).execute();
  }

  async session(idHash: string, now: number): Promise<SessionRecord | undefined> {
    const row = await this.db.selectFrom('auth_sessions').selectAll().where('id_hash', '=', idHash).where('expires_at', '>', now).executeTakeFirst();
    if (row === undefined) return undefined;
    return { realm: row.realm as SessionRealm, email: row.email, csrfToken: row.csrf_token, createdAt: Number(row.created_at), expiresAt: Number(row.expires_at) };
  }

  async endSession(idHash: string): Promise<void> {
    await this.db.deleteFrom('auth_sessions').where('id_hash', '=', idHash).execute();
  }

  async endSessionsOf(realm: SessionRealm, email: string): Promise<number> {
    const result = await this.db.deleteFrom('auth_sessions').where('realm', '=', realm).where('email', '=', email).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async audit(entry: NewAuditEntry): Promise<void> {
    await this.db.insertInto('admin_audit').values({
      at: entry.at, actor: entry.actor, action: entry.action, account_id: entry.accountId, target: entry.target, status: entry.status, detail: entry.detail,
    }).execute();
  }

  async listAudit(options: { limit: number; before?: number }): Promise<AuditEntry[]> {
    let q = this.db.selectFrom('admin_audit').selectAll();
    if (options.before !== undefined) q = q.where('id', '<', options.before);
    const rows = await q.orderBy('id', 'desc').limit(options.limit).execute();
    return rows.map((r) => ({
      id: Number(r.id), at: Number(r.at), actor: r.actor, action: r.action, accountId: r.account_id, target: r.target, status: Number(r.status), detail: r.detail,
    }));
  }
}
