/**
 * The fine-tuning routes over real HTTP against the openai emulator's files and fine-tuning
 * endpoints: the hold (file tokens × epochs × training price), settlement on the provider's
 * trained tokens with nobody polling, cancel billing what was trained, failures refunded,
 * keys with credit limits refused, ownership, listing, events and checkpoints, and
 * training files as data: URLs and as https URLs served by a local self-signed server.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { emulatorEnv, startEmulator } from '../emulators/index.ts';
import type { Emulator } from '../emulators/types.ts';
import { money } from './helpers/chat.ts';
import { startGateway, type HttpResponse, type TestGateway } from './helpers/gateway.ts';
import { dataUrl, fineTuningCatalog, holdOf, jsonl, startHttpsFiles, TRAINING_MICRO_PER_TOKEN, type HttpsFiles } from './helpers/fine-tuning.ts';
import { ledgerKinds, RATE_HEADERS, waitFor } from './helpers/media-host.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('fine-tuning jobs', () => {
  let emu: Emulator;
  let files: HttpsFiles;
  let gw: TestGateway;
  beforeAll(async () => {
    emu = await startEmulator('openai');
    files = await startHttpsFiles();
    gw = await startGateway(
      { CATALOG_FILE: fineTuningCatalog(), FINE_TUNING_POLL_MS: '20', ...emulatorEnv(emu) },
      { fileFetch: { allowPrivateAddresses: true, ca: files.ca } },
    );
  });
  afterAll(async () => {
    await gw.close();
    await files.close();
    await emu.close();
  });
  beforeEach(() => emu.reset());

  const account = (options: { credits?: number; key?: Record<string, unknown> } = {}) =>
    gw.account({ credits: options.credits ?? 100, key: { scopes: ['fine_tuning', 'jobs'], ...options.key } });
  const create = (key: string, body: Record<string, unknown>) => gw.api('/fine_tuning/jobs', { key, body });
  /** The job's money row, straight from the store, once it has ended (nobody polls the API). */
  const ended = (id: string) => waitFor(() => gw.gateway.store.jobs.getJob(id), (j) => j !== undefined && j.status !== 'processing');
  const providerCalls = (path: string) => emu.requests.filter((r) => r.method === 'POST' && r.path.startsWith(path));
  /** What was sent to the provider besides polls (jobs of earlier tests may still be polled). */
  const providerPosts = () => emu.requests.filter((r) => r.method === 'POST');
  const expectRateHeaders = (res: HttpResponse) => {
    for (const name of RATE_HEADERS) expect(res.headers[name], name).toBeDefined();
  };

  it('data: URL → 200 job object; held at file tokens × epochs × training price; settled on the provider\'s trained tokens with nobody polling', async () => {
    const { key, accountId } = await account();
    const before = await money(gw, accountId);
    const text = jsonl(5);
    const hold = await holdOf(text, 2);
    const res = await create(key, { model: 'tune-me', training_file: dataUrl(text), hyperparameters: { n_epochs: 2 }, suffix: 'support', seed: 7 });
    expect(res.status).toBe(200);
    expectRateHeaders(res);
    expect(res.json).toMatchObject({ object: 'fine_tuning.job', model: 'tune-me', user_provided_suffix: 'support', seed: 7, organization_id: accountId, fine_tuned_model: null, cost_credits: null, error: null });
    expect(res.json.id).toMatch(UUID);
    expect(res.json.hyperparameters.n_epochs).toBe(2);
    expect(['validating_files', 'queued', 'running']).toContain(res.json.status);
    expect(res.json.training_file).toMatch(/^data: \(\d+ bytes, 5 examples\)$/);
    expect(await money(gw, accountId)).toEqual({ balance: before.balance, held: hold });

    // What the provider got: the file as multipart, then the job with its own model id and the held epochs.
    const upload = providerCalls('/v1/files')[0];
    expect(upload?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(String(upload?.body)).toContain(text.split('\n')[0]);
    expect(providerCalls('/v1/fine_tuning/jobs')[0]?.body).toMatchObject({ model: 'tune-me-2026-01-01', hyperparameters: { n_epochs: 2 }, suffix: 'support', seed: 7 });

    const job = await ended(res.json.id);
    const view = (await gw.api(`/fine_tuning/jobs/${res.json.id as string}`, { key })).json;
    expect(view.status).toBe('succeeded');
    expect(view.fine_tuned_model).toMatch(/^ft:tune-me-2026-01-01:emulator:support:/);
    const trained = view.trained_tokens as number;
    expect(trained).toBeGreaterThan(0);
    expect(trained * TRAINING_MICRO_PER_TOKEN).toBeLessThan(hold);
    expect(job?.cost).toBe(trained * TRAINING_MICRO_PER_TOKEN);
    expect(view.cost_credits).toBe((trained * TRAINING_MICRO_PER_TOKEN) / 1_000_000);
    expect(await money(gw, accountId)).toEqual({ balance: before.balance - trained * TRAINING_MICRO_PER_TOKEN, held: 0 });
    expect(await ledgerKinds(gw, accountId, res.json.id)).toEqual(['hold', 'settle']);

    const polled = await gw.api(`/jobs/${res.json.id as string}`, { key });
    expect(polled.status).toBe(200);
    expect(polled.json).toMatchObject({ kind: 'fine_tuning', status: 'succeeded', model: 'tune-me', usage: { trained_tokens: trained }, output: { trained_tokens: trained, fine_tuned_model: view.fine_tuned_model } });
  });

  it('https URLs: the gateway fetches the training and validation files and uploads both; default epochs are 3 and sent to the provider', async () => {
    const { key, accountId } = await account();
    const before = await money(gw, accountId);
    const train = jsonl(4, 'Served over https');
    files.serve('/train.jsonl', train);
    files.serve('/valid.jsonl', jsonl(1));
    const res = await create(key, { model: 'tune-me', training_file: `${files.url}/train.jsonl`, validation_file: `${files.url}/valid.jsonl` });
    expect(res.status).toBe(200);
    expect(res.json.training_file).toBe(`${files.url}/train.jsonl`);
    expect(res.json.validation_file).toBe(`${files.url}/valid.jsonl`);
    expect(files.requests).toEqual(expect.arrayContaining(['/train.jsonl', '/valid.jsonl']));
    expect(providerCalls('/v1/files')).toHaveLength(2);
    const sent = providerCalls('/v1/fine_tuning/jobs')[0]?.body as Record<string, unknown>;
    expect(sent.hyperparameters).toEqual({ n_epochs: 3 });
    expect(String(sent.validation_file)).toMatch(/^file-/);
    expect(await money(gw, accountId)).toEqual({ balance: before.balance, held: await holdOf(train, 3) });
    const job = await ended(res.json.id);
    expect(job?.status).toBe('succeeded');
    expect((await money(gw, accountId)).held).toBe(0);
  });

  it('files that cannot be used → 400 validation_failed naming the field; nothing held, nothing sent to the provider', async () => {
    const { key, accountId } = await account();
    const before = await money(gw, accountId);
    files.serve('/gone.jsonl', 404);
    const cases: [Record<string, unknown>, string][] = [
      [{ training_file: `${files.url}/gone.jsonl` }, 'training_file'],
      [{ training_file: 'http://127.0.0.1/plain.jsonl' }, 'training_file'],
      [{ training_file: dataUrl('hello, not JSON\n') }, 'training_file'],
      [{ training_file: dataUrl('{"prompt":"old format"}\n') }, 'training_file'],
      [{ training_file: dataUrl(''), hyperparameters: { n_epochs: 2 } }, 'training_file'],
      [{ training_file: dataUrl(jsonl(1)), validation_file: dataUrl('[1,2]\n') }, 'validation_file'],
    ];
    for (const [fields, param] of cases) {
      const res = await create(key, { model: 'tune-me', ...fields });
      expect(res.status, JSON.stringify(fields)).toBe(400);
      expect(res.json.error).toMatchObject({ code: 'validation_failed', param });
      expect(res.json.error.details.fieldErrors[param]).toBeDefined();
    }
    expect(await money(gw, accountId)).toEqual(before);
    expect(providerPosts()).toHaveLength(0);
  });

  it('strict body: unknown or invalid fields → 400 validation_failed with param and details; models: 404 model_not_found, 503 model_unavailable', async () => {
    const { key, accountId } = await account();
    const before = await money(gw, accountId);
    const file = dataUrl(jsonl(1));
    const unknown = await create(key, { model: 'tune-me', training_file: file, method: { type: 'dpo' } });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error).toMatchObject({ code: 'validation_failed', param: 'method', type: 'invalid_request_error' });
    expect(unknown.json.error.details.fieldErrors.method).toEqual(['Unknown field.']);
    const epochs = await create(key, { model: 'tune-me', training_file: file, hyperparameters: { n_epochs: 0 } });
    expect(epochs.json.error).toMatchObject({ code: 'validation_failed', param: 'hyperparameters.n_epochs' });
    const suffix = await create(key, { model: 'tune-me', training_file: file, suffix: 'no spaces allowed' });
    expect(suffix.json.error).toMatchObject({ code: 'validation_failed', param: 'suffix' });
    const missing = await create(key, { model: 'tune-me' });
    expect(missing.json.error).toMatchObject({ code: 'validation_failed', param: 'training_file' });
    for (const [model, status, code] of [['no-tune', 404, 'model_not_found'], ['nope', 404, 'model_not_found'], ['text-embedding-3-small', 404, 'model_not_found'], ['tag-no-price', 503, 'model_unavailable']] as const) {
      const res = await create(key, { model, training_file: file });
      expect(res.status, model).toBe(status);
      expect(res.json.error).toMatchObject({ code, param: 'model' });
    }
    expect(await money(gw, accountId)).toEqual(before);
    expect(providerPosts()).toHaveLength(0);
  });

  it('a key with a daily or monthly credit limit → 403 api_key_limit_unsupported, nothing charged; a job never counts toward its key\'s usage', async () => {
    for (const limit of [{ daily_limit_credits: 1000 }, { monthly_limit_credits: 1000 }]) {
      const { key, accountId } = await account({ key: limit });
      const before = await money(gw, accountId);
      const res = await create(key, { model: 'tune-me', training_file: dataUrl(jsonl(2)) });
      expect(res.status).toBe(403);
      expect(res.json.error).toMatchObject({ code: 'api_key_limit_unsupported', type: 'permission_error' });
      expectRateHeaders(res);
      expect(await money(gw, accountId)).toEqual(before);
    }
    expect(providerPosts()).toHaveLength(0);

    const { key, accountId } = await account();
    const before = await money(gw, accountId);
    const res = await create(key, { model: 'tune-me', training_file: dataUrl(jsonl(3)) });
    expect(res.status).toBe(200);
    const job = await ended(res.json.id);
    expect(job?.cost).toBeGreaterThan(0);
    expect((await money(gw, accountId)).balance).toBe(before.balance - (job?.cost as number));
    const own = await gw.api('/key', { key });
    expect(own.json.usage).toMatchObject({ day_credits: 0, month_credits: 0 });
  });

  it('cancel while training → 200 cancelled, billed for what was trained, the rest released; a second cancel → 400', async () => {
    const { key, accountId } = await account();
    const before = await money(gw, accountId);
    emu.enqueue({ kind: 'fine_tuning', stepMs: 150, stepsPerEpoch: 10 });
    const text = jsonl(6);
    const res = await create(key, { model: 'tune-me', training_file: dataUrl(text), hyperparameters: { n_epochs: 2 } });
    expect(res.status).toBe(200);
    const id = res.json.id as string;
    await waitFor(async () => (await gw.api(`/fine_tuning/jobs/${id}`, { key })).json, (v) => v.status === 'running' && v.trained_tokens > 0);
    const cancelled = await gw.api(`/fine_tuning/jobs/${id}/cancel`, { key, method: 'POST' });
    expect(cancelled.status).toBe(200);
    expectRateHeaders(cancelled);
    expect(cancelled.json.status).toBe('cancelled');
    const trained = cancelled.json.trained_tokens as number;
    expect(trained).toBeGreaterThan(0);
    expect(trained * TRAINING_MICRO_PER_TOKEN).toBeLessThan(await holdOf(text, 2));
    expect(cancelled.json.cost_credits).toBe((trained * TRAINING_MICRO_PER_TOKEN) / 1_000_000);
    expect(await money(gw, accountId)).toEqual({ balance: before.balance - trained * TRAINING_MICRO_PER_TOKEN, held: 0 });
    expect(await ledgerKinds(gw, accountId, id)).toEqual(['hold', 'settle']);
    expect((await gw.api(`/jobs/${id}`, { key })).json).toMatchObject({ status: 'canceled', usage: { trained_tokens: trained } });

    const again = await gw.api(`/fine_tuning/jobs/${id}/cancel`, { key, method: 'POST' });
    expect(again.status).toBe(400);
    expect(again.json.error.code).toBe('invalid_request');
    expect((await money(gw, accountId)).balance).toBe(before.balance - trained * TRAINING_MICRO_PER_TOKEN);
  });

  it('a job that fails at the provider is refunded in full; a provider that refuses the create → 502, refunded', async () => {
    const { key, accountId } = await account();
    const before = await money(gw, accountId);
    emu.enqueue({ kind: 'fine_tuning', fail: 'The training run diverged.' });
    const res = await create(key, { model: 'tune-me', training_file: dataUrl(jsonl(2)) });
    expect(res.status).toBe(200);
    const job = await ended(res.json.id);
    expect(job).toMatchObject({ status: 'failed', cost: 0 });
    const view = (await gw.api(`/fine_tuning/jobs/${res.json.id as string}`, { key })).json;
    expect(view).toMatchObject({ status: 'failed', cost_credits: 0, error: { code: 'server_error', message: 'The training run diverged.' } });
    expect(await money(gw, accountId)).toEqual(before);
    expect(await ledgerKinds(gw, accountId, res.json.id)).toEqual(['hold', 'refund']);

    emu.enqueue({ kind: 'error', status: 500 });
    const refused = await create(key, { model: 'tune-me', training_file: dataUrl(jsonl(2)) });
    expect(refused.status).toBe(502);
    expect(refused.json.error.code).toBe('upstream_error');
    expectRateHeaders(refused);
    expect(await money(gw, accountId)).toEqual(before);
  });

  it('not enough credits → 402 insufficient_credits; over the monthly spending limit → 402 monthly_limit_exceeded; nothing created', async () => {
    const poor = await account({ credits: 0.0001 });
    const before = await money(gw, poor.accountId);
    const res = await create(poor.key, { model: 'tune-me', training_file: dataUrl(jsonl(10)) });
    expect(res.status).toBe(402);
    expect(res.json.error.code).toBe('insufficient_credits');
    expectRateHeaders(res);
    expect(await money(gw, poor.accountId)).toEqual(before);

    const capped = await account();
    await gw.admin('PATCH', `/admin/v1/accounts/${capped.accountId}`, { monthly_spending_limit_credits: 0.01 });
    const over = await create(capped.key, { model: 'tune-me', training_file: dataUrl(jsonl(10)) });
    expect(over.status).toBe(402);
    expect(over.json.error).toMatchObject({ code: 'monthly_limit_exceeded', type: 'spending_limit_error' });
    expect(await money(gw, capped.accountId)).toEqual({ balance: 100_000_000, held: 0 });
    expect(providerPosts()).toHaveLength(0);
  });

  it('without the test-only allowance, a file URL on a loopback or private address is refused (400) before anything is fetched', async () => {
    const strict = await startGateway({ CATALOG_FILE: fineTuningCatalog(), ...emulatorEnv(emu) }, { fileFetch: { ca: files.ca } });
    try {
      const { key } = await strict.account({ key: { scopes: ['fine_tuning'] } });
      files.serve('/private.jsonl', jsonl(1));
      const fetched = files.requests.length;
      for (const url of [`${files.url}/private.jsonl`, 'https://10.0.0.1/train.jsonl', 'https://[::1]/train.jsonl', 'https://localhost:1/train.jsonl']) {
        const res = await strict.api('/fine_tuning/jobs', { key, body: { model: 'tune-me', training_file: url } });
        expect(res.status, url).toBe(400);
        expect(res.json.error).toMatchObject({ code: 'validation_failed', param: 'training_file' });
      }
      expect(files.requests.length).toBe(fetched);
    } finally {
      await strict.close();
    }
  });

  it("another account's job → 403 forbidden on every job route; unknown id → 404 job_not_found; no fine_tuning scope → 403", async () => {
    const owner = await account();
    const res = await create(owner.key, { model: 'tune-me', training_file: dataUrl(jsonl(1)) });
    const id = res.json.id as string;
    const other = await account();
    for (const [path, method] of [[id, 'GET'], [`${id}/cancel`, 'POST'], [`${id}/events`, 'GET'], [`${id}/checkpoints`, 'GET']] as const) {
      const denied = await gw.api(`/fine_tuning/jobs/${path}`, { key: other.key, method });
      expect(denied.status, path).toBe(403);
      expect(denied.json.error).toMatchObject({ code: 'forbidden', type: 'authentication_error' });
    }
    for (const unknown of ['00000000-0000-4000-8000-000000000000', 'ftjob-abc']) {
      const missing = await gw.api(`/fine_tuning/jobs/${unknown}`, { key: other.key });
      expect(missing.status).toBe(404);
      expect(missing.json.error.code).toBe('job_not_found');
    }
    const chatOnly = await gw.account({ key: { scopes: ['chat'] } });
    const scope = await gw.api('/fine_tuning/jobs', { key: chatOnly.key });
    expect(scope.status).toBe(403);
    expect(scope.json.error.code).toBe('insufficient_scope');
    await ended(id);
  });

  it('list: own jobs newest first, paged with after and limit; events and checkpoints from the provider under our job id', async () => {
    const { key } = await account();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await create(key, { model: 'tune-me', training_file: dataUrl(jsonl(1 + i)), hyperparameters: { n_epochs: 2 } })).json.id as string);
    const theirs = await account().then(({ key: k }) => create(k, { model: 'tune-me', training_file: dataUrl(jsonl(1)) }));
    const first = await gw.api('/fine_tuning/jobs?limit=2', { key });
    expect(first.status).toBe(200);
    expectRateHeaders(first);
    expect(first.json.object).toBe('list');
    expect(first.json.data.map((j: { id: string }) => j.id)).toEqual([ids[2], ids[1]]);
    expect(first.json.has_more).toBe(true);
    const second = await gw.api(`/fine_tuning/jobs?limit=2&after=${ids[1] as string}`, { key });
    expect(second.json.data.map((j: { id: string }) => j.id)).toEqual([ids[0]]);
    expect(second.json.has_more).toBe(false);
    const bad = await gw.api('/fine_tuning/jobs?limit=0', { key });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ code: 'validation_failed', param: 'limit' });
    // A cursor that is not one of the account's jobs (unknown, another account's, not an id) is refused, not ignored.
    for (const after of ['0b9f4a6e-1c2d-4e5f-8a9b-0c1d2e3f4a5b', theirs.json.id as string, 'abc']) {
      const unknown = await gw.api(`/fine_tuning/jobs?after=${after}`, { key });
      expect(unknown.status).toBe(400);
      expect(unknown.json.error).toMatchObject({ code: 'validation_failed', param: 'after' });
    }

    const id = ids[0] as string;
    await ended(id);
    const events = await gw.api(`/fine_tuning/jobs/${id}/events?limit=3`, { key });
    expect(events.status).toBe(200);
    expect(events.json.data).toHaveLength(3);
    expect(events.json.data[0]).toMatchObject({ object: 'fine_tuning.job.event', message: 'The job has successfully completed' });
    expect(events.json.has_more).toBe(true);
    const older = await gw.api(`/fine_tuning/jobs/${id}/events?after=${events.json.data[2].id as string}`, { key });
    expect(older.json.data.at(-1).message).toMatch(/^Created fine-tuning job/);
    const checkpoints = await gw.api(`/fine_tuning/jobs/${id}/checkpoints`, { key });
    expect(checkpoints.json.data).toHaveLength(2);
    for (const c of checkpoints.json.data) expect(c).toMatchObject({ object: 'fine_tuning.job.checkpoint', fine_tuning_job_id: id });
    expect(checkpoints.json.data[0].step_number).toBeGreaterThan(checkpoints.json.data[1].step_number);
    await Promise.all(ids.map(ended));
  });
});
