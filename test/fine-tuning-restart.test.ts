/**
 * A fine-tuning job outlives its gateway process: SIGKILL while the job trains at the
 * provider → the next process adopts it, polls it to the end and bills its trained tokens
 * exactly once. A job the provider never took (its create never answered) is refunded as
 * an orphan instead.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorEnv, startEmulator } from '../emulators/index.ts';
import type { Emulator } from '../emulators/types.ts';
import { openStore } from '../src/store/open-store.ts';
import { dataUrl, fineTuningCatalog, holdOf, jsonl, TRAINING_MICRO_PER_TOKEN } from './helpers/fine-tuning.ts';
import { ADMIN_TOKEN, http } from './helpers/gateway.ts';
import { waitFor } from './helpers/media-host.ts';
import { startGatewayProcess } from './helpers/process.ts';

describe('fine-tuning jobs across a crash', () => {
  let emu: Emulator;
  let dir: string;
  beforeAll(async () => {
    emu = await startEmulator('openai');
    dir = mkdtempSync(join(tmpdir(), 'gw-ft-crash-'));
  });
  afterAll(async () => {
    await emu.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const database = () => `sqlite:${join(dir, 'gateway.db')}`;
  const env = () => ({
    DATABASE_URL: database(),
    ADMIN_TOKEN,
    CATALOG_FILE: fineTuningCatalog(),
    FINE_TUNING_POLL_MS: '50',
    ...emulatorEnv(emu),
  });
  const admin = (url: string, method: 'GET' | 'POST', path: string, body?: unknown) => http(url + path, { method, body, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });

  it('SIGKILL while a job trains: the next process resumes it and bills its trained tokens once; a job the provider never took is refunded', async () => {
    const first = await startGatewayProcess(env());
    const account = (await admin(first.url, 'POST', '/admin/v1/accounts', { name: 'crash', has_purchase: true })).json;
    await admin(first.url, 'POST', `/admin/v1/accounts/${account.id}/credits`, { credits: 100, purchase: true });
    const key = (await admin(first.url, 'POST', `/admin/v1/accounts/${account.id}/keys`, { name: 'k', scopes: ['fine_tuning', 'jobs'] })).json.key as string;

    // About 3 s of training: still running when the process dies.
    emu.enqueue({ kind: 'fine_tuning', stepMs: 250, stepsPerEpoch: 6 });
    const text = jsonl(5);
    const created = await http(`${first.url}/api/v1/fine_tuning/jobs`, { key, body: { model: 'tune-me', training_file: dataUrl(text), hyperparameters: { n_epochs: 2 } } });
    expect(created.status).toBe(200);
    const jobId = created.json.id as string;
    // A second job whose create call never comes back: the provider has not taken it.
    emu.enqueue({ kind: 'hang' });
    const lost = http(`${first.url}/api/v1/fine_tuning/jobs`, { key, body: { model: 'tune-me', training_file: dataUrl(jsonl(1)) } }).catch(() => undefined);
    const heldBoth = (await holdOf(text, 2)) + (await holdOf(jsonl(1), 3));
    await waitFor(async () => Math.round(((await admin(first.url, 'GET', `/admin/v1/accounts/${account.id}`)).json.held_credits as number) * 1_000_000), (h) => h === heldBoth);
    await waitFor(async () => emu.requests.filter((r) => r.method === 'POST' && r.path === '/v1/fine_tuning/jobs').length, (n) => n >= 2);
    await first.kill();
    await lost;
    const pollsBefore = emu.requests.filter((r) => r.method === 'GET').length;

    const second = await startGatewayProcess(env());
    try {
      const state = await waitFor(async () => (await admin(second.url, 'GET', `/admin/v1/accounts/${account.id}`)).json, (s) => s.held_credits === 0, 20_000);
      const view = (await http(`${second.url}/api/v1/fine_tuning/jobs/${jobId}`, { key })).json;
      expect(view.status).toBe('succeeded');
      const trained = view.trained_tokens as number;
      expect(trained).toBeGreaterThan(0);
      expect(state).toMatchObject({ balance_credits: 100 - (trained * TRAINING_MICRO_PER_TOKEN) / 1_000_000, held_credits: 0 });
      const ledger = (await admin(second.url, 'GET', `/admin/v1/accounts/${account.id}/ledger?limit=all`)).json as { kind: string; job_id: string | null }[];
      expect(ledger.filter((e) => e.job_id === jobId).map((e) => e.kind).sort()).toEqual(['hold', 'settle']);
      expect(ledger.filter((e) => e.job_id !== null && e.job_id !== jobId).map((e) => e.kind).sort()).toEqual(['hold', 'refund']);
      expect(emu.requests.filter((r) => r.method === 'GET').length).toBeGreaterThan(pollsBefore);
      expect(second.output()).toContain('resuming a fine-tuning job');
      const polled = await http(`${second.url}/api/v1/jobs/${jobId}`, { key });
      expect(polled.json).toMatchObject({ kind: 'fine_tuning', status: 'succeeded', usage: { trained_tokens: trained } });
    } finally {
      await second.stop();
    }

    const store = await openStore(database());
    try {
      expect(await store.jobs.getJob(jobId)).toMatchObject({ kind: 'fine_tuning', status: 'succeeded' });
      expect((await store.fineTuningJobs.get(jobId))?.record.providerJobId).toMatch(/^ftjob-/);
    } finally {
      await store.close();
    }
  }, 90_000);
});
