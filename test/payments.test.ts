/**
 * Credit purchases through Stripe, tested with the official `stripe` SDK against the Stripe
 * emulator: a paid session credits once (however often and however concurrently its events arrive,
 * on SQLite and on PostgreSQL with two gateway processes), forged, stale and unsigned deliveries
 * credit nothing (400), unknown accounts and event types are acknowledged and ignored, refunds
 * debit what is newly refunded (a balance may go below zero, and then every hold is refused), and
 * the trial rules lift after a purchase but not after a grant.
 */
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStripeEmulator, type StripeEmulator, type StripeEvent } from '../emulators/stripe.ts';
import { startChatHarness, type ChatHarness } from './helpers/chat.ts';
import { http, startGateway, type TestGateway } from './helpers/gateway.ts';
import { portalSession } from './helpers/portal.ts';
import { createDatabase, type TestDatabase } from './helpers/postgres.ts';
import { ledgerMoney } from './helpers/stores.ts';

const DAY = 86_400_000;
const hi = [{ role: 'user', content: 'Hello there' }];

function sdk(emu: StripeEmulator): Stripe {
  const base = new URL(emu.baseUrl);
  return new Stripe(emu.secretKey, { host: base.hostname, port: Number(base.port), protocol: 'http' });
}

function stripeEnv(emu: StripeEmulator): Record<string, string> {
  return { STRIPE_SECRET_KEY: emu.secretKey, STRIPE_WEBHOOK_SECRET: emu.webhookSecret, STRIPE_API_BASE: emu.baseUrl };
}

async function balanceOf(gw: TestGateway, accountId: string): Promise<number> {
  return (await gw.admin('GET', `/admin/v1/accounts/${accountId}`)).json.balance_credits as number;
}

/** A paid session of `accountId` for `usd`, made with the SDK as any Checkout integration would, paid on the emulator. */
async function paidSession(emu: StripeEmulator, stripe: Stripe, accountId: string, usd: number, deliver = true): Promise<{ session: Stripe.Checkout.Session; event: StripeEvent }> {
  const session = await stripe.checkout.sessions.create({
    mode: 'payment', client_reference_id: accountId, success_url: 'http://127.0.0.1/ok', cancel_url: 'http://127.0.0.1/no',
    line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: usd * 100, product_data: { name: 'credits' } } }],
  });
  const duplicates = emu.duplicates;
  if (!deliver) emu.duplicates = 0;
  try {
    await emu.pay(session.id);
  } finally {
    emu.duplicates = duplicates;
  }
  return { session, event: emu.events.at(-1) as StripeEvent };
}

async function post(gw: TestGateway, payload: string, signature?: string) {
  return http(`${gw.url}/webhooks/stripe`, { rawBody: payload, headers: { 'content-type': 'application/json', ...(signature === undefined ? {} : { 'stripe-signature': signature }) } });
}

