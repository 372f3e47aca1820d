/** The openai emulator's files and fine-tuning endpoints, spoken to directly. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from './index.ts';
import type { Emulator } from './types.ts';

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator('openai');
});
afterAll(async () => emu.close());

async function call(method: string, path: string, body?: string | FormData, headers: Record<string, string> = {}, key = emu.apiKey) {
  const res = await fetch(`${emu.baseUrl}${path}`, { method, body, headers: { authorization: `Bearer ${key}`, ...headers } });
  return { status: res.status, json: (await res.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any -- test bodies are inspected freely
}

async function upload(content: string): Promise<string> {
  const form = new FormData();
  form.set('purpose', 'fine-tune');
  form.set('file', new Blob([content]), 'train.jsonl');
  const res = await call('POST', '/files', form);
  expect(res.status).toBe(200);
  expect(res.json).toMatchObject({ object: 'file', purpose: 'fine-tune', bytes: Buffer.byteLength(content), filename: 'train.jsonl' });
  return res.json.id as string;
}

const example = JSON.stringify({ messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }] });
const json = { 'content-type': 'application/json' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('openai emulator: files and fine-tuning', () => {
  it('a job runs on the clock: validating_files → queued → running → succeeded, trained tokens = example tokens × epochs, checkpoints per epoch', async () => {
    const file = await upload(`${example}\n${example}\n`);
    emu.enqueue({ kind: 'fine_tuning', stepMs: 30, stepsPerEpoch: 2 });
    const created = await call('POST', '/fine_tuning/jobs', JSON.stringify({ model: 'gpt-4o-mini-2024-07-18', training_file: file, hyperparameters: { n_epochs: 2 }, suffix: 'x' }), json);
    expect(created.status).toBe(200);
    expect(created.json).toMatchObject({ object: 'fine_tuning.job', status: 'validating_files', trained_tokens: null, hyperparameters: { n_epochs: 2 } });
    await sleep(30 * 7);
    const done = await call('GET', `/fine_tuning/jobs/${created.json.id as string}`);
    // Each example: (4 + 1 "hi") + (4 + 1 "hello") = 10 tokens; two examples, two epochs.
    expect(done.json).toMatchObject({ status: 'succeeded', trained_tokens: 40, fine_tuned_model: expect.stringMatching(/^ft:gpt-4o-mini-2024-07-18:emulator:x:/) });
    const checkpoints = await call('GET', `/fine_tuning/jobs/${created.json.id as string}/checkpoints`);
    expect(checkpoints.json.data.map((c: { step_number: number }) => c.step_number)).toEqual([4, 2]);
    const cancel = await call('POST', `/fine_tuning/jobs/${created.json.id as string}/cancel`);
    expect(cancel.status).toBe(400);
  });

  it('a file that is not chat JSONL fails the job at validation; unknown files and jobs, a wrong key and a missing purpose are refused', async () => {
    const bad = await upload('not json\n');
    const created = await call('POST', '/fine_tuning/jobs', JSON.stringify({ model: 'm', training_file: bad }), json);
    await sleep(60);
    const failed = await call('GET', `/fine_tuning/jobs/${created.json.id as string}`);
    expect(failed.json).toMatchObject({ status: 'failed', error: { code: 'invalid_training_file', param: 'training_file' } });
    expect((await call('POST', '/fine_tuning/jobs', JSON.stringify({ model: 'm', training_file: 'file-nope' }), json)).status).toBe(400);
    expect((await call('GET', '/fine_tuning/jobs/ftjob-nope')).status).toBe(404);
    expect((await call('GET', '/fine_tuning/jobs/ftjob-nope', undefined, {}, 'wrong')).status).toBe(401);
    const form = new FormData();
    form.set('file', new Blob([example]), 'a.jsonl');
    expect((await call('POST', '/files', form)).json.error.param).toBe('purpose');
  });

  it('cancel freezes the job with the tokens trained so far', async () => {
    const file = await upload(`${example}\n`);
    emu.enqueue({ kind: 'fine_tuning', stepMs: 40, stepsPerEpoch: 50, trainedTokens: 1000 });
    const created = await call('POST', '/fine_tuning/jobs', JSON.stringify({ model: 'm', training_file: file, hyperparameters: { n_epochs: 1 } }), json);
    await sleep(40 * 5);
    const cancelled = await call('POST', `/fine_tuning/jobs/${created.json.id as string}/cancel`);
    expect(cancelled.json.status).toBe('cancelled');
    const trained = cancelled.json.trained_tokens as number;
    expect(trained).toBeGreaterThan(0);
    expect(trained).toBeLessThan(1000);
    await sleep(40 * 10);
    expect((await call('GET', `/fine_tuning/jobs/${created.json.id as string}`)).json).toMatchObject({ status: 'cancelled', trained_tokens: trained });
    const events = await call('GET', `/fine_tuning/jobs/${created.json.id as string}/events?limit=1`);
    expect(events.json).toMatchObject({ object: 'list', has_more: true, data: [{ object: 'fine_tuning.job.event', message: 'The job has been cancelled' }] });
  });
});
