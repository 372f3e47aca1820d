/**
 * Media test harness: the predictions emulator standing for every media host, a gateway
 * pointed at it with a fixture catalog of known prices (one model per pricing unit), and
 * money and jobs read to the micro-credit.
 */
import { emulatorEnv, startEmulator } from '../../emulators/index.ts';
import type { Emulator } from '../../emulators/types.ts';
import type { MediaJobRecord } from '../../src/store/media-jobs.ts';
import type { JobRecord } from '../../src/store/types.ts';
import { chatEntry, imageEntry, writeCatalog, type Entry } from '../fixtures/catalog.ts';
import { startGateway, type TestGateway } from './gateway.ts';

const prompt = { type: 'string', maxLength: 2000 };

function videoEntry(slug: string, extra: Entry = {}): Entry {
  return {
    ...imageEntry(slug),
    category: 'video',
    provider: 'provider_4',
    supported_formats: ['video'],
    pricing: { unit: 'per_video', usd: '0.98', basis: 'one 5-second clip' },
    configuration: {
      input_schema: {
        type: 'object',
        required: ['prompt'],
        properties: { prompt, image: { type: 'string' }, end_image: { type: 'string' }, duration: { type: 'integer', enum: [5, 10] }, resolution: { type: 'string', enum: ['720p', '1080p'] } },
      },
      default_params: { duration: 5, resolution: '720p' },
    },
    ...extra,
  };
}

const imageSchema = (extra: Record<string, unknown> = {}) => ({
  input_schema: { type: 'object', required: ['prompt'], properties: { prompt, size: { type: 'string', enum: ['1024x1024', '512x512'] }, seed: { type: 'integer' }, ...extra } },
  default_params: { size: '1024x1024' },
});

/**
 * Prices: pic USD 0.04 per image (4,000,000 micro-credits); pic-batch 0.03 per image, made
 * n at a time by the model; pic-outputs 0.02 per output; pic-gpu USD 0.001 per GPU-second
 * (100,000 micro-credits) with a 1-second limit; clip 0.98 per video; clip-seconds
 * 0.4625 per default 5-second call (0.0925 per second); clip-gpu 0.002 per GPU-second, 1 s limit.
 * The GPU models' estimate is their limit, so what they hold (the estimate, capped by the limit) is the limit.
 */
export function mediaCatalog(extra: Entry[] = []): Entry[] {
  return [
    imageEntry('pic', { provider: 'provider_5', provider_model_id: 'acme/pic', configuration: imageSchema() }),
    imageEntry('pic-batch', { provider: 'provider_5', provider_model_id: 'acme/pic-batch', pricing: { unit: 'per_image', usd: '0.03', basis: 'one image' }, configuration: imageSchema({ n: { type: 'integer', minimum: 1, maximum: 4 } }) }),
    imageEntry('pic-edit', { category: 'multimodal', supported_formats: ['image', 'text'], provider: 'provider_5', provider_model_id: 'acme/pic-edit', configuration: { input_schema: { type: 'object', required: ['prompt', 'image'], properties: { prompt, image: { type: 'string' } } }, default_params: {} } }),
    imageEntry('pic-outputs', { provider: 'provider_9', provider_model_id: 'acme/pic-outputs', pricing: { unit: 'per_output', usd: '0.02', basis: 'one output' }, configuration: imageSchema() }),
    imageEntry('pic-gpu', { provider: 'custom', provider_model_id: 'acme/pic-gpu', pricing: { unit: 'per_gpu_second', usd_per_second: '0.001', estimated_seconds: 1, hold_seconds: 1, basis: 'GPU time' }, configuration: imageSchema() }),
    imageEntry('pic-chat-host', { provider: 'provider_1', configuration: imageSchema() }),
    imageEntry('pic-unpriced', { pricing: null }),
    imageEntry('pic-gone', { lifecycle: { status: 'removed', successor_slug: 'pic' } }),
    imageEntry('pic-alias', { lifecycle: { status: 'duplicate', duplicate_of: 'pic' } }),
    videoEntry('clip', { provider_model_id: 'acme/clip' }),
    videoEntry('clip-seconds', { provider_model_id: 'acme/clip-seconds', pricing: { unit: 'per_second_of_output', usd: '0.4625', basis: 'a default 5-second clip (USD 0.0925 per second)' } }),
    videoEntry('clip-text', {
      provider_model_id: 'acme/clip-text',
      configuration: { input_schema: { type: 'object', required: ['prompt'], properties: { prompt, duration: { type: 'integer', enum: [5] } } }, default_params: { duration: 5 } },
    }),
    videoEntry('clip-gpu', { provider: 'provider_10', provider_model_id: 'acme/clip-gpu', pricing: { unit: 'per_gpu_second', usd_per_second: '0.002', estimated_seconds: 1, hold_seconds: 1, basis: 'GPU time' } }),
    chatEntry('chatty', 'provider_1'),
    ...extra,
  ];
}

export interface MediaHarness {
  gw: TestGateway;
  host: Emulator;
  close(): Promise<void>;
}

/** Fast polling (20 ms) and a 2-second image wait unless `env` says otherwise. */
export async function startMediaHarness(env: Record<string, string> = {}, extraModels: Entry[] = []): Promise<MediaHarness> {
  const host = await startEmulator('predictions');
  const gw = await startGateway({
    CATALOG_FILE: writeCatalog(mediaCatalog(extraModels)),
    ...emulatorEnv(host),
    MEDIA_POLL_MS: '20',
    MEDIA_SYNC_WAIT_MS: '2000',
    ...env,
  });
  return {
    gw,
    host,
    async close() {
      await gw.close();
      await host.close();
    },
  };
}

export async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > until) throw new Error(`timed out waiting; last value ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The job's money row and its media record, straight from the store. */
export async function jobOf(gw: TestGateway, jobId: string): Promise<{ job: JobRecord | undefined; media: MediaJobRecord | undefined }> {
  return { job: await gw.gateway.store.jobs.getJob(jobId), media: await gw.gateway.store.mediaJobs.get(jobId) };
}

/** The job once its money is settled or refunded. */
export function settled(gw: TestGateway, jobId: string) {
  return waitFor(() => jobOf(gw, jobId), (j) => j.job !== undefined && j.job.status !== 'processing');
}

/** The ledger's kinds for one job, oldest first. */
export async function ledgerKinds(gw: TestGateway, accountId: string, jobId: string): Promise<string[]> {
  const ledger = (await gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger?limit=all`)).json as { kind: string; job_id: string | null }[];
  return ledger.filter((e) => e.job_id === jobId).map((e) => e.kind).reverse();
}

export const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];
