/**
 * Speech and transcription jobs across a crash: SIGKILL while each is processing at its host →
 * the next process adopts and resumes them and runs the same output check a non-resumed run does
 * before billing. A broken output (a delivery URL that cannot be fetched, a host value that is no
 * transcript) is refunded, with the error code a non-resumed run gets; a good one is billed
 * exactly as a non-resumed one. GET /jobs/{id} shows the same record either way.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorEnv, startEmulator } from '../emulators/index.ts';
import type { Emulator, PredictionScenario } from '../emulators/types.ts';
import { writeCatalog } from './fixtures/catalog.ts';
import { wav } from './helpers/audio.ts';
import { AUDIO_CATALOG, MICRO_PER_CHARACTER, postForm } from './helpers/audio-host.ts';
import { ADMIN_TOKEN, http, type HttpResponse } from './helpers/gateway.ts';
import { waitFor } from './helpers/media-host.ts';
import { startGatewayProcess, type GatewayProcess } from './helpers/process.ts';

interface Ledger {
  kind: string;
  job_id: string | null;
  credits: number;
}

/** One kind of run, its scenario at the host and its request. */
interface Case {
  name: string;
  scenario: (host: Emulator) => PredictionScenario;
  send: (url: string, key: string) => Promise<HttpResponse>;
}

const SPEECH_INPUT = 'Resumed speech';
const BROKEN_SPEECH: Case = {
  name: 'speech, audio that cannot be fetched',
  // A delivery URL of the host that answers 404.
  scenario: (host) => ({ kind: 'prediction', durationMs: 5000, value: `${host.baseUrl.replace(/\/v1$/, '')}/files/no-such-run/speech-0.mp3` }),
  send: (url, key) => http(`${url}/api/v1/audio/speech`, { key, body: { model: 'tts', input: SPEECH_INPUT } }),
};
const GOOD_SPEECH: Case = {
  name: 'speech, good audio',
  scenario: () => ({ kind: 'prediction', durationMs: 5000 }),
  send: BROKEN_SPEECH.send,
};
const BROKEN_TRANSCRIPTION: Case = {
  name: 'transcription, no transcript',
  scenario: () => ({ kind: 'prediction', durationMs: 5000, predictTime: 0.8, value: 42 }),
  send: (url, key) => postForm(`${url}/api/v1/audio/transcriptions`, key, { model: 'stt' }, { bytes: wav(2), type: 'audio/wav' }),
};
const CASES = [BROKEN_SPEECH, GOOD_SPEECH, BROKEN_TRANSCRIPTION];

