/**
 * The paid-run core with a route that is not chat (a test-only route billing images):
 * hold, run, client abort, timeout, revocation, failure, a panic and success each end
 * in exactly one settle or refund, with the ledger equal to the balance.
 */
import { randomUUID } from 'node:crypto';
import { request as undiciRequest } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PaidRun } from '../src/billing/paid-run.ts';
import { GatewayError } from '../src/shared/errors.ts';
import { startGateway, type TestGateway } from './helpers/gateway.ts';

type Mode = 'succeed' | 'fail' | 'panic' | 'forget' | 'hang' | 'partial';

const PRICE_PER_IMAGE = 250_000;

/** What each mode does inside the run (the route's run function). */
async function work(mode: Mode, run: PaidRun, images: number, onClose: (listener: () => void) => void): Promise<void> {
  switch (mode) {
    case 'succeed':
      await run.settle(images * PRICE_PER_IMAGE, { images });
      return;
    case 'fail':
      throw new GatewayError('upstream_error', 'The media host failed.');
    case 'panic':
      throw new TypeError('a bug in the route');
    case 'forget':
      return;
    case 'partial':
      // A client close bills what was delivered so far (one image).
      onClose(() => run.stop('client_closed'));
      await new Promise<void>((resolve) => run.signal.addEventListener('abort', () => resolve()));
      if (run.stopReason === 'client_closed') await run.settle(PRICE_PER_IMAGE, { images: 1 }, 'canceled');
      return;
    case 'hang':
      onClose(() => run.stop('client_closed'));
      await new Promise<void>((_resolve, reject) => run.signal.addEventListener('abort', () => reject(new Error('aborted'))));
  }
}

