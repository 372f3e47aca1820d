/**
 * A gateway process dies with runs in flight while another lives (issue 14): two processes on
 * one PostgreSQL database and Redis with a short lease (LEASE_MS). One is SIGKILLed while its
 * runs wait on a slow provider; the survivor, with runs of its own in flight, refunds the dead
 * one's holds once their lease has run out (not before), each exactly once, and settles its own
 * runs normally: ledger = balance, nothing left held.
 */
import { describe, expect, it } from 'vitest';
import { http, type HttpResponse } from './helpers/gateway.ts';
import { waitFor } from './helpers/media-host.ts';
import type { GatewayProcess } from './helpers/process.ts';
import { processPair } from './helpers/process-pair.ts';

const LEASE_MS = 1_500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const pair = processPair(LEASE_MS);
const admin = (method: 'GET' | 'POST', path: string, body?: unknown) => pair.admin(method, path, body);

const chat = (gw: GatewayProcess, key: string, i: number): Promise<HttpResponse | undefined> =>
  http(`${gw.url}/api/v1/chat/completions`, { key, body: { model: 'gpt-test', messages: [{ role: 'user', content: `run ${i}` }], max_tokens: 100 } })
    .catch(() => undefined);

interface LedgerRow {
  job_id: string;
  kind: string;
  credits: number;
}

async function state(accountId: string) {
  // The ledger first: the account read after it reflects at least every movement the ledger shows.
  const ledger = (await admin('GET', `/admin/v1/accounts/${accountId}/ledger?limit=all`)).json as LedgerRow[];
  const account = (await admin('GET', `/admin/v1/accounts/${accountId}`)).json as { balance_credits: number; held_credits: number };
  return { ...account, ledger, holds: ledger.filter((e) => e.kind === 'hold') };
}

describe('SIGKILL of one of two processes with runs in flight', () => {
  it('the survivor refunds the dead process’s holds once its lease has run out, each exactly once, and settles its own runs in flight', async () => {
    const account = (await admin('POST', '/admin/v1/accounts', { name: 'crash', has_purchase: true })).json as { id: string };
    await admin('POST', `/admin/v1/accounts/${account.id}/credits`, { credits: 100, purchase: true });
    const key = (await admin('POST', `/admin/v1/accounts/${account.id}/keys`, { name: 'k', requests_per_minute: 6_000 })).json.key as string;

    // The doomed process's runs: the provider would answer after a minute.
    const DOOMED_RUNS = 6;
    for (let i = 0; i < DOOMED_RUNS; i++) pair.openai.enqueue({ kind: 'text', text: `late ${i}`, usage: { input: 10, output: 5 } }, { delayMs: 60_000 });
    const lost = Array.from({ length: DOOMED_RUNS }, (_, i) => chat(pair.first, key, i));
    await waitFor(async () => pair.openai.requests.length, (n) => n >= DOOMED_RUNS, 10_000);
    // The survivor's runs: answered well after the dead process's lease has run out and been swept.
    const OWN_RUNS = 4;
    const ownDelay = 3 * LEASE_MS;
    for (let i = 0; i < OWN_RUNS; i++) pair.openai.enqueue({ kind: 'text', text: `own ${i}`, usage: { input: 10, output: 5 } }, { delayMs: ownDelay });
    let ownAnswered = false;
    const own = Promise.all(Array.from({ length: OWN_RUNS }, (_, i) => chat(pair.second, key, 100 + i))).finally(() => (ownAnswered = true));
    await waitFor(async () => pair.openai.requests.length, (n) => n >= DOOMED_RUNS + OWN_RUNS, 10_000);
    const held = await waitFor(() => state(account.id), (s) => s.holds.length === DOOMED_RUNS + OWN_RUNS, 10_000);
    const hold = held.holds[0]?.credits ?? 0;
    expect(held.held_credits).toBeCloseTo((DOOMED_RUNS + OWN_RUNS) * hold, 6);

    await pair.first.kill();
    const killedAt = Date.now();
    await Promise.all(lost);
    // Its lease outlives it (renewed at most a third of a lease ago): nothing is refunded yet.
    await sleep(LEASE_MS / 3);
    expect((await state(account.id)).ledger.filter((e) => e.kind === 'refund')).toEqual([]);

    // Then the survivor refunds the dead process's holds, while its own runs are still in flight.
    const swept = await waitFor(() => state(account.id), (s) => s.ledger.filter((e) => e.kind === 'refund').length >= DOOMED_RUNS, 4 * LEASE_MS);
    const tookMs = Date.now() - killedAt;
    expect(tookMs).toBeGreaterThanOrEqual((2 * LEASE_MS) / 3);
    expect(ownAnswered).toBe(false);
    expect(swept.held_credits).toBeCloseTo(OWN_RUNS * hold, 6);

    // The survivor's own runs settle normally.
    const answers = await own;
    expect(answers.map((r) => r?.status)).toEqual(Array(OWN_RUNS).fill(200));
    // A few more sweeps change nothing: each hold was closed exactly once.
    await sleep(LEASE_MS);
    const after = await state(account.id);
    const closings = (jobId: string) => after.ledger.filter((e) => e.job_id === jobId && (e.kind === 'settle' || e.kind === 'refund')).map((e) => e.kind);
    const endings = after.holds.map((h) => closings(h.job_id));
    expect(endings.filter((e) => e.length === 1 && e[0] === 'refund')).toHaveLength(DOOMED_RUNS);
    expect(endings.filter((e) => e.length === 1 && e[0] === 'settle')).toHaveLength(OWN_RUNS);
    expect(endings.every((e) => e.length === 1)).toBe(true);
    for (const refund of after.ledger.filter((e) => e.kind === 'refund')) expect(refund.credits).toBe(hold);
    const sum = after.ledger.reduce((s, e) => s + (e.kind === 'topup' ? e.credits : e.kind === 'settle' ? -e.credits : 0), 0);
    expect(after.held_credits).toBe(0);
    expect(after.balance_credits).toBeCloseTo(sum, 6);
    expect(pair.second.output()).toContain('refunded holds left by a gateway process that is gone');
  }, 60_000);
});