describe('audio jobs across a crash', () => {
  let host: Emulator;
  let dir: string;
  beforeAll(async () => {
    host = await startEmulator('predictions');
    dir = mkdtempSync(join(tmpdir(), 'gw-audio-crash-'));
  });
  afterAll(async () => {
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const env = () => ({
    DATABASE_URL: `sqlite:${join(dir, 'gateway.db')}`,
    ADMIN_TOKEN,
    CATALOG_FILE: writeCatalog(AUDIO_CATALOG),
    MEDIA_POLL_MS: '50',
    ...emulatorEnv(host),
  });
  const admin = (gw: GatewayProcess, method: 'GET' | 'POST', path: string, body?: unknown) => http(gw.url + path, { method, body, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const creates = () => host.requests.filter((q) => q.method === 'POST' && /\/predictions$/.test(q.path)).length;

  /** An account of 100 credits with an audio key. */
  async function account(gw: GatewayProcess): Promise<{ id: string; key: string }> {
    const created = (await admin(gw, 'POST', '/admin/v1/accounts', { name: 'audio-crash', has_purchase: true })).json as { id: string };
    await admin(gw, 'POST', `/admin/v1/accounts/${created.id}/credits`, { credits: 100, purchase: true });
    const key = (await admin(gw, 'POST', `/admin/v1/accounts/${created.id}/keys`, { name: 'k', scopes: ['audio'] })).json.key as string;
    return { id: created.id, key };
  }

  const ledger = async (gw: GatewayProcess, accountId: string) => (await admin(gw, 'GET', `/admin/v1/accounts/${accountId}/ledger?limit=all`)).json as Ledger[];
  const balance = async (gw: GatewayProcess, accountId: string) => (await admin(gw, 'GET', `/admin/v1/accounts/${accountId}`)).json as { balance_credits: number; held_credits: number };

  /** The job's record as its client polls it, without what differs from run to run. */
  async function polled(gw: GatewayProcess, key: string, jobId: string) {
    const job = await http(`${gw.url}/api/v1/jobs/${jobId}`, { key });
    expect(job.status).toBe(200);
    const { id, created_at, finished_at, ...rest } = job.json as Record<string, unknown>;
    expect([id, typeof created_at, typeof finished_at]).toEqual([jobId, 'number', 'number']);
    // Delivery URLs name each run's own prediction.
    return JSON.parse(JSON.stringify(rest).replace(/\/files\/[a-z0-9]+\//g, '/files/<run>/')) as Record<string, unknown>;
  }

  it('SIGKILL while speech and transcription jobs run: the next process checks their outputs as a non-resumed run does — broken refunded, good billed the same', async () => {
    const first = await startGatewayProcess(env());
    // One account per job: its ledger names the job.
    const accounts: { id: string; key: string }[] = [];
    for (const c of CASES) {
      const a = await account(first);
      accounts.push(a);
      const before = creates();
      host.enqueue(c.scenario(host));
      void c.send(first.url, a.key).catch(() => undefined);
      await waitFor(async () => creates(), (n) => n > before);
    }
    for (const a of accounts) await waitFor(() => ledger(first, a.id), (rows) => rows.some((r) => r.kind === 'hold'));
    await first.kill();

    const second = await startGatewayProcess(env());
    try {
      const resumed: string[] = [];
      for (const [i, a] of accounts.entries()) {
        const rows = await waitFor(() => ledger(second, a.id), (r) => r.some((e) => e.kind === 'settle' || e.kind === 'refund'), 20_000);
        resumed[i] = rows.find((e) => e.kind === 'hold')?.job_id as string;
        expect(rows.map((e) => e.kind).sort(), CASES[i]?.name).toEqual(i === 1 ? ['hold', 'settle', 'topup'] : ['hold', 'refund', 'topup']);
      }
      expect(second.output().match(/resuming a media job/g)).toHaveLength(3);

      // Broken outputs: refunded in full, nothing held.
      for (const i of [0, 2]) expect(await balance(second, accounts[i]?.id as string), CASES[i]?.name).toMatchObject({ balance_credits: 100, held_credits: 0 });
      // The good speech: its characters at the model's price.
      const cost = SPEECH_INPUT.length * MICRO_PER_CHARACTER;
      expect(await balance(second, accounts[1]?.id as string)).toMatchObject({ balance_credits: 100 - cost / 1_000_000, held_credits: 0 });

      // The same runs without a crash, on the second process: the client's answer, and the job it polls.
      for (const [i, c] of CASES.entries()) {
        const a = await account(second);
        host.enqueue({ ...c.scenario(host), durationMs: 20 });
        const answer = await c.send(second.url, a.key);
        expect(answer.status, c.name).toBe(i === 1 ? 200 : 502);
        if (i !== 1) expect(answer.json.error.code, c.name).toBe('upstream_error');
        const direct = answer.headers['x-job-id'] as string;
        await waitFor(() => ledger(second, a.id), (r) => r.some((e) => e.kind === 'settle' || e.kind === 'refund'));
        const view = await polled(second, accounts[i]?.key as string, resumed[i] as string);
        expect(view, c.name).toEqual(await polled(second, a.key, direct));
        expect(view, c.name).toMatchObject(i === 1
          ? { kind: 'speech', status: 'succeeded', cost_credits: cost / 1_000_000, usage: { characters: SPEECH_INPUT.length }, output: { urls: [expect.stringMatching(/speech-0\.mp3$/)] } }
          : { status: 'failed', cost_credits: 0, error: { code: 'upstream_error' } });
      }
    } finally {
      await second.stop();
    }
  }, 90_000);
});
