/**
 * A Stripe emulator for tests and the demo: the API calls the gateway makes through the official
 * `stripe` SDK (Checkout Sessions create, retrieve, with `expand`, and list by payment intent; refunds), a hosted payment
 * page that completes a session, receipts, and signed webhook delivery (`Stripe-Signature`:
 * `t=<unix seconds>,v1=<HMAC-SHA256 of "t.payload">`) with retries on failure and, when asked,
 * duplicates. `node:http` only.
 *
 *   const stripe = await startStripeEmulator();   // STRIPE_API_BASE = stripe.baseUrl, STRIPE_SECRET_KEY = stripe.secretKey
 *   stripe.setWebhookUrl(`${gateway}/webhooks/stripe`);
 */
import { createHmac, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StripeEvent {
  id: string;
  object: 'event';
  type: string;
  created: number;
  api_version: string;
  livemode: false;
  pending_webhooks: number;
  request: { id: null; idempotency_key: null };
  data: { object: Record<string, unknown> };
}

export interface StripeEmulator {
  /** STRIPE_API_BASE. */
  baseUrl: string;
  secretKey: string;
  webhookSecret: string;
  setWebhookUrl(url: string): void;
  /** Each event is delivered this many times (a duplicate delivery, as Stripe may make); default 1. */
  duplicates: number;
  /** Every event made, in order. */
  events: StripeEvent[];
  /** Every delivery attempt: the event, and the status it was answered with (0: no answer). */
  deliveries: { eventId: string; status: number }[];
  /** Completes a session as its payment page does, delivering `checkout.session.completed`. */
  pay(sessionId: string): Promise<void>;
  /** Delivers an event (again) `times` times; answers each delivery's final status. */
  deliver(event: StripeEvent, times?: number): Promise<number[]>;
  /** A Stripe-Signature header for `payload`. */
  signature(payload: string, options?: { timestamp?: number; secret?: string }): string;
  close(): Promise<void>;
}

interface Session extends Record<string, unknown> {
  id: string;
  amount_total: number;
  currency: string;
  success_url: string;
  cancel_url: string;
  payment_intent: string | null;
  payment_status: 'unpaid' | 'paid';
  status: 'open' | 'complete';
}

const API_VERSION = '2025-09-30.clover';
const RETRIES = 4;
const id = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;
const now = () => Math.floor(Date.now() / 1000);

async function read(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += (chunk as Buffer).toString();
  return text;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function stripeError(res: ServerResponse, status: number, message: string): void {
  json(res, status, { error: { type: 'invalid_request_error', message } });
}

/** `line_items[0][price_data][unit_amount]` style form fields, as the SDK encodes them. */
function lineItemsTotal(form: URLSearchParams): { total: number; currency: string } {
  let total = 0;
  let currency = 'usd';
  for (let i = 0; form.has(`line_items[${i}][quantity]`) || form.has(`line_items[${i}][price_data][unit_amount]`); i++) {
    const unit = Number(form.get(`line_items[${i}][price_data][unit_amount]`) ?? 0);
    total += unit * Number(form.get(`line_items[${i}][quantity]`) ?? 1);
    currency = form.get(`line_items[${i}][price_data][currency]`) ?? currency;
  }
  return { total, currency };
}

export async function startStripeEmulator(options: { secretKey?: string; webhookSecret?: string } = {}): Promise<StripeEmulator> {
  const secretKey = options.secretKey ?? 'sk_test_emulator_0123456789';
  const webhookSecret = options.webhookSecret ?? `whsec_${randomBytes(16).toString('hex')}`;
  const sessions = new Map<string, Session>();
  const charges = new Map<string, Record<string, unknown> & { id: string; amount: number; amount_refunded: number; payment_intent: string }>();
  const chargeOfIntent = new Map<string, string>();
  let webhookUrl: string | undefined;
  let baseUrl = '';

  const sign = (payload: string, o: { timestamp?: number; secret?: string } = {}) => {
    const t = o.timestamp ?? now();
    return `t=${t},v1=${createHmac('sha256', o.secret ?? webhookSecret).update(`${t}.${payload}`).digest('hex')}`;
  };

  const deliverOnce = async (event: StripeEvent): Promise<number> => {
    if (webhookUrl === undefined) return 0;
    for (let attempt = 0; ; attempt++) {
      const payload = JSON.stringify(event, null, 2);
      let status = 0;
      try {
        const answer = await fetch(webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': sign(payload) }, body: payload });
        status = answer.status;
        await answer.arrayBuffer();
      } catch {
        status = 0;
      }
      emulator.deliveries.push({ eventId: event.id, status });
      // Stripe retries anything but a 2xx, with backoff (hours there; milliseconds here).
      if ((status >= 200 && status < 300) || attempt >= RETRIES) return status;
      await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
    }
  };

  const emit = async (type: string, object: Record<string, unknown>) => {
    const event: StripeEvent = {
      id: id('evt'), object: 'event', type, created: now(), api_version: API_VERSION, livemode: false, pending_webhooks: 1,
      request: { id: null, idempotency_key: null }, data: { object: structuredClone(object) },
    };
    emulator.events.push(event);
    await emulator.deliver(event, emulator.duplicates);
  };

  const complete = async (session: Session) => {
    if (session.status === 'complete') return;
    const pi = id('pi');
    const charge = {
      id: id('ch'), object: 'charge', amount: session.amount_total, amount_refunded: 0, currency: session.currency, payment_intent: pi,
      paid: true, refunded: false, status: 'succeeded', created: now(), receipt_url: '',
    };
    charge.receipt_url = `${baseUrl}/receipts/${charge.id}`;
    charges.set(charge.id, charge);
    chargeOfIntent.set(pi, charge.id);
    Object.assign(session, { status: 'complete', payment_status: 'paid', payment_intent: pi });
    await emit('checkout.session.completed', session);
  };

  const expanded = (session: Session, expand: string[]) => {
    if (session.payment_intent === null || !expand.some((e) => e.startsWith('payment_intent'))) return session;
    const charge = charges.get(chargeOfIntent.get(session.payment_intent) ?? '');
    const intent = {
      id: session.payment_intent, object: 'payment_intent', amount: session.amount_total, currency: session.currency, status: 'succeeded',
      latest_charge: expand.includes('payment_intent.latest_charge') ? charge : charge?.id,
    };
    return { ...session, payment_intent: intent };
  };

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', baseUrl);
      const body = await read(req);
      const pay = /^\/pay\/(cs_\w+)$/.exec(url.pathname);
      if (pay !== null) {
        const session = sessions.get(pay[1] as string);
        if (session === undefined) return res.writeHead(404).end('No such session');
        if (req.method === 'POST') {
          await complete(session);
          return res.writeHead(303, { location: session.success_url.replace('{CHECKOUT_SESSION_ID}', session.id) }).end();
        }
        return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Stripe emulator checkout</title></head>
<body style="font-family: system-ui; max-width: 30rem; margin: 10vh auto"><h1>Pay $${(session.amount_total / 100).toFixed(2)}</h1><p>Stripe emulator: no card is charged.</p>
<form method="post"><button type="submit">Pay $${(session.amount_total / 100).toFixed(2)}</button></form><p><a href="${session.cancel_url}">Cancel</a></p></body></html>`);
      }
      const receipt = /^\/receipts\/(ch_\w+)$/.exec(url.pathname);
      if (receipt !== null) {
        const charge = charges.get(receipt[1] as string);
        if (charge === undefined) return res.writeHead(404).end('No such receipt');
        return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>Receipt</title><h1>Receipt ${charge.id}</h1><p>Paid $${(charge.amount / 100).toFixed(2)}; refunded $${(charge.amount_refunded / 100).toFixed(2)}.</p>`);
      }
      if (req.headers.authorization !== `Bearer ${secretKey}`) return stripeError(res, 401, 'Invalid API Key provided.');
      const form = new URLSearchParams(body);
      if (req.method === 'POST' && url.pathname === '/v1/checkout/sessions') {
        const { total, currency } = lineItemsTotal(form);
        if (total <= 0) return stripeError(res, 400, 'line_items: an amount is required.');
        const session: Session = {
          id: id('cs_test'), object: 'checkout.session', mode: form.get('mode') ?? 'payment', amount_total: total, amount_subtotal: total, currency,
          client_reference_id: form.get('client_reference_id'), customer_email: form.get('customer_email'), success_url: form.get('success_url') ?? '',
          cancel_url: form.get('cancel_url') ?? '', payment_intent: null, payment_status: 'unpaid', status: 'open', created: now(), livemode: false, metadata: {}, url: '',
        };
        session.url = `${baseUrl}/pay/${session.id}`;
        sessions.set(session.id, session);
        return json(res, 200, session);
      }
      if (req.method === 'GET' && url.pathname === '/v1/checkout/sessions') {
        // The sessions of a payment intent (`payment_intent=`), as Stripe's list filters them.
        const intent = url.searchParams.get('payment_intent');
        const data = [...sessions.values()].filter((s) => intent === null || s.payment_intent === intent);
        return json(res, 200, { object: 'list', url: '/v1/checkout/sessions', has_more: false, data });
      }
      const get = /^\/v1\/checkout\/sessions\/(cs_\w+)$/.exec(url.pathname);
      if (req.method === 'GET' && get !== null) {
        const session = sessions.get(get[1] as string);
        if (session === undefined) return stripeError(res, 404, `No such checkout.session: '${get[1]}'`);
        return json(res, 200, expanded(session, url.searchParams.getAll('expand[]').concat(url.searchParams.getAll('expand[0]'))));
      }
      if (req.method === 'POST' && url.pathname === '/v1/refunds') {
        const charge = charges.get(chargeOfIntent.get(form.get('payment_intent') ?? '') ?? '');
        if (charge === undefined) return stripeError(res, 404, 'No such payment_intent.');
        const amount = Number(form.get('amount') ?? charge.amount - charge.amount_refunded);
        if (amount <= 0 || charge.amount_refunded + amount > charge.amount) return stripeError(res, 400, 'Refund amount is greater than what is left to refund.');
        charge.amount_refunded += amount;
        charge.refunded = charge.amount_refunded === charge.amount;
        const refund = { id: id('re'), object: 'refund', amount, payment_intent: charge.payment_intent, charge: charge.id, status: 'succeeded', created: now() };
        await emit('charge.refunded', charge);
        return json(res, 200, refund);
      }
      return stripeError(res, 404, `Unrecognized request URL (${req.method} ${url.pathname}).`);
    })().catch((error: unknown) => {
      if (!res.headersSent) stripeError(res, 500, String(error));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const emulator: StripeEmulator = {
    baseUrl,
    secretKey,
    webhookSecret,
    setWebhookUrl: (url) => { webhookUrl = url; },
    duplicates: 1,
    events: [],
    deliveries: [],
    async pay(sessionId) {
      const session = sessions.get(sessionId);
      if (session === undefined) throw new Error(`no session ${sessionId}`);
      await complete(session);
    },
    async deliver(event, times = 1) {
      const statuses: number[] = [];
      for (let i = 0; i < times; i++) statuses.push(await deliverOnce(event));
      return statuses;
    },
    signature: sign,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  return emulator;
}
