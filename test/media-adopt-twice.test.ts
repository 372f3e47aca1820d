/**
 * MediaJobRunner.adopt never resumes a job a second time in the process that has ended it: a job
 * whose refund (or settle) failed once stays `processing` and owned by this process until the
 * background retry applies, and a sweep in that window (another process gone) hands it back to
 * adopt. Resuming it then polled the host and ran the output check again, and a check that passed
 * the second time settled the run before the retried refund: a client told "nothing was charged"
 * (502) was billed.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InFlightRuns } from '../src/billing/in-flight.ts';
import { PaidRuns } from '../src/billing/paid-run.ts';
import type { MoneyStore } from '../src/store/money-contract.ts';
import type { ProviderEndpoint } from '../src/config.ts';
import { MediaJobRunner, type MediaPlan, type OutputChecks } from '../src/media/job-runner.ts';
import { MEDIA_HOSTS, type MediaHost, type MediaHostId, type Prediction } from '../src/providers/predictions/media-host.ts';
import { GatewayError } from '../src/shared/errors.ts';
import { openStore } from '../src/store/open-store.ts';
import type { MediaJobStore } from '../src/store/media-jobs.ts';
import type { Store } from '../src/store/types.ts';
import { account, ledgerMoney } from './helpers/stores.ts';

const silent = { error() {}, warn() {}, info() {}, debug() {}, trace() {}, fatal() {}, child() { return silent; }, level: 'silent' } as never;

const HELD = 1_000_000;
const PLAN: MediaPlan = {
  kind: 'speech',
  host: 'provider_6',
  model: 'acme/tts',
  terms: { unit: 'per_1000_characters', perUnit: { num: '10000000', den: '1' }, outputs: 1, parts: 1, characters: 100 },
  output: 'files',
};

async function until(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !(await check()); ) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(10);
  }
}

/** A speech job held by a process that is gone, which its host has taken (prediction p1). */
async function goneSpeechJob(store: Store, instanceId: string) {
  const accountId = await account(store, { credits: 5_000_000 });
  const jobId = randomUUID();
  expect((await store.money.hold({ jobId, accountId, keyId: null, keyFamilyId: null, kind: 'speech', model: 'tts', amount: HELD, at: Date.now(), instanceId, clientAddress: null, countsTowardKeyLimits: true })).ok).toBe(true);
  const jobs = store.mediaJobs;
  await jobs.create(jobId, PLAN, Date.now());
  await jobs.markProcessing(jobId, ['p1'], Date.now());
  return { accountId, jobId, jobs };
}

/** A host whose prediction p1 has delivered its audio; `polls` counts the reads. */
function deliveredHost(): { host: MediaHost; polls: () => number } {
  let polls = 0;
  const delivered: Prediction = { id: 'p1', status: 'succeeded', outputs: ['https://host.example/speech-0.mp3'], output: 'https://host.example/speech-0.mp3', error: undefined, predictTime: 1, outputSeconds: undefined, startedAt: undefined, completedAt: undefined };
  const host: MediaHost = {
    create: () => Promise.reject(new Error('not used')),
    get: async () => {
      polls++;
      return delivered;
    },
    cancel: async () => delivered,
    close: async () => {},
  };
  return { host, polls: () => polls };
}

/** This process's runner ('self') over the host, the money path and a speech output check. */
function runnerOf(host: MediaHost, jobs: MediaJobStore, money: MoneyStore, speech: OutputChecks['speech']): MediaJobRunner {
  const runs = new PaidRuns({ money, inFlight: new InFlightRuns({ subscribe() {} } as never), instanceId: 'self', providerTimeoutMs: 60_000, logger: silent, now: Date.now });
  const endpoints = Object.fromEntries(MEDIA_HOSTS.map((id) => [id, { baseUrl: 'https://host.example/v1', apiKey: 'k' }])) as Record<MediaHostId, ProviderEndpoint>;
  return new MediaJobRunner({ host, jobs, runs, endpoints, outputChecks: { speech }, instanceId: 'self', pollMs: 10, jobTimeoutMs: 60_000, logger: silent, now: Date.now });
}

