/**
 * PaymentStore on the SQL store (both dialects, one query path). A credit is one transaction: the
 * payment row (the session id its primary key, so a second delivery inserts nothing, also when two
 * arrive at once), the balance, the purchase flag, and the ledger's `topup` row. A refund moves the
 * payment's refunded total forward and debits the difference as a `payment_refund` row.
 */
import { type Kysely, sql } from 'kysely';
import type { CreditOutcome, PaidSession, PaymentRecord, PaymentStore, RefundOutcome } from '../payments.ts';
import type { Database, Dialect } from './tables.ts';

/** 1 cent = 1 credit. */
const MICRO_PER_CENT = 1_000_000;

type PaymentsTable = {
  stripe_payments: {
    session_id: string;
    account_id: string;
    payment_intent: string | null;
    amount_cents: number;
    currency: string;
    receipt_url: string | null;
    refunded_cents: number;
    created_at: number;
  };
};
type PaymentsDatabase = Database & PaymentsTable;

export class SqlPayments implements PaymentStore {
  private readonly db: Kysely<PaymentsDatabase>;

  constructor(db: Kysely<Database>, private readonly dialect: Dialect) {
    this.db = db.withTables<PaymentsTable>();
  }

  async creditPaidSession(s: PaidSession): Promise<CreditOutcome> {
    // A refund whose event came before this credit's found no payment: it is debited here, with the credit.
    const refunded = Math.min(Math.max(0, s.refundedCents ?? 0), s.amountCents);
    return this.db.transaction().execute(async (trx) => {
      const account = await trx.selectFrom('accounts').select('id').where('id', '=', s.accountId).executeTakeFirst();
      if (account === undefined) return 'unknown_account';
      const inserted = await trx
        .insertInto('stripe_payments')
        .values({
          session_id: s.sessionId, account_id: s.accountId, payment_intent: s.paymentIntent, amount_cents: s.amountCents,
          currency: s.currency, receipt_url: s.receiptUrl, refunded_cents: refunded, created_at: s.at,
        })
        .onConflict((oc) => oc.column('session_id').doNothing())
        .returning('session_id')
        .executeTakeFirst();
      if (inserted === undefined) return 'already_credited';
      const amount = s.amountCents * MICRO_PER_CENT;
      await trx.updateTable('accounts').set((eb) => ({ balance: eb('balance', '+', amount), has_purchase: 1 })).where('id', '=', s.accountId).execute();
      await trx.insertInto('ledger').values({ account_id: s.accountId, key_id: null, key_family_id: null, job_id: null, kind: 'topup', amount, created_at: s.at }).execute();
      if (refunded > 0) {
        const debit = refunded * MICRO_PER_CENT;
        await trx.updateTable('accounts').set((eb) => ({ balance: eb('balance', '-', debit) })).where('id', '=', s.accountId).execute();
        await trx.insertInto('ledger').values({ account_id: s.accountId, key_id: null, key_family_id: null, job_id: null, kind: 'payment_refund', amount: debit, created_at: s.at }).execute();
      }
      return 'credited';
    });
  }

  async debitRefund(paymentIntent: string, refundedCents: number, at: number): Promise<RefundOutcome> {
    return this.db.transaction().execute(async (trx) => {
      // Two deliveries of refunds at once: the second reads the total the first wrote.
      const lock = this.dialect === 'postgres' ? sql` FOR UPDATE` : sql``;
      const { rows } = await sql<{ session_id: string; account_id: string; refunded_cents: number | string; amount_cents: number | string }>`
        SELECT session_id, account_id, refunded_cents, amount_cents FROM stripe_payments WHERE payment_intent = ${paymentIntent}${lock}`.execute(trx);
      const payment = rows[0];
      if (payment === undefined) return { outcome: 'unknown_payment' };
      const total = Math.min(refundedCents, Number(payment.amount_cents));
      const newly = total - Number(payment.refunded_cents);
      if (newly <= 0) return { outcome: 'nothing_new' };
      await trx.updateTable('stripe_payments').set({ refunded_cents: total }).where('session_id', '=', payment.session_id).execute();
      const amount = newly * MICRO_PER_CENT;
      // The balance may go below zero: every hold is then refused until a top-up.
      await trx.updateTable('accounts').set((eb) => ({ balance: eb('balance', '-', amount) })).where('id', '=', payment.account_id).execute();
      await trx.insertInto('ledger').values({ account_id: payment.account_id, key_id: null, key_family_id: null, job_id: null, kind: 'payment_refund', amount, created_at: at }).execute();
      return { outcome: 'debited', accountId: payment.account_id, cents: newly };
    });
  }

  async listPayments(accountId: string, limit: number): Promise<PaymentRecord[]> {
    const rows = await this.db.selectFrom('stripe_payments').selectAll().where('account_id', '=', accountId).orderBy('created_at', 'desc').limit(limit).execute();
    return rows.map((r) => ({
      sessionId: r.session_id, accountId: r.account_id, paymentIntent: r.payment_intent, amountCents: Number(r.amount_cents), currency: r.currency,
      receiptUrl: r.receipt_url, at: Number(r.created_at), refundedCents: Number(r.refunded_cents),
    }));
  }
}
