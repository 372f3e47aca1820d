/**
 * A chat run whose settle fails once (the database connection dropped at that moment): the
 * client still gets its completion, not an internal error, and is billed exactly once when the
 * settle applies on a later attempt. Before, it got a 500 and was billed anyway.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../emulators/index.ts';
import type { Emulator } from '../emulators/types.ts';
import { openStore } from '../src/store/open-store.ts';
import { writeCatalog } from './fixtures/catalog.ts';
import { chatCatalog, costMicro, money, sseEvents } from './helpers/chat.ts';
import { startGateway, type TestGateway } from './helpers/gateway.ts';
import { withParts } from './helpers/store-double.ts';

describe('a settle that fails once', () => {
  let openai: Emulator;
  let gw: TestGateway;
  let failSettles = 0;
  beforeAll(async () => {
    openai = await startEmulator('openai');
    const inner = await openStore('sqlite::memory:');
    const store = withParts(inner, {
      money: {
        settle: (...args) => (failSettles-- > 0 ? Promise.reject(new Error('Connection terminated unexpectedly')) : inner.money.settle(...args)),
      },
    });
    gw = await startGateway({ CATALOG_FILE: writeCatalog(chatCatalog()), PROVIDER_1_BASE_URL: openai.baseUrl, PROVIDER_1_API_KEY: openai.apiKey }, { store });
  });
  afterAll(async () => {
    await gw.close();
    await openai.close();
  });

  for (const stream of [false, true]) {
    it(`${stream ? 'stream' : 'non-stream'}: the completion is answered; the charge applies once, later`, async () => {
      const { key, accountId } = await gw.account({ credits: 100 });
      openai.enqueue({ kind: 'text', text: 'Hello!', usage: { input: 12, output: 3 } });
      failSettles = 1;
      const answer = await gw.api('/chat/completions', { key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 50, stream } });
      expect(answer.status).toBe(200);
      if (stream) {
        const deltas = sseEvents(answer.text).filter((e) => e.startsWith('{')).map((e) => JSON.parse(e).choices[0]?.delta?.content ?? '');
        expect(deltas.join('')).toBe('Hello!');
        expect(sseEvents(answer.text).at(-1)).toBe('[DONE]');
      }
      else expect(answer.json.choices[0].message.content).toBe('Hello!');
      expect(answer.text).not.toContain('internal_error');

      const charge = costMicro(12, 3);
      for (const end = Date.now() + 5_000; (await money(gw, accountId)).held !== 0 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
      expect(await money(gw, accountId)).toEqual({ balance: 100_000_000 - charge, held: 0 });
      const ledger = (await gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger`)).json as { kind: string; credits: number }[];
      expect(ledger.filter((e) => e.kind === 'settle').map((e) => Math.round(e.credits * 1_000_000))).toEqual([charge]);
    });
  }

  it('a gateway that stops right after such an answer first waits for the retried settle to apply, under its lease', async () => {
    const inner = await openStore('sqlite::memory:');
    let failing = 1;
    const store = withParts(inner, {
      money: {
        settle: (...args) => (failing-- > 0 ? Promise.reject(new Error('Connection terminated unexpectedly')) : inner.money.settle(...args)),
      },
    });
    const stopping = await startGateway({ CATALOG_FILE: writeCatalog(chatCatalog()), PROVIDER_1_BASE_URL: openai.baseUrl, PROVIDER_1_API_KEY: openai.apiKey }, { store });
    try {
      const { key, accountId } = await stopping.account({ credits: 100 });
      openai.enqueue({ kind: 'text', text: 'Bye', usage: { input: 5, output: 2 } });
      const answer = await stopping.api('/chat/completions', { key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 50 } });
      expect(answer.status).toBe(200);
      await stopping.close();
      // Settled by the time close() returned, not left held for a peer to refund.
      expect(await inner.jobs.getJob(answer.headers['x-service-job-id'] as string)).toMatchObject({ status: 'succeeded' });
      expect(await inner.accounts.getAccount(accountId)).toMatchObject({ balance: 100_000_000 - costMicro(5, 2), held: 0 });
    } finally {
      await inner.close();
    }
  });
});