describe('MediaJobRunner.adopt', () => {
  let store: Store;
  beforeAll(async () => {
    store = await openStore('sqlite::memory:');
  });
  afterAll(async () => store.close());

  it('does not resume a job it has ended while that job\'s refund is still being retried', async () => {
    const { accountId, jobId, jobs } = await goneSpeechJob(store, 'gone-1');
    const { host, polls: polled } = deliveredHost();
    let checks = 0;
    // The database drops the first refunds (retried in the background from 200 ms on) until the test lets them through.
    let refundsFail = true;
    let refundAttempts = 0;
    const money: MoneyStore = {
      hold: (h) => store.money.hold(h),
      settle: (id, s) => store.money.settle(id, s),
      refund: (id, r) => {
        refundAttempts++;
        return refundsFail ? Promise.reject(new Error('Connection terminated unexpectedly')) : store.money.refund(id, r);
      },
    };
    // The audio cannot be fetched the first time (refunded); it could the second.
    const runner = runnerOf(host, jobs, money, async () => {
      checks++;
      if (checks === 1) throw new GatewayError('upstream_error', "The speech host's audio could not be fetched (connection failed). Nothing was charged.");
      return Buffer.from('audio');
    });
    try {
      await runner.adopt(['gone-1']);
      await until(() => refundAttempts >= 1);
      // The run has ended here (refunded, the refund being retried); the job is still held, now by this process.
      await sleep(50);
      expect([polled(), checks]).toEqual([1, 1]);
      expect((await store.jobs.getJob(jobId))?.status).toBe('processing');

      // Another process is gone: the sweep adopts again.
      await runner.adopt(['gone-2']);
      await sleep(100);
      refundsFail = false;
      await until(async () => (await store.jobs.getJob(jobId))?.status !== 'processing');
      await sleep(100);

      expect([polled(), checks]).toEqual([1, 1]);
      expect(await store.jobs.getJob(jobId)).toMatchObject({ status: 'failed', errorCode: 'upstream_error', cost: 0 });
      expect(await store.accounts.getAccount(accountId)).toMatchObject({ balance: 5_000_000, held: 0 });
      expect(await ledgerMoney(store, accountId)).toEqual({ balance: 5_000_000, held: 0 });
      expect((await store.accounts.listLedger(accountId, 100)).filter((r) => r.jobId === jobId).map((r) => r.kind).sort()).toEqual(['hold', 'refund']);
    } finally {
      refundsFail = false;
      await runner.close();
    }
  });

  it('a job its gone process ended as refunded (recorded, the refund not applied) is refunded by the adopter, never run again', async () => {
    const { accountId, jobId, jobs } = await goneSpeechJob(store, 'gone-3');
    // What `fail` records before its refund; the process died before the refund applied.
    await jobs.recordOutcome(jobId, { outputs: null, usage: null, errorCode: 'upstream_error', errorMessage: "The speech host's audio could not be fetched. Nothing was charged." }, Date.now());
    const { host, polls: polled } = deliveredHost();
    let checks = 0;
    const money: MoneyStore = { hold: (h) => store.money.hold(h), settle: (id, s) => store.money.settle(id, s), refund: (id, r) => store.money.refund(id, r) };
    // The output would pass now: running the job again would bill what its client was told was free.
    const runner = runnerOf(host, jobs, money, async () => {
      checks++;
      return Buffer.from('audio');
    });
    try {
      await runner.adopt(['gone-3']);
      await until(async () => (await store.jobs.getJob(jobId))?.status !== 'processing');
      expect([polled(), checks]).toEqual([0, 0]);
      expect(await store.jobs.getJob(jobId)).toMatchObject({ status: 'failed', errorCode: 'upstream_error', cost: 0 });
      expect(await store.accounts.getAccount(accountId)).toMatchObject({ balance: 5_000_000, held: 0 });
      expect((await store.accounts.listLedger(accountId, 100)).filter((r) => r.jobId === jobId).map((r) => r.kind).sort()).toEqual(['hold', 'refund']);
    } finally {
      await runner.close();
    }
  });
});