describe('Stripe purchases on SQLite', () => {
  let emu: StripeEmulator;
  let h: ChatHarness;
  let gw: TestGateway;
  let stripe: Stripe;
  let accountId = '';

  beforeAll(async () => {
    emu = await startStripeEmulator();
    h = await startChatHarness({ ...stripeEnv(emu), TOPUP_AMOUNTS_USD: '10,25' });
    gw = h.gw;
    emu.setWebhookUrl(`${gw.url}/webhooks/stripe`);
    stripe = sdk(emu);
    accountId = (await gw.admin('POST', '/admin/v1/accounts', { name: 'Buyer', email: 'owner@buyer.test' })).json.id;
  });
  afterAll(async () => {
    await h?.close();
    await emu?.close();
  });

  it('a purchase from the portal credits the paid amount once, as a topup with a receipt', async () => {
    const owner = await portalSession(gw, 'owner@buyer.test');
    expect((await owner.call('POST', `/accounts/${accountId}/checkout`, { amount_usd: 7 })).status).toBe(400);
    const checkout = await owner.call('POST', `/accounts/${accountId}/checkout`, { amount_usd: 10 });
    expect(checkout.status).toBe(201);
    const sessionId = /\/pay\/(cs_\w+)$/.exec(checkout.json.url)?.[1] as string;
    const created = await stripe.checkout.sessions.retrieve(sessionId);
    expect(created).toMatchObject({ mode: 'payment', amount_total: 1000, currency: 'usd', client_reference_id: accountId, customer_email: 'owner@buyer.test' });
    expect(created.success_url).toContain(`/portal/#/a/${accountId}/billing`);

    await emu.pay(sessionId);
    expect(emu.deliveries.at(-1)?.status).toBe(200);
    expect(await balanceOf(gw, accountId)).toBe(1000);
    const account = (await gw.admin('GET', `/admin/v1/accounts/${accountId}`)).json;
    expect(account.has_purchase).toBe(true);
    const ledger = (await gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger`)).json;
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ kind: 'topup', credits: 1000, job_id: null });
    const receipts = (await owner.call('GET', `/accounts/${accountId}/payments`)).json;
    expect(receipts).toMatchObject({ enabled: true, amounts_usd: [10, 25] });
    expect(receipts.data).toEqual([expect.objectContaining({ id: sessionId, amount_usd: 10, credits: 1000, refunded_usd: 0 })]);
    expect(receipts.data[0].receipt_url).toMatch(new RegExp(`^${emu.baseUrl}/receipts/ch_`));
  });

  it('the same event delivered three times, and two events for one session, credit once', async () => {
    const before = await balanceOf(gw, accountId);
    emu.duplicates = 3;
    const { session, event } = await paidSession(emu, stripe, accountId, 25);
    emu.duplicates = 1;
    expect(emu.deliveries.slice(-3).map((d) => d.status)).toEqual([200, 200, 200]);
    expect(await balanceOf(gw, accountId)).toBe(before + 2500);
    // A second event (another id, another type) naming the same session.
    const second = { ...event, id: 'evt_second_for_same_session', type: 'checkout.session.async_payment_succeeded' };
    expect(await emu.deliver(second)).toEqual([200]);
    expect(await balanceOf(gw, accountId)).toBe(before + 2500);
    expect((await stripe.checkout.sessions.retrieve(session.id)).payment_status).toBe('paid');
    expect(await ledgerMoney(gw.gateway.store, accountId)).toMatchObject({ balance: (before + 2500) * 1_000_000 });
  });

  it('concurrent deliveries of one event credit once', async () => {
    const before = await balanceOf(gw, accountId);
    const { event } = await paidSession(emu, stripe, accountId, 10, false);
    const statuses = await Promise.all(Array.from({ length: 6 }, () => emu.deliver(event)));
    expect(statuses.flat()).toEqual([200, 200, 200, 200, 200, 200]);
    expect(await balanceOf(gw, accountId)).toBe(before + 1000);
  });

  it('a forged signature, an expired timestamp and an unsigned delivery are 400 and credit nothing', async () => {
    const before = await balanceOf(gw, accountId);
    const { event } = await paidSession(emu, stripe, accountId, 10, false);
    const payload = JSON.stringify(event);
    const forged = await post(gw, payload, emu.signature(payload, { secret: 'whsec_not_the_gateways' }));
    expect(forged.status).toBe(400);
    expect(forged.json.error.code).toBe('invalid_request');
    const stale = await post(gw, payload, emu.signature(payload, { timestamp: Math.floor(Date.now() / 1000) - 301 }));
    expect(stale.status).toBe(400);
    expect((await post(gw, payload)).status).toBe(400);
    // A correct signature over other bytes (an amount changed on the way) is forged too.
    const tampered = payload.replace('"amount_total":1000', '"amount_total":9999999');
    expect(tampered).not.toBe(payload);
    expect((await post(gw, tampered, emu.signature(payload))).status).toBe(400);
    expect(await balanceOf(gw, accountId)).toBe(before);
    // The genuine delivery still credits.
    expect(await emu.deliver(event)).toEqual([200]);
    expect(await balanceOf(gw, accountId)).toBe(before + 1000);
  });

  it('an unknown account and an unknown event type are acknowledged (2xx) and change nothing', async () => {
    const before = await balanceOf(gw, accountId);
    await paidSession(emu, stripe, 'no-such-account', 10);
    expect(emu.deliveries.at(-1)?.status).toBe(200);
    const other = { ...emu.events.at(-1) as StripeEvent, id: 'evt_other_type', type: 'customer.created', data: { object: { id: 'cus_1', object: 'customer' } } };
    const payload = JSON.stringify(other);
    const answer = await post(gw, payload, emu.signature(payload));
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ received: true, outcome: 'ignored' });
    expect(await balanceOf(gw, accountId)).toBe(before);
  });

  it('a refund debits what is newly refunded, once; a balance below zero refuses every hold', async () => {
    const buyer = (await gw.admin('POST', '/admin/v1/accounts', { name: 'Refunded', email: 'r@buyer.test' })).json.id as string;
    const key = (await gw.admin('POST', `/admin/v1/accounts/${buyer}/keys`, { name: 'k' })).json.key as string;
    const { session } = await paidSession(emu, stripe, buyer, 10);
    expect(await balanceOf(gw, buyer)).toBe(1000);
    const intent = (await stripe.checkout.sessions.retrieve(session.id)).payment_intent as string;

    emu.duplicates = 2;
    await stripe.refunds.create({ payment_intent: intent, amount: 300 });
    emu.duplicates = 1;
    expect(await balanceOf(gw, buyer)).toBe(700);
    const ledger = (await gw.admin('GET', `/admin/v1/accounts/${buyer}/ledger`)).json;
    expect(ledger[0]).toMatchObject({ kind: 'payment_refund', credits: -300, job_id: null });

    // Spend some, then the rest of the payment is refunded: the balance goes below zero.
    h.openai.enqueue({ kind: 'text', text: 'Hi!', usage: { input: 1000, output: 500 } });
    expect((await gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi, max_tokens: 1000 } })).status).toBe(200);
    await stripe.refunds.create({ payment_intent: intent });
    expect(await balanceOf(gw, buyer)).toBe(-0.625);
    const refused = await gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: hi, max_tokens: 10 } });
    expect(refused.status).toBe(402);
    expect(refused.json.error.code).toBe('insufficient_credits');
    // The refund's event again: nothing more.
    await emu.deliver(emu.events.at(-1) as StripeEvent);
    expect(await balanceOf(gw, buyer)).toBe(-0.625);
    expect(await ledgerMoney(gw.gateway.store, buyer)).toEqual({ balance: -625_000, held: 0 });
    const receipts = (await (await portalSession(gw, 'r@buyer.test')).call('GET', `/accounts/${buyer}/payments`)).json.data;
    expect(receipts[0]).toMatchObject({ amount_usd: 10, refunded_usd: 10 });
  });

  it('the trial rules lift after a purchase, not after a grant', async () => {
    const trial = (await gw.admin('POST', '/admin/v1/accounts', { name: 'Trial', created_at: new Date(Date.now() - 2 * DAY).toISOString() })).json.id as string;
    const key = (await gw.admin('POST', `/admin/v1/accounts/${trial}/keys`, { name: 'k' })).json.key as string;
    // A hold over 2 credits is a trial rule.
    const big = { model: 'gpt-test', messages: hi, max_tokens: 4000 };
    await gw.admin('POST', `/admin/v1/accounts/${trial}/credits`, { credits: 50, purchase: false });
    const granted = await gw.api('/chat/completions', { key, body: big });
    expect(granted.status).toBe(429);
    expect(granted.json.error.code).toBe('trial_limit');
    await paidSession(emu, stripe, trial, 10);
    h.openai.enqueue({ kind: 'text', text: 'Hi!', usage: { input: 10, output: 5 } });
    const bought = await gw.api('/chat/completions', { key, body: big });
    expect(bought.status).toBe(200);
  });

  it('without Stripe configured the webhook and checkout answer 404', async () => {
    const plain = await startGateway();
    try {
      expect((await post(plain, '{}', 't=1,v1=x')).status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});

describe('Stripe purchases on PostgreSQL, two gateway processes', () => {
  let emu: StripeEmulator;
  let db: TestDatabase;
  let gateways: TestGateway[] = [];

  beforeAll(async () => {
    emu = await startStripeEmulator();
    db = await createDatabase();
    gateways = [await startGateway({ ...stripeEnv(emu), DATABASE_URL: db.url }), await startGateway({ ...stripeEnv(emu), DATABASE_URL: db.url })];
    emu.setWebhookUrl(`${gateways[0]?.url ?? ''}/webhooks/stripe`);
  });
  afterAll(async () => {
    for (const gw of gateways) await gw.close();
    await db?.drop();
    await emu?.close();
  });

  it('concurrent deliveries to both processes credit once, and refunds debit once', async () => {
    const [a, b] = gateways as [TestGateway, TestGateway];
    const stripe = sdk(emu);
    const accountId = (await a.admin('POST', '/admin/v1/accounts', { name: 'PG buyer' })).json.id as string;
    const { event } = await paidSession(emu, stripe, accountId, 25, false);
    const payload = JSON.stringify(event);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => post(i % 2 === 0 ? a : b, payload, emu.signature(payload))));
    expect(answers.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(answers.filter((r) => r.json.outcome === 'credited')).toHaveLength(1);
    expect(await balanceOf(b, accountId)).toBe(2500);

    const intent = (await stripe.checkout.sessions.retrieve(event.data.object.id as string)).payment_intent as string;
    emu.duplicates = 0;
    await stripe.refunds.create({ payment_intent: intent, amount: 500 });
    emu.duplicates = 1;
    const refund = JSON.stringify(emu.events.at(-1));
    const refunds = await Promise.all(Array.from({ length: 6 }, (_, i) => post(i % 2 === 0 ? a : b, refund, emu.signature(refund))));
    expect(refunds.filter((r) => r.json.outcome === 'debited')).toHaveLength(1);
    expect(await balanceOf(a, accountId)).toBe(2000);
    expect(await ledgerMoney(a.gateway.store, accountId)).toEqual({ balance: 2_000_000_000, held: 0 });
  });
});
