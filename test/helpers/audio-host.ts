/**
 * Audio test harness: the predictions emulator as every media host, a gateway with a fixture
 * catalog of speech and transcription models of known prices and a clock the test can move
 * (uploads' 24-hour validity and hourly limit), and a multipart client.
 */
import { FormData } from 'undici';
import { emulatorEnv, startEmulator } from '../../emulators/index.ts';
import type { Emulator } from '../../emulators/types.ts';
import { imageEntry, writeCatalog, type Entry } from '../fixtures/catalog.ts';
import { http, startGateway, type HttpResponse, type TestGateway } from './gateway.ts';

function speechEntry(slug: string, properties: Record<string, unknown>, required: string[], extra: Entry = {}): Entry {
  return {
    ...imageEntry(slug),
    category: 'speech_tts',
    provider: 'provider_6',
    provider_model_id: `acme/${slug}`,
    supported_formats: ['text', 'audio'],
    pricing: { unit: 'per_1000_characters', usd: '0.1', basis: '1,000 characters' },
    configuration: { input_schema: { type: 'object', required: ['input', ...required], properties: { input: { type: 'string', maxLength: 5000 }, ...properties } }, default_params: {} },
    ...extra,
  };
}

function transcriptionEntry(slug: string, extra: Entry = {}): Entry {
  return {
    ...imageEntry(slug),
    category: 'transcription_stt',
    provider: 'provider_10',
    provider_model_id: `acme/${slug}`,
    supported_formats: ['audio', 'text'],
    pricing: { unit: 'per_gpu_second', usd_per_second: '0.001', estimated_seconds: 5, hold_seconds: 30, basis: 'GPU time' },
    configuration: {
      input_schema: { type: 'object', required: ['file'], properties: { file: { type: 'string' }, language: { type: 'string' }, response_format: { type: 'string', enum: ['json', 'text', 'srt', 'vtt', 'verbose_json'] } } },
      default_params: { response_format: 'json' },
    },
    transcription: { needs_language: false },
    ...extra,
  };
}

/**
 * Prices: every speech model USD 0.1 per 1,000 characters (10,000 micro-credits a character);
 * every transcription model USD 0.001 per GPU-second (100,000 micro-credits a second), 30 s held.
 * tts: voice only; tts-clone: optional voice_sample; tts-clone-only: voice_sample required (wav out);
 * stt: Whisper-like; stt-seamless: needs a language (fr → fra, en → eng).
 */
export const AUDIO_CATALOG: Entry[] = [
  speechEntry('tts', { voice: { type: 'string' }, response_format: { type: 'string', enum: ['mp3', 'wav', 'opus'] } }, []),
  speechEntry('tts-clone', { voice_sample: { type: 'string' } }, []),
  // A host whose catalog default is wav though it also speaks mp3 (as xtts-v2).
  speechEntry('tts-wav-default', { response_format: { type: 'string', enum: ['wav', 'mp3'] } }, [], {
    configuration: {
      input_schema: { type: 'object', required: ['input'], properties: { input: { type: 'string' }, response_format: { type: 'string', enum: ['wav', 'mp3'] } } },
      default_params: { response_format: 'wav' },
    },
  }),
  speechEntry('tts-clone-only', { voice_sample: { type: 'string' }, response_format: { type: 'string', enum: ['wav'] } }, ['voice_sample'], {
    configuration: {
      input_schema: { type: 'object', required: ['input', 'voice_sample'], properties: { input: { type: 'string' }, voice_sample: { type: 'string' }, response_format: { type: 'string', enum: ['wav'] } } },
      default_params: { response_format: 'wav' },
    },
  }),
  transcriptionEntry('stt'),
  transcriptionEntry('stt-seamless', {
    provider: 'custom',
    configuration: { input_schema: { type: 'object', required: ['file', 'language'], properties: { file: { type: 'string' }, language: { type: 'string', pattern: '^[a-z]{2}$' } } }, default_params: {} },
    transcription: { needs_language: true, languages: { fr: 'fra', en: 'eng' } },
  }),
  imageEntry('pic', { provider: 'provider_5' }),
];

export const MICRO_PER_CHARACTER = 10_000;
export const MICRO_PER_GPU_SECOND = 100_000;

export interface AudioHarness {
  gw: TestGateway;
  host: Emulator;
  clock: { now: number };
  close(): Promise<void>;
}

export async function startAudioHarness(env: Record<string, string> = {}): Promise<AudioHarness> {
  const host = await startEmulator('predictions');
  const clock = { now: Date.now() };
  const gw = await startGateway({ CATALOG_FILE: writeCatalog(AUDIO_CATALOG), ...emulatorEnv(host), MEDIA_POLL_MS: '20', ...env }, { now: () => clock.now });
  return {
    gw,
    host,
    clock,
    async close() {
      await gw.close();
      await host.close();
    },
  };
}

export interface FilePart {
  bytes: Buffer;
  /** The part's declared Content-Type (default application/octet-stream). */
  type?: string;
  name?: string;
}

/** POST multipart/form-data: text fields (a list repeats the field) and an optional `file` part. */
export async function postForm(url: string, key: string | undefined, fields: Record<string, string | string[]>, file?: FilePart): Promise<HttpResponse> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) for (const v of Array.isArray(value) ? value : [value]) form.append(name, v);
  if (file !== undefined) form.append('file', new Blob([file.bytes], { type: file.type ?? 'application/octet-stream' }), file.name ?? 'audio.bin');
  return http(url, key === undefined ? { form } : { form, key });
}

/** The input of the last prediction created at the host. */
export function lastInput(host: Emulator): Record<string, unknown> {
  const created = host.requests.filter((r) => r.method === 'POST' && /\/models\/.+\/predictions$/.test(r.path)).at(-1);
  if (created === undefined) throw new Error('no prediction created');
  return (created.body as { input: Record<string, unknown> }).input;
}
