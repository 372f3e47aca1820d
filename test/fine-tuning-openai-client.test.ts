/**
 * The official `openai` client's fineTuning.jobs.create / retrieve / list / cancel /
 * listEvents and checkpoints.list work unchanged against the gateway (shipped catalog:
 * gpt-4o-mini is fine-tunable at USD 3 per 1M trained tokens), and its typed errors.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorEnv, startEmulator } from '../emulators/index.ts';
import type { Emulator } from '../emulators/types.ts';
import { money } from './helpers/chat.ts';
import { dataUrl, jsonl } from './helpers/fine-tuning.ts';
import { startGateway, type TestGateway } from './helpers/gateway.ts';
import { waitFor } from './helpers/media-host.ts';

/** gpt-4o-mini: USD 3 per 1M trained tokens = 300 micro-credits per token. */
const MICRO_PER_TOKEN = 300;

let emu: Emulator;
let gw: TestGateway;
let client: OpenAI;
let accountId: string;

beforeAll(async () => {
  emu = await startEmulator('openai');
  gw = await startGateway({ FINE_TUNING_POLL_MS: '20', ...emulatorEnv(emu) });
  const account = await gw.account({ credits: 50, key: { scopes: ['fine_tuning'] } });
  accountId = account.accountId;
  client = new OpenAI({ apiKey: account.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await emu.close();
});

const ended = (id: string) => waitFor(() => gw.gateway.store.jobs.getJob(id), (j) => j !== undefined && j.status !== 'processing');

describe('openai client: fineTuning.jobs', () => {
  it('create → retrieve until succeeded → list (auto-paginated) → listEvents → checkpoints.list; billed on the trained tokens', async () => {
    const before = await money(gw, accountId);
    const created = await client.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: dataUrl(jsonl(8)), hyperparameters: { n_epochs: 2 }, suffix: 'sdk' });
    expect(created.object).toBe('fine_tuning.job');
    expect(created.model).toBe('gpt-4o-mini');
    let job = created;
    await waitFor(async () => (job = await client.fineTuning.jobs.retrieve(created.id)), (j) => j.status === 'succeeded');
    expect(job.fine_tuned_model).toMatch(/^ft:gpt-4o-mini-2024-07-18:emulator:sdk:/);
    const trained = job.trained_tokens as number;
    expect(trained).toBeGreaterThan(0);
    expect(await money(gw, accountId)).toEqual({ balance: before.balance - trained * MICRO_PER_TOKEN, held: 0 });

    const second = await client.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: dataUrl(jsonl(2)) });
    const ids: string[] = [];
    for await (const item of client.fineTuning.jobs.list({ limit: 1 })) ids.push(item.id);
    expect(ids).toEqual([second.id, created.id]);

    const events = await client.fineTuning.jobs.listEvents(created.id, { limit: 2 });
    expect(events.data).toHaveLength(2);
    expect(events.data[0]?.object).toBe('fine_tuning.job.event');
    expect(events.hasNextPage()).toBe(true);
    const all: string[] = [];
    for await (const event of client.fineTuning.jobs.listEvents(created.id, { limit: 5 })) all.push(event.message);
    expect(all.at(-1)).toMatch(/^Created fine-tuning job/);
    expect(all[0]).toBe('The job has successfully completed');

    const checkpoints = await client.fineTuning.jobs.checkpoints.list(created.id);
    expect(checkpoints.data).toHaveLength(2);
    expect(checkpoints.data[0]?.fine_tuning_job_id).toBe(created.id);
    await ended(second.id);
  });

  it('cancel → cancelled, billed for what was trained; typed errors for another account, an unknown job and a key with a credit limit', async () => {
    const before = await money(gw, accountId);
    emu.enqueue({ kind: 'fine_tuning', stepMs: 150, stepsPerEpoch: 10 });
    const created = await client.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: dataUrl(jsonl(6)), hyperparameters: { n_epochs: 2 } });
    await waitFor(() => client.fineTuning.jobs.retrieve(created.id), (j) => j.status === 'running' && (j.trained_tokens ?? 0) > 0);
    const cancelled = await client.fineTuning.jobs.cancel(created.id);
    expect(cancelled.status).toBe('cancelled');
    const trained = cancelled.trained_tokens as number;
    expect(await money(gw, accountId)).toEqual({ balance: before.balance - trained * MICRO_PER_TOKEN, held: 0 });

    const other = await gw.account({ key: { scopes: ['fine_tuning'] } });
    const otherClient = new OpenAI({ apiKey: other.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
    await expect(otherClient.fineTuning.jobs.retrieve(created.id)).rejects.toMatchObject({ status: 403, code: 'forbidden' });
    await expect(client.fineTuning.jobs.retrieve('00000000-0000-4000-8000-000000000000')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const limited = await gw.account({ key: { scopes: ['fine_tuning'], daily_limit_credits: 5 } });
    const limitedClient = new OpenAI({ apiKey: limited.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
    await expect(limitedClient.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: dataUrl(jsonl(1)) })).rejects.toMatchObject({ status: 403, code: 'api_key_limit_unsupported' });
  });
});
