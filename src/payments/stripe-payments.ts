/**
 * Credit purchases through Stripe (DECISIONS.md "Customer portal and payments"), with the official
 * SDK: a Checkout Session per top-up (`mode: "payment"`, one line item in USD, `client_reference_id`
 * = the account), and the webhook's events: a paid `checkout.session.completed` credits its
 * `amount_total` cents as credits once per session (confirmed with Stripe's API first, which also
 * gives the receipt), `charge.refunded` debits what is newly refunded. Everything else is
 * acknowledged and ignored.
 */
import type Stripe from 'stripe';
import type { PaymentStore } from '../store/payments.ts';

export interface StripeSettings {
  secretKey: string;
  webhookSecret: string;
  /** Another host for the API (tests, the demo's emulator). */
  apiBase: string | undefined;
}

export type EventOutcome = 'credited' | 'already_credited' | 'debited' | 'ignored';

export class InvalidSignature extends Error {}

/** The SDK's client, pointed at STRIPE_API_BASE when set; the SDK is loaded only by a gateway that takes payments. */
async function stripeClient(settings: StripeSettings): Promise<Stripe> {
  const { default: StripeSdk } = await import('stripe');
  if (settings.apiBase === undefined) return new StripeSdk(settings.secretKey, { maxNetworkRetries: 2 });
  const base = new URL(settings.apiBase);
  return new StripeSdk(settings.secretKey, {
    host: base.hostname,
    port: base.port === '' ? (base.protocol === 'https:' ? 443 : 80) : Number(base.port),
    protocol: base.protocol === 'http:' ? 'http' : 'https',
    maxNetworkRetries: 2,
  });
}

export class StripePayments {
  private constructor(
    private readonly stripe: Stripe,
    private readonly settings: StripeSettings,
    private readonly store: PaymentStore,
    private readonly now: () => number,
  ) {}

  static async create(settings: StripeSettings, store: PaymentStore, now: () => number): Promise<StripePayments> {
    return new StripePayments(await stripeClient(settings), settings, store, now);
  }

  /** A Checkout Session for `usd` dollars of credits; answers the page to send the buyer to. */
  async checkout(accountId: string, usd: number, portalUrl: string, email: string): Promise<string> {
    const session = await this.stripe.checkout.sessions.create({
      mode: 'payment',
      client_reference_id: accountId,
      customer_email: email,
      line_items: [{
        quantity: 1,
        price_data: { currency: 'usd', unit_amount: usd * 100, product_data: { name: `Model Gateway credits: ${(usd * 100).toLocaleString('en-US')} credits` } },
      }],
      success_url: `${portalUrl}/#/a/${accountId}/billing?checkout={CHECKOUT_SESSION_ID}`,
      cancel_url: `${portalUrl}/#/a/${accountId}/billing?checkout=canceled`,
    });
    if (session.url === null) throw new Error('Stripe answered a Checkout Session without a URL');
    return session.url;
  }

  /** The event in a webhook request, verified by its Stripe-Signature (the SDK's default 300 s tolerance). */
  verify(rawBody: string, signature: string | string[] | undefined): Stripe.Event {
    if (typeof signature !== 'string') throw new InvalidSignature('No Stripe-Signature header.');
    try {
      return this.stripe.webhooks.constructEvent(rawBody, signature, this.settings.webhookSecret);
    } catch (error) {
      throw new InvalidSignature(error instanceof Error ? error.message : String(error));
    }
  }

  async handle(event: Stripe.Event): Promise<EventOutcome> {
    switch (event.type) {
      case 'checkout.session.completed':
      case 'checkout.session.async_payment_succeeded':
        return this.paid(event.data.object);
      case 'charge.refunded':
        return this.refunded(event.data.object);
      default:
        return 'ignored';
    }
  }

  private async paid(sent: Stripe.Checkout.Session): Promise<EventOutcome> {
    if (sent.payment_status !== 'paid' || sent.client_reference_id === null) return 'ignored';
    // Asked of Stripe itself: the amount and state that count are Stripe's, and the receipt is on the charge.
    const session = await this.stripe.checkout.sessions.retrieve(sent.id, { expand: ['payment_intent.latest_charge'] });
    if (session.payment_status !== 'paid' || session.client_reference_id === null || session.amount_total === null || session.currency !== 'usd') return 'ignored';
    const intent = typeof session.payment_intent === 'string' ? null : session.payment_intent;
    const charge = intent !== null && typeof intent.latest_charge === 'object' ? intent.latest_charge : null;
    const outcome = await this.store.creditPaidSession({
      sessionId: session.id,
      accountId: session.client_reference_id,
      paymentIntent: typeof session.payment_intent === 'string' ? session.payment_intent : (intent?.id ?? null),
      amountCents: session.amount_total,
      currency: session.currency,
      receiptUrl: charge?.receipt_url ?? null,
      refundedCents: charge?.amount_refunded ?? 0,
      at: this.now(),
    });
    return outcome === 'unknown_account' ? 'ignored' : outcome;
  }

  private async refunded(charge: Stripe.Charge): Promise<EventOutcome> {
    const intent = typeof charge.payment_intent === 'string' ? charge.payment_intent : charge.payment_intent?.id;
    if (intent === undefined) return 'ignored';
    let result = await this.store.debitRefund(intent, charge.amount_refunded, this.now());
    if (result.outcome === 'unknown_payment') {
      // Stripe keeps no order: the payment's own event may not have been credited yet (or be credited now, with a
      // count of refunds older than this one). Its session is credited here first, then this refund applies.
      const session = (await this.stripe.checkout.sessions.list({ payment_intent: intent, limit: 1 })).data[0];
      const credit = session === undefined ? 'ignored' : await this.paid(session);
      if (credit === 'ignored') return 'ignored';
      result = await this.store.debitRefund(intent, charge.amount_refunded, this.now());
      if (result.outcome !== 'debited') return credit;
    }
    return result.outcome === 'debited' ? 'debited' : 'ignored';
  }
}
