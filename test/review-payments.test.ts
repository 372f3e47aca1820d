/**
 * Second reading of the Stripe payments (issue 31): events out of order. Stripe does not
 * deliver events in order: a `charge.refunded` may arrive before the
 * `checkout.session.completed` of its payment (that delivery failed and is retried later, hours
 * later at Stripe). The refund must still be debited: the refund credits its payment's session
 * first, and a credit takes what Stripe says is already refunded. The admin ledger's entries
 * match the OpenAPI document.
 */
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStripeEmulator, type StripeEmulator, type StripeEvent } from '../emulators/stripe.ts';
import { ledgerEntrySchema } from '../src/openapi/schemas.ts';
import { startChatHarness, type ChatHarness } from './helpers/chat.ts';
import type { TestGateway } from './helpers/gateway.ts';
import { ledgerMoney } from './helpers/stores.ts';

describe('Stripe events out of order', () => {
  let emu: StripeEmulator;
  let h: ChatHarness;
  let gw: TestGateway;
  let stripe: Stripe;

  beforeAll(async () => {
    emu = await startStripeEmulator();
    h = await startChatHarness({ STRIPE_SECRET_KEY: emu.secretKey, STRIPE_WEBHOOK_SECRET: emu.webhookSecret, STRIPE_API_BASE: emu.baseUrl });
    gw = h.gw;
    emu.setWebhookUrl(`${gw.url}/webhooks/stripe`);
    const base = new URL(emu.baseUrl);
    stripe = new Stripe(emu.secretKey, { host: base.hostname, port: Number(base.port), protocol: 'http' });
  });
  afterAll(async () => {
    await h?.close();
    await emu?.close();
  });

  it('a refund delivered before its payment is debited when the payment is credited', async () => {
    const accountId = (await gw.admin('POST', '/admin/v1/accounts', { name: 'Out of order' })).json.id as string;
    const session = await stripe.checkout.sessions.create({
      mode: 'payment', client_reference_id: accountId, success_url: 'http://127.0.0.1/ok', cancel_url: 'http://127.0.0.1/no',
      line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: 1000, product_data: { name: 'credits' } } }],
    });
    // The session completes, but its event is not delivered yet.
    emu.duplicates = 0;
    await emu.pay(session.id);
    emu.duplicates = 1;
    const completed = emu.events.at(-1) as StripeEvent;
    expect(completed.type).toBe('checkout.session.completed');
    const intent = (await stripe.checkout.sessions.retrieve(session.id)).payment_intent as string;
    // The operator refunds 3 dollars; that event arrives first: the payment is credited then, less the refund.
    await stripe.refunds.create({ payment_intent: intent, amount: 300 });
    expect(emu.deliveries.at(-1)?.status).toBe(200);
    expect((await gw.admin('GET', `/admin/v1/accounts/${accountId}`)).json.balance_credits).toBe(700);
    // Then the payment's event.
    expect(await emu.deliver(completed)).toEqual([200]);
    const account = (await gw.admin('GET', `/admin/v1/accounts/${accountId}`)).json;
    expect(account.balance_credits).toBe(700);
    expect(await ledgerMoney(gw.gateway.store, accountId)).toEqual({ balance: 700_000_000, held: 0 });
    // The refund's event again, and a later refund of the rest: each refunded cent debited once.
    await emu.deliver(emu.events.find((e) => e.type === 'charge.refunded') as StripeEvent);
    expect((await gw.admin('GET', `/admin/v1/accounts/${accountId}`)).json.balance_credits).toBe(700);
    await stripe.refunds.create({ payment_intent: intent });
    expect((await gw.admin('GET', `/admin/v1/accounts/${accountId}`)).json.balance_credits).toBe(0);
    expect(await ledgerMoney(gw.gateway.store, accountId)).toEqual({ balance: 0, held: 0 });
  });

  it('the admin ledger of a refunded payment is what the OpenAPI document says', async () => {
    const accountId = (await gw.admin('POST', '/admin/v1/accounts', { name: 'Refunded' })).json.id as string;
    const session = await stripe.checkout.sessions.create({
      mode: 'payment', client_reference_id: accountId, success_url: 'http://127.0.0.1/ok', cancel_url: 'http://127.0.0.1/no',
      line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: 1000, product_data: { name: 'credits' } } }],
    });
    await emu.pay(session.id);
    const intent = (await stripe.checkout.sessions.retrieve(session.id)).payment_intent as string;
    await stripe.refunds.create({ payment_intent: intent, amount: 100 });
    const ledger = (await gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger`)).json as unknown[];
    expect(ledger.map((entry) => ledgerEntrySchema.safeParse(entry).success)).toEqual([true, true]);
  });
});
