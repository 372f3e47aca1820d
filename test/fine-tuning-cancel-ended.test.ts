/**
 * Cancel of a fine-tuning job that has ended at the provider since the gateway last polled it
 * (docs/decisions.md, Fine-tuning › Cancel: a job that has ended → 400 invalid_request): the
 * provider's refusal is not passed on; the gateway polls the job, settles it, and answers as for
 * any ended job.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorEnv, startEmulator } from '../emulators/index.ts';
import type { Emulator } from '../emulators/types.ts';
import { startGateway, type TestGateway } from './helpers/gateway.ts';
import { dataUrl, fineTuningCatalog, jsonl } from './helpers/fine-tuning.ts';

describe('cancel of a job that ended at the provider, not yet polled', () => {
  let emu: Emulator;
  let gw: TestGateway;
  beforeAll(async () => {
    emu = await startEmulator('openai');
    // A long poll: the provider's job ends long before the gateway would poll it again.
    gw = await startGateway({ CATALOG_FILE: fineTuningCatalog(), FINE_TUNING_POLL_MS: '60000', ...emulatorEnv(emu) });
  });
  afterAll(async () => {
    await gw.close();
    await emu.close();
  });

  it('→ 400 invalid_request naming its status; the job is settled on what it trained', async () => {
    const { key } = await gw.account({ credits: 100, key: { scopes: ['fine_tuning'] } });
    const created = await gw.api('/fine_tuning/jobs', { key, body: { model: 'tune-me', training_file: dataUrl(jsonl(2)), hyperparameters: { n_epochs: 1 } } });
    expect(created.status).toBe(200);
    const id = created.json.id as string;
    // The emulator's job trains in about 6 steps of 20 ms.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const cancel = await gw.api(`/fine_tuning/jobs/${id}/cancel`, { key, method: 'POST' });
    expect(cancel.status).toBe(400);
    expect(cancel.json.error.code).toBe('invalid_request');
    expect(cancel.json.error.message).toContain('succeeded');
    const job = await gw.api(`/fine_tuning/jobs/${id}`, { key });
    expect(job.json.status).toBe('succeeded');
    expect(job.json.trained_tokens).toBeGreaterThan(0);
  });
});