describe('paid-run core on a route that is not chat', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ PROVIDER_TIMEOUT_MS: '400' }, {
      routes: (app, { runs }) => {
        app.post('/api/v1/test/paid', { config: { access: { scope: 'images', auth: 'required', rateHeaders: 'route' } } }, async (request, reply) => {
          const pass = request.gate;
          if (pass === undefined) throw new Error('no gate');
          const body = request.body as { mode: Mode; n: number };
          const key = pass.key.record;
          const run = await runs.admit({
            jobId: randomUUID(),
            kind: 'image',
            model: 'test-image',
            key: { id: key.id, familyId: key.familyId, accountId: key.accountId, expiresAt: key.expiresAt },
            quote: body.n * PRICE_PER_IMAGE,
            clientAddress: pass.clientAddress(),
            refusal: { spendingLimit: 'monthly_limit_exceeded', holdMadeOf: 'n images', lowerBy: 'lower n' },
          });
          let failure: GatewayError | undefined;
          await runs.execute(run, async (paid) => {
            try {
              await work(body.mode, paid, body.n, (listener) => reply.raw.on('close', () => { if (!reply.raw.writableFinished) listener(); }));
            } catch (thrown) {
              failure = paid.errorFor(thrown);
              throw thrown;
            }
          });
          if (failure !== undefined) throw failure;
          return { job_id: run.jobId };
        });
      },
    });
  });
  afterAll(async () => gw.close());

  async function ledgerOf(accountId: string) {
    const account = (await gw.admin('GET', `/admin/v1/accounts/${accountId}`)).json as { balance_credits: number; held_credits: number };
    const ledger = (await gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger?limit=all`)).json as { kind: string; credits: number; job_id: string | null }[];
    const rebuilt = ledger.reduce((s, e) => s + (e.kind === 'topup' || e.kind === 'grant' ? e.credits : e.kind === 'settle' ? -e.credits : 0), 0);
    return { account, ledger, rebuilt: Math.round(rebuilt * 1_000_000), balance: Math.round(account.balance_credits * 1_000_000), held: Math.round(account.held_credits * 1_000_000) };
  }

  /** Every job has one hold and exactly one settle or refund; the ledger rebuilds the balance; nothing is left held. */
  async function expectExactlyOnce(accountId: string) {
    const { ledger, rebuilt, balance, held } = await ledgerOf(accountId);
    const byJob = new Map<string, string[]>();
    for (const e of ledger) if (e.job_id !== null) byJob.set(e.job_id, [...(byJob.get(e.job_id) ?? []), e.kind]);
    for (const kinds of byJob.values()) {
      expect(kinds.filter((k) => k === 'hold')).toHaveLength(1);
      expect(kinds.filter((k) => k === 'settle' || k === 'refund')).toHaveLength(1);
    }
    expect(rebuilt).toBe(balance);
    expect(held).toBe(0);
    return { ledger, balance };
  }

  it('success: holds n images, bills what the run reports, releases the rest', async () => {
    const { key, accountId } = await gw.account({ credits: 10, key: { scopes: ['images'] } });
    const r = await gw.api('/test/paid', { key, body: { mode: 'succeed', n: 2 } });
    expect(r.status).toBe(200);
    const { ledger, balance } = await expectExactlyOnce(accountId);
    expect(balance).toBe(10_000_000 - 2 * PRICE_PER_IMAGE);
    expect(ledger.map((e) => e.kind).sort()).toEqual(['hold', 'settle', 'topup']);
  });

  it('a failure, a panic and a run that settles nothing are each refunded in full, once', async () => {
    const { key, accountId } = await gw.account({ credits: 10, key: { scopes: ['images'] } });
    const failed = await gw.api('/test/paid', { key, body: { mode: 'fail', n: 1 } });
    expect(failed.status).toBe(502);
    expect(failed.json.error.code).toBe('upstream_error');
    const panicked = await gw.api('/test/paid', { key, body: { mode: 'panic', n: 1 } });
    expect(panicked.status).toBe(500);
    expect(panicked.json.error.code).toBe('internal_error');
    expect(panicked.text).not.toContain('a bug in the route');
    const forgotten = await gw.api('/test/paid', { key, body: { mode: 'forget', n: 1 } });
    expect(forgotten.status).toBe(200);
    const { ledger, balance } = await expectExactlyOnce(accountId);
    expect(balance).toBe(10_000_000);
    expect(ledger.filter((e) => e.kind === 'refund')).toHaveLength(3);
  });

  it('a timeout stops the run (504 provider_timeout) and refunds it', async () => {
    const { key, accountId } = await gw.account({ credits: 10, key: { scopes: ['images'] } });
    const r = await gw.api('/test/paid', { key, body: { mode: 'hang', n: 1 } });
    expect(r.status).toBe(504);
    expect(r.json.error.code).toBe('provider_timeout');
    const { balance } = await expectExactlyOnce(accountId);
    expect(balance).toBe(10_000_000);
  });

  it('a key revoked mid-run ends it with 401 invalid_api_key and a refund', async () => {
    const { key, keyId, accountId } = await gw.account({ credits: 10, key: { scopes: ['images'] } });
    const pending = gw.api('/test/paid', { key, body: { mode: 'hang', n: 3 } });
    await new Promise((r) => setTimeout(r, 100));
    expect((await gw.admin('POST', `/admin/v1/keys/${keyId}/revoke`)).status).toBe(200);
    const r = await pending;
    expect(r.status).toBe(401);
    expect(r.json.error).toEqual({ message: 'Invalid API key', type: 'authentication_error', code: 'invalid_api_key' });
    const { balance } = await expectExactlyOnce(accountId);
    expect(balance).toBe(10_000_000);
  });

  it('a client abort: refunded when nothing was delivered, billed for what was when something was', async () => {
    const { key, accountId } = await gw.account({ credits: 10, key: { scopes: ['images'] } });
    for (const mode of ['hang', 'partial'] as const) {
      const controller = new AbortController();
      const pending = undiciRequest(`${gw.url}/api/v1/test/paid`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ mode, n: 2 }),
        signal: controller.signal,
      }).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 100));
      controller.abort();
      await pending;
    }
    // The core settles asynchronously after the socket closed.
    for (let i = 0; i < 50 && (await ledgerOf(accountId)).held !== 0; i++) await new Promise((r) => setTimeout(r, 20));
    const { ledger, balance } = await expectExactlyOnce(accountId);
    expect(ledger.filter((e) => e.kind === 'refund')).toHaveLength(1);
    expect(ledger.filter((e) => e.kind === 'settle')).toHaveLength(1);
    expect(balance).toBe(10_000_000 - PRICE_PER_IMAGE);
  });

  it('a hold the balance cannot cover is refused with 402 and nothing is created', async () => {
    const { key, accountId } = await gw.account({ credits: 0.3, key: { scopes: ['images'] } });
    const r = await gw.api('/test/paid', { key, body: { mode: 'succeed', n: 2 } });
    expect(r.status).toBe(402);
    expect(r.json.error.code).toBe('insufficient_credits');
    const { ledger } = await expectExactlyOnce(accountId);
    expect(ledger.map((e) => e.kind)).toEqual(['topup']);
  });

  it('many concurrent runs of every outcome: each job settles or refunds exactly once, ledger = balance', async () => {
    const { key, accountId } = await gw.account({ credits: 100, key: { scopes: ['images'], requests_per_minute: 600 } });
    const modes: Mode[] = ['succeed', 'fail', 'panic', 'forget'];
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => gw.api('/test/paid', { key, body: { mode: modes[i % 4], n: 1 } })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(20);
    const { balance } = await expectExactlyOnce(accountId);
    expect(balance).toBe(100_000_000 - 10 * PRICE_PER_IMAGE);
  });
});
