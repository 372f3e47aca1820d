/**
 * A gateway process stopped gracefully (SIGTERM, as in every rolling deploy) while a run is in
 * flight, beside another process on the same PostgreSQL + Redis with a short lease (LEASE_MS): the
 * stopping process keeps its lease until its run has ended, so the run the client received is
 * settled, never refunded by the other process; and it exits as soon as its last answer is out.
 */
import { describe, expect, it } from 'vitest';
import { http } from './helpers/gateway.ts';
import { waitFor } from './helpers/media-host.ts';
import { processPair } from './helpers/process-pair.ts';

const LEASE_MS = 1_500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const pair = processPair(LEASE_MS);
const admin = (method: 'GET' | 'POST', path: string, body?: unknown) => pair.admin(method, path, body);

describe('SIGTERM of a process with a run in flight', () => {
  it('the run, answered 200 after the SIGTERM and after several lease periods, is settled once; the process then exits at once', async () => {
    const account = (await admin('POST', '/admin/v1/accounts', { name: 'stop', has_purchase: true })).json as { id: string };
    await admin('POST', `/admin/v1/accounts/${account.id}/credits`, { credits: 100, purchase: true });
    const key = (await admin('POST', `/admin/v1/accounts/${account.id}/keys`, { name: 'k', requests_per_minute: 6_000 })).json.key as string;

    // The provider answers after four lease periods: without renewal the other process would refund the hold meanwhile.
    pair.openai.enqueue({ kind: 'text', text: 'slow but delivered', usage: { input: 10, output: 5 } }, { delayMs: 4 * LEASE_MS });
    const answer = http(`${pair.first.url}/api/v1/chat/completions`, { key, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], max_tokens: 100 } });
    await waitFor(async () => pair.openai.requests.length, (n) => n >= 1, 10_000);
    const stopped = pair.first.stop();
    const response = await answer;
    const answeredAt = Date.now();
    expect(response.status).toBe(200);
    expect(response.json.choices[0].message.content).toBe('slow but delivered');
    await stopped;
    // Not the 65 s of the keep-alive timeout: the idle connection is closed once its answer is out.
    expect(Date.now() - answeredAt).toBeLessThan(5_000);

    // One more lease period: the other process has swept by now, and refunded nothing.
    await sleep(LEASE_MS + 500);
    const ledger = (await admin('GET', `/admin/v1/accounts/${account.id}/ledger?limit=all`)).json as { kind: string; credits: number }[];
    expect(ledger.filter((e) => e.kind !== 'topup').map((e) => e.kind).sort()).toEqual(['hold', 'settle']);
    const after = (await admin('GET', `/admin/v1/accounts/${account.id}`)).json as { balance_credits: number; held_credits: number };
    expect(after.held_credits).toBe(0);
    expect(after.balance_credits).toBeLessThan(100);
  }, 60_000);
});
