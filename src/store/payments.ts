/**
 * Card payments (Stripe Checkout) and what they did to an account's balance: each paid session
 * credited once (its id is the idempotency record, written in the same transaction as the credit),
 * refunds debited by what is newly refunded. 1 cent = 1 credit = 1,000,000 micro-credits.
 */
export interface PaidSession {
  sessionId: string;
  accountId: string;
  paymentIntent: string | null;
  amountCents: number;
  currency: string;
  receiptUrl: string | null;
  at: number;
  /** What Stripe says is already refunded when the payment is credited (its refund event may have come first): debited with the credit. */
  refundedCents?: number;
}

export interface PaymentRecord extends PaidSession {
  refundedCents: number;
}

export type CreditOutcome = 'credited' | 'already_credited' | 'unknown_account';
export type RefundOutcome = { outcome: 'debited'; accountId: string; cents: number } | { outcome: 'nothing_new' | 'unknown_payment' };

export interface PaymentStore {
  /** Credits the session's amount as a purchase (lifting the trial rules), once per session id. */
  creditPaidSession(session: PaidSession): Promise<CreditOutcome>;
  /** Debits what a payment has had refunded beyond what was debited before (`refundedCents` is Stripe's running total). */
  debitRefund(paymentIntent: string, refundedCents: number, at: number): Promise<RefundOutcome>;
  /** The account's payments, newest first. */
  listPayments(accountId: string, limit: number): Promise<PaymentRecord[]>;
}
