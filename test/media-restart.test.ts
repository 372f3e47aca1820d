/**
 * A media job outlives its gateway process: SIGKILL while a video job is processing at its
 * host → the next process adopts it, polls it to the end and bills it exactly once. A job
 * whose host never answered the create (no prediction id) is refunded as an orphan instead.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorEnv, startEmulator } from '../emulators/index.ts';
import type { Emulator } from '../emulators/types.ts';
import { openStore } from '../src/store/open-store.ts';
import { writeCatalog } from './fixtures/catalog.ts';
import { ADMIN_TOKEN, http } from './helpers/gateway.ts';
import { mediaCatalog, waitFor } from './helpers/media-host.ts';
import { startGatewayProcess } from './helpers/process.ts';

describe('media jobs across a crash', () => {
  let host: Emulator;
  let dir: string;
  beforeAll(async () => {
    host = await startEmulator('predictions');
    dir = mkdtempSync(join(tmpdir(), 'gw-media-crash-'));
  });
  afterAll(async () => {
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const database = () => `sqlite:${join(dir, 'gateway.db')}`;
  const env = () => ({
    DATABASE_URL: database(),
    ADMIN_TOKEN,
    CATALOG_FILE: writeCatalog(mediaCatalog()),
    MEDIA_POLL_MS: '50',
    MEDIA_SYNC_WAIT_MS: '200',
    ...emulatorEnv(host),
  });

  it('SIGKILL while a video job is processing: the next process resumes it, it succeeds and is billed once; a job the host never took is refunded', async () => {
    const first = await startGatewayProcess(env());
    const admin = (url: string, method: 'GET' | 'POST', path: string, body?: unknown) => http(url + path, { method, body, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const account = (await admin(first.url, 'POST', '/admin/v1/accounts', { name: 'crash', has_purchase: true })).json;
    await admin(first.url, 'POST', `/admin/v1/accounts/${account.id}/credits`, { credits: 500, purchase: true });
    const key = (await admin(first.url, 'POST', `/admin/v1/accounts/${account.id}/keys`, { name: 'k', scopes: ['images', 'video'] })).json.key;

    host.enqueue({ kind: 'prediction', durationMs: 5000 });
    const video = await http(`${first.url}/api/v1/videos/generations`, { key, body: { model: 'clip', prompt: 'survives a crash' } });
    expect(video.status).toBe(202);
    const videoJob = video.json.job_id as string;
    // An image whose create call never comes back: the host has not taken it, it has no prediction id.
    host.enqueue({ kind: 'hang' });
    const image = http(`${first.url}/api/v1/images/generations`, { key, body: { model: 'pic', prompt: 'lost' } }).catch(() => undefined);
    const held = await waitFor(async () => (await admin(first.url, 'GET', `/admin/v1/accounts/${account.id}`)).json.held_credits as number, (h) => h === 98 + 4);
    expect(held).toBe(102);
    await waitFor(async () => host.requests.length, (n) => n >= 2);
    await first.kill();
    await image;
    const pollsBefore = host.requests.filter((q) => q.method === 'GET').length;

    const second = await startGatewayProcess(env());
    try {
      const state = await waitFor(async () => (await admin(second.url, 'GET', `/admin/v1/accounts/${account.id}`)).json, (s) => s.held_credits === 0, 15_000);
      expect(state).toMatchObject({ balance_credits: 500 - 98, held_credits: 0, available_credits: 402 });
      const ledger = (await admin(second.url, 'GET', `/admin/v1/accounts/${account.id}/ledger?limit=all`)).json as { kind: string; job_id: string | null }[];
      expect(ledger.filter((e) => e.job_id === videoJob).map((e) => e.kind).sort()).toEqual(['hold', 'settle']);
      const other = ledger.filter((e) => e.job_id !== null && e.job_id !== videoJob);
      expect(other.map((e) => e.kind).sort()).toEqual(['hold', 'refund']);
      // The second process polled the host for the adopted job.
      expect(host.requests.filter((q) => q.method === 'GET').length).toBeGreaterThan(pollsBefore);
      expect(second.output()).toContain('resuming a media job');
      // A client polling the job sees it succeeded, with its video and what it cost.
      const polled = await http(`${second.url}/api/v1/jobs/${videoJob}`, { key });
      expect(polled.status).toBe(200);
      expect(polled.json).toMatchObject({ id: videoJob, object: 'job', kind: 'video', status: 'succeeded', cost_credits: 98 });
      expect(JSON.stringify(polled.json.output)).toMatch(/out-0\.mp4/);
    } finally {
      await second.stop();
    }

    const store = await openStore(database());
    try {
      const job = await store.jobs.getJob(videoJob);
      expect(job).toMatchObject({ kind: 'video', status: 'succeeded', held: 98_000_000, cost: 98_000_000 });
      const media = await store.mediaJobs.get(videoJob);
      expect(media?.predictionIds).toHaveLength(1);
      expect(media?.outputs?.[0]).toMatch(/out-0\.mp4$/);
      expect(media?.usage).toEqual({ videos: 1 });
    } finally {
      await store.close();
    }
  }, 90_000);
});
