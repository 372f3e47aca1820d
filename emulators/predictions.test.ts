/** The predictions emulator (media and GPU hosts): create, Prefer: wait, poll, cancel, files, scripted runs and errors. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { emulatorEnv, startEmulator, type Emulator } from './index.ts';

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator('predictions');
});
afterAll(async () => emu.close());
afterEach(() => emu.reset());

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- wire bodies are inspected freely
type Json = any;

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; json: Json }> {
  const r = await fetch(emu.baseUrl + path, {
    method,
    headers: { authorization: `Bearer ${emu.apiKey}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, headers: r.headers, json: text === '' ? undefined : JSON.parse(text) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('predictions emulator', () => {
  it('base URL …/v1, and one env pair per media host', () => {
    expect(emu.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const env = emulatorEnv(emu);
    for (const prefix of ['PROVIDER_4', 'PROVIDER_5', 'PROVIDER_6', 'PROVIDER_9', 'PROVIDER_10', 'PROVIDER_CUSTOM']) {
      expect(env[`${prefix}_BASE_URL`]).toBe(emu.baseUrl);
      expect(env[`${prefix}_API_KEY`]).toBe('emu-key');
    }
  });

  it('create answers at once (201, starting or processing); the poll shows it succeed with a file URL it serves', async () => {
    emu.enqueue({ kind: 'prediction', durationMs: 80 });
    const created = await call('POST', '/models/acme/pic/predictions', { input: { prompt: 'a cat' } });
    expect(created.status).toBe(201);
    expect(['starting', 'processing']).toContain(created.json.status);
    expect(created.json).toMatchObject({ model: 'acme/pic', input: { prompt: 'a cat' }, output: null, error: null });
    expect(created.json.urls.get).toBe(`${emu.baseUrl}/predictions/${created.json.id}`);
    await sleep(120);
    const polled = await call('GET', `/predictions/${created.json.id}`);
    expect(polled.json.status).toBe('succeeded');
    expect(typeof polled.json.output).toBe('string');
    expect(polled.json.metrics.predict_time).toBeCloseTo(0.08, 1);
    const file = await fetch(polled.json.output as string);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await file.arrayBuffer()).subarray(1, 4).toString()).toBe('PNG');
    expect(emu.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /v1/models/acme/pic/predictions',
      `GET /v1/predictions/${created.json.id}`,
      `GET /files/${created.json.id}/out-0.png`,
    ]);
  });

  it('Prefer: wait holds the answer until the run ends; n outputs as an array; a video gets an mp4 and its seconds', async () => {
    const images = await call('POST', '/models/pic/predictions', { input: { prompt: 'x', n: 3 } }, { prefer: 'wait=5' });
    expect(images.json.status).toBe('succeeded');
    expect(images.json.output).toHaveLength(3);
    const video = await call('POST', '/models/acme/clip/predictions', { input: { prompt: 'x', duration: 7 } }, { prefer: 'wait' });
    expect(video.json.output).toMatch(/out-0\.mp4$/);
    expect(video.json.metrics.video_output_duration_seconds).toBe(7);
    expect((await fetch(video.json.output as string)).headers.get('content-type')).toBe('video/mp4');
  });

  it('Prefer: wait=1 on a longer run answers after a second with the run still processing', async () => {
    emu.enqueue({ kind: 'prediction', durationMs: 5000 });
    const started = Date.now();
    const r = await call('POST', '/models/acme/slow/predictions', { input: {} }, { prefer: 'wait=1' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(r.json.status).toBe('processing');
    await call('POST', `/predictions/${r.json.id}/cancel`);
  });

  it('scripted: failure text, predict_time, output names and shape; cancel stops a run', async () => {
    emu.enqueue({ kind: 'prediction', durationMs: 0, fail: 'NSFW content detected' });
    const failed = await call('POST', '/models/a/b/predictions', { input: {} }, { prefer: 'wait=2' });
    expect(failed.json).toMatchObject({ status: 'failed', error: 'NSFW content detected', output: null });
    emu.enqueue({ kind: 'prediction', durationMs: 0, predictTime: 12.5, outputs: ['a.webp', 'b.webp'], outputShape: 'array' });
    const scripted = await call('POST', '/models/a/b/predictions', { input: {} }, { prefer: 'wait=2' });
    expect(scripted.json.metrics.predict_time).toBe(12.5);
    expect(scripted.json.output.map((u: string) => u.split('/').pop())).toEqual(['a.webp', 'b.webp']);
    emu.enqueue({ kind: 'prediction', durationMs: 10_000 });
    const long = await call('POST', '/models/a/b/predictions', { input: {} });
    await sleep(50);
    const canceled = await call('POST', `/predictions/${long.json.id}/cancel`);
    expect(canceled.json.status).toBe('canceled');
    expect(canceled.json.metrics.predict_time).toBeGreaterThan(0);
    expect((await call('GET', `/predictions/${long.json.id}`)).json.status).toBe('canceled');
  });

  it('errors: a wrong key 401, an unknown prediction 404, extra fields 422, scripted 429 with retry-after and 5xx; refused requests take no scenario', async () => {
    expect((await call('POST', '/models/a/b/predictions', { input: {} }, { authorization: 'Bearer nope' })).status).toBe(401);
    expect((await call('GET', '/predictions/nope')).status).toBe(404);
    emu.enqueue({ kind: 'error', status: 429 });
    emu.enqueue({ kind: 'error', status: 503 });
    const extra = await call('POST', '/models/a/b/predictions', { input: {}, version: 'x' });
    expect(extra.status).toBe(422);
    expect(extra.json.invalid_fields[0].field).toBe('version');
    const throttled = await call('POST', '/models/a/b/predictions', { input: {} });
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('retry-after')).toBe('1');
    expect((await call('POST', '/models/a/b/predictions', { input: {} })).status).toBe(503);
    expect((await call('POST', '/models/a/b/predictions', { input: {} })).status).toBe(201);
  });
});
