/**
 * Limit notifications (written by the hold itself, money/hold-movement.ts) and the e-mail outbox:
 * claiming rows with a lease so two processes never send the same mail, the account's
 * quota of 10 mails in 24 hours, and the sender's answers.
 */
import { type Kysely, type Selectable, sql } from 'kysely';
import type { ClaimedMail, LimitPeriod, MailState, NotificationKind, NotificationRecord, NotificationStore } from '../types.ts';
import type { Database, Dialect, NotificationsTable } from './tables.ts';

export const MAILS_PER_ACCOUNT_PER_DAY = 10;
const DAY_MS = 86_400_000;

type NotificationRow = Selectable<NotificationsTable> & { mail_status: string | null };

export class SqlNotifications implements NotificationStore {
  constructor(private readonly db: Kysely<Database>, private readonly dialect: Dialect) {}

  async listNotifications(accountId: string, limit: number): Promise<NotificationRecord[]> {
    const rows = await this.db
      .selectFrom('notifications as n')
      .leftJoin('mail_outbox as o', 'o.notification_id', 'n.id')
      .selectAll('n')
      .select('o.status as mail_status')
      .where('n.account_id', '=', accountId)
      .orderBy('n.id', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toNotification);
  }

  async claimMail(owner: string, now: number, options: { limit: number; leaseMs: number }): Promise<ClaimedMail[]> {
    const leaseUntil = now + options.leaseMs;
    const claimed = await this.db.transaction().execute(async (trx) => {
      let due = trx
        .selectFrom('mail_outbox')
        .select(['id', 'account_id', 'first_claimed_at'])
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
        .orderBy('id')
        .limit(options.limit);
      if (this.dialect === 'postgres') due = due.forUpdate().skipLocked();
      const rows = await due.execute();
      if (rows.length === 0) return [];
      const accounts = [...new Set(rows.map((r) => r.account_id))].sort();
      // One claimer per account at a time (SQLite transactions are serial already), then count with a fresh snapshot.
      if (this.dialect === 'postgres') {
        for (const account of accounts) await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`mail:${account}`}, 0))`.execute(trx);
      }
      const counted = await trx
        .selectFrom('mail_outbox')
        .select(['account_id', (eb) => eb.fn.countAll<number>().as('n')])
        .where('account_id', 'in', accounts)
        .where('first_claimed_at', '>', now - DAY_MS)
        .groupBy('account_id')
        .execute();
      const sent = new Map(counted.map((c) => [c.account_id, Number(c.n)]));
      const take: number[] = [];
      const suppress: number[] = [];
      for (const row of rows) {
        const used = sent.get(row.account_id) ?? 0;
        if (row.first_claimed_at !== null) take.push(row.id);
        else if (used < MAILS_PER_ACCOUNT_PER_DAY) {
          take.push(row.id);
          sent.set(row.account_id, used + 1);
        } else suppress.push(row.id);
      }
      if (suppress.length > 0) await trx.updateTable('mail_outbox').set({ status: 'suppressed' }).where('id', 'in', suppress).execute();
      if (take.length > 0) {
        await trx
          .updateTable('mail_outbox')
          .set((eb) => ({
            lease_owner: owner,
            lease_until: leaseUntil,
            attempts: eb('attempts', '+', 1),
            first_claimed_at: eb.fn.coalesce('first_claimed_at', sql<number>`${now}`),
          }))
          .where('id', 'in', take)
          .execute();
      }
      return take;
    });
    if (claimed.length === 0) return [];
    const rows = await this.db
      .selectFrom('mail_outbox as o')
      .innerJoin('notifications as n', 'n.id', 'o.notification_id')
      .innerJoin('accounts as a', 'a.id', 'o.account_id')
      .selectAll('n')
      .select(['o.id as mail_id', 'o.status as mail_status', 'o.attempts', 'a.email', 'a.name as account_name'])
      .where('o.id', 'in', claimed)
      .orderBy('o.id')
      .execute();
    return rows.map((r) => ({
      id: Number(r.mail_id),
      accountId: r.account_id,
      to: r.email,
      accountName: r.account_name,
      notification: toNotification(r),
      attempts: Number(r.attempts),
      leaseUntil,
    }));
  }

  async markMailSent(id: number, owner: string, at: number): Promise<boolean> {
    const result = await this.db
      .updateTable('mail_outbox')
      .set({ status: 'sent', sent_at: at, lease_until: null })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async markMailFailed(id: number, owner: string, error: string, retryAt: number | null): Promise<boolean> {
    const result = await this.db
      .updateTable('mail_outbox')
      .set((eb) => ({
        status: retryAt === null ? 'failed' : 'pending',
        next_attempt_at: retryAt ?? eb.ref('next_attempt_at'),
        lease_owner: null,
        lease_until: null,
        last_error: error.slice(0, 1000),
      }))
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}

function toNotification(row: NotificationRow): NotificationRecord {
  return {
    id: Number(row.id),
    accountId: row.account_id,
    keyId: row.key_id,
    keyFamilyId: row.key_family_id,
    kind: row.kind as NotificationKind,
    limit: row.limit_period as LimitPeriod,
    periodStart: Number(row.period_start),
    threshold: Number(row.threshold),
    createdAt: Number(row.created_at),
    mail: (row.mail_status ?? 'none') as MailState,
  };
}
