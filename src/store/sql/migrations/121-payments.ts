/**
 * Migration 121: card payments (src/store/payments.ts). The session id is the primary key: the
 * idempotency record of the credit. Only adds a table, so earlier databases upgrade in place.
 */
import type { Kysely, Migration } from 'kysely';

export const paymentsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('stripe_payments')
      .addColumn('session_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
      .addColumn('payment_intent', 'text')
      .addColumn('amount_cents', 'bigint', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('receipt_url', 'text')
      .addColumn('refunded_cents', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('stripe_payments_intent').on('stripe_payments').column('payment_intent').execute();
    await db.schema.createIndex('stripe_payments_account').on('stripe_payments').columns(['account_id', 'created_at']).execute();
  },
};
