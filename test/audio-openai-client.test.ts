/**
 * The official `openai` client's audio.transcriptions.create and audio.speech.create work
 * unchanged against the gateway, over the shipped catalog (Whisper large-v3, SeamlessM4T v2,
 * Eleven v3, Chatterbox with a voice sample) and the predictions emulator as every media host.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorEnv, startEmulator } from '../emulators/index.ts';
import type { Emulator } from '../emulators/types.ts';
import { money } from './helpers/chat.ts';
import { MP3, wav } from './helpers/audio.ts';
import { lastInput, postForm } from './helpers/audio-host.ts';
import { startGateway, type TestGateway } from './helpers/gateway.ts';

let host: Emulator;
let gw: TestGateway;
let client: OpenAI;
let key: string;
let accountId: string;

beforeAll(async () => {
  host = await startEmulator('predictions');
  gw = await startGateway({ ...emulatorEnv(host), MEDIA_POLL_MS: '20' });
  ({ key, accountId } = await gw.account({ credits: 100, key: { scopes: ['audio'] } }));
  client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await host.close();
});

describe('openai client: audio.transcriptions.create', () => {
  it('Whisper large-v3, json (the default): {text}; billed on the predict time (USD 0.000975 per GPU-second)', async () => {
    const before = await money(gw, accountId);
    host.enqueue({ kind: 'prediction', durationMs: 20, predictTime: 2 });
    const answer = await client.audio.transcriptions.create({ file: await toFile(wav(30), 'meeting.wav', { type: 'audio/wav' }), model: 'whisper-large-v3' });
    expect(answer).toEqual({ text: 'Hello from the emulated host. This is a transcript.' });
    // 2 s × 0.000975 USD = 0.00195 USD = 195,000 micro-credits.
    expect(await money(gw, accountId)).toEqual({ balance: before.balance - 195_000, held: 0 });
  });

  it('verbose_json with a language, and text', async () => {
    const verbose = await client.audio.transcriptions.create({ file: await toFile(MP3, 'clip.mp3'), model: 'whisper-large-v3', response_format: 'verbose_json', language: 'en' });
    expect(verbose.text).toBe('Hello from the emulated host. This is a transcript.');
    expect(verbose.language).toBe('en');
    expect(verbose.segments?.length).toBe(2);
    const text = await client.audio.transcriptions.create({ file: await toFile(MP3, 'clip.mp3'), model: 'whisper-large-v3', response_format: 'text' });
    expect(text).toBe('Hello from the emulated host. This is a transcript.\n');
  });

  it('SeamlessM4T without a language → the typed 400 invalid_value; with fr → the host gets fra', async () => {
    const refused = await client.audio.transcriptions.create({ file: await toFile(wav(2), 'a.wav'), model: 'seamless-m4t-v2-large' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('invalid_value');
    const ok = await client.audio.transcriptions.create({ file: await toFile(wav(2), 'a.wav'), model: 'seamless-m4t-v2-large', language: 'fr' });
    expect(ok.text).toContain('transcript');
    expect(lastInput(host).language).toBe('fra');
  });
});

describe('openai client: audio.speech.create', () => {
  it('Eleven v3: the audio bytes as audio/mpeg, billed per character (USD 0.1 per 1,000)', async () => {
    const before = await money(gw, accountId);
    const input = 'The gateway speaks.';
    const response = await client.audio.speech.create({ model: 'eleven-v3', input, voice: 'narrator-1' });
    expect(response.headers.get('content-type')).toBe('audio/mpeg');
    expect(response.headers.get('x-job-id')).toMatch(/^[0-9a-f-]{36}$/);
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(bytes.subarray(0, 3).toString('latin1')).toBe('ID3');
    expect(await money(gw, accountId)).toEqual({ balance: before.balance - input.length * 10_000, held: 0 });
  });

  it('Chatterbox with a voice sample (extra body fields pass through the client): the host gets the upload URL', async () => {
    const upload = await postForm(`${gw.url}/api/v1/audio/uploads`, key, {}, { bytes: wav(6), type: 'audio/wav' });
    expect(upload.status).toBe(201);
    const params = { model: 'chatterbox', input: 'In my own voice.', voice: 'alloy', voice_sample: upload.json.url, consent: true };
    const response = await client.audio.speech.create(params as OpenAI.Audio.SpeechCreateParams);
    expect(response.status).toBe(200);
    expect(lastInput(host)).toMatchObject({ input: 'In my own voice.', voice_sample: upload.json.url });
    const cloningOnly = await client.audio.speech.create({ model: 'xtts-v2', input: 'Hi', voice: 'alloy' }).catch((e: unknown) => e);
    expect((cloningOnly as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('voice_sample_required');
  });
});
