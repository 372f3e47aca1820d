/**
 * The payment routes: `POST /webhooks/stripe` (the raw body, verified by its signature: 400 when
 * unsigned, forged or stale; 200 for every verified event, handled or ignored; 500 when the store
 * or Stripe failed, so Stripe delivers it again), and the portal's checkout and receipts. Without
 * STRIPE_SECRET_KEY the routes answer 404, and receipts list what was paid before.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseBody } from '../admin/key-requests.ts';
import { memberOf, originOf } from '../portal/context.ts';
import { GatewayError } from '../shared/errors.ts';
import { iso } from '../shared/time.ts';
import type { PaymentStore } from '../store/payments.ts';
import { InvalidSignature, type StripePayments } from './stripe-payments.ts';

export interface PaymentDeps {
  /** Undefined without STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET. */
  stripe: StripePayments | undefined;
  store: PaymentStore;
  topupAmountsUsd: number[];
  publicBaseUrl: string | undefined;
}

const notConfigured = () => new GatewayError('not_found', 'Payments are not configured on this gateway (STRIPE_SECRET_KEY).');

export async function registerStripeWebhook(app: FastifyInstance, deps: PaymentDeps): Promise<void> {
  await app.register(async (hook) => {
    // The signature is over the exact bytes Stripe sent: this route keeps the body as text.
    hook.removeAllContentTypeParsers();
    hook.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    hook.post('/webhooks/stripe', async (request) => {
      if (deps.stripe === undefined) throw notConfigured();
      let event;
      try {
        event = deps.stripe.verify(typeof request.body === 'string' ? request.body : '', request.headers['stripe-signature']);
      } catch (error) {
        if (error instanceof InvalidSignature) throw new GatewayError('invalid_request', `Webhook signature refused: ${error.message}`);
        throw error;
      }
      const outcome = await deps.stripe.handle(event);
      request.log.info({ stripeEvent: event.id, type: event.type, outcome }, 'stripe webhook');
      return { received: true, outcome };
    });
  });
}

const checkoutBody = z.strictObject({ amount_usd: z.number().int().positive() });

/** The portal's account routes for payments (behind its member guard). */
export function paymentRoutes(deps: PaymentDeps) {
  return (account: FastifyInstance): void => {
    account.get<{ Params: { accountId: string } }>('/payments', async (request) => ({
      enabled: deps.stripe !== undefined,
      amounts_usd: deps.topupAmountsUsd,
      data: (await deps.store.listPayments(request.params.accountId, 200)).map((p) => ({
        id: p.sessionId,
        amount_usd: p.amountCents / 100,
        credits: p.amountCents,
        refunded_usd: p.refundedCents / 100,
        receipt_url: p.receiptUrl,
        created_at: iso(p.at),
      })),
    }));

    account.post<{ Params: { accountId: string } }>('/checkout', { config: { ownerOnly: true } }, async (request, reply) => {
      if (deps.stripe === undefined) throw notConfigured();
      const { amount_usd: usd } = parseBody(checkoutBody, request.body);
      if (!deps.topupAmountsUsd.includes(usd)) {
        throw new GatewayError('validation_failed', `amount_usd: one of ${deps.topupAmountsUsd.join(', ')}`, { details: { formErrors: [], fieldErrors: { amount_usd: [`one of ${deps.topupAmountsUsd.join(', ')}`] } } });
      }
      const url = await deps.stripe.checkout(request.params.accountId, usd, `${originOf(request, deps.publicBaseUrl)}/portal`, memberOf(request).session.email);
      reply.code(201);
      return { url };
    });
  };
}
