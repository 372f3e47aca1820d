/**
 * Media and GPU hosts (provider_4, provider_5, provider_6, provider_9, provider_10, custom):
 * Replicate-style predictions (reference/providers.md §7).
 * Base URL `http://host:port/v1`; `Authorization: Bearer`.
 *   POST /v1/models/{owner}/{name}/predictions  {input}   (`Prefer: wait=N` holds the answer up to N s)
 *   GET  /v1/predictions/{id}
 *   POST /v1/predictions/{id}/cancel
 *   GET  /files/{id}/{name}                                (the output files it names; no key, like delivery URLs)
 * A prediction's life is scripted by the scenario taken at its creation and follows the clock:
 * `starting` for startMs, `processing` for durationMs, then `succeeded` or `failed`.
 * Outputs by input: `input.input` text (speech) → one audio file in `response_format` (mp3
 * by default); `file`/`audio` (transcription) → a transcript `{text, segments, language}`;
 * a `duration` → a video; otherwise images.
 */
import { jsonReply, header, type Exchange, type JsonReply, type ProtocolImpl, type Reply } from './core.ts';
import type { PredictionScenario, Scenario } from './types.ts';
import { isRecord, randomId } from './util.ts';

type Status = 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled';

interface Run {
  id: string;
  model: string;
  input: Record<string, unknown>;
  createdAt: number;
  startAt: number;
  endAt: number;
  files: string[];
  /** A transcript (or the scenario's value) answered as `output` instead of file URLs. */
  value: unknown;
  single: boolean;
  fail: string | undefined;
  predictTime: number | undefined;
  outputSeconds: number | undefined;
  canceledAt: number | undefined;
}

const DEFAULT_DURATION_MS = 50;
const TOP_LEVEL_FIELDS = new Set(['input', 'webhook', 'webhook_events_filter', 'stream']);

function problem(status: number, title: string, detail: string, extra: Record<string, unknown> = {}): JsonReply {
  return jsonReply(status, { title, detail, status, ...extra }, { 'content-type': 'application/problem+json' });
}

/** The host's own error answer for a status (a scenario's `body` overrides it). */
function errorReply(status: number, body?: unknown, headers: Record<string, string> = {}): JsonReply {
  if (body !== undefined) return jsonReply(status, body, { ...headers });
  switch (status) {
    case 401:
      return problem(401, 'Unauthenticated', 'You did not pass a valid authentication token');
    case 402:
      return problem(402, 'Insufficient credit', 'You have insufficient credit to run this model. Go to https://replicate.com/account/billing#billing to purchase credit.');
    case 403:
      return problem(403, 'Forbidden', 'You do not have permission to run this model.');
    case 404:
      return problem(404, 'Not found', 'The requested resource could not be found.');
    case 422:
      return problem(422, 'Input validation failed', 'input.prompt: prompt is required', { invalid_fields: [{ type: 'required', field: 'input.prompt', description: 'prompt is required' }] });
    case 429: {
      const reply = problem(429, 'Request was throttled', 'Request was throttled. Expected available in 1 second.');
      reply.headers['retry-after'] = '1';
      return reply;
    }
    default:
      return problem(status, status >= 500 ? 'Internal server error' : 'Request failed', status >= 500 ? 'Internal server error' : `Request failed with status ${status} (emulated).`);
  }
}

function statusAt(run: Run, at: number): Status {
  if (run.canceledAt !== undefined && run.canceledAt <= at) return 'canceled';
  if (at < run.startAt) return 'starting';
  if (at < run.endAt) return 'processing';
  return run.fail === undefined ? 'succeeded' : 'failed';
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function seconds(ms: number): number {
  return Math.round(ms) / 1000;
}

/** The prediction object as the host shows it at `at`. */
function view(run: Run, origin: string, at: number): Record<string, unknown> {
  const status = statusAt(run, at);
  const done = status === 'succeeded' || status === 'failed' || status === 'canceled';
  const endedAt = status === 'canceled' ? (run.canceledAt as number) : run.endAt;
  const started = at >= run.startAt && (run.canceledAt === undefined || run.canceledAt > run.startAt);
  const urls = run.files.map((name) => `${origin}/files/${run.id}/${encodeURIComponent(name)}`);
  const metrics: Record<string, number> = {};
  if (done) {
    const processed = Math.max(0, endedAt - run.startAt);
    metrics.predict_time = status === 'canceled' ? seconds(processed) : run.predictTime ?? seconds(processed);
    metrics.total_time = seconds(endedAt - run.createdAt);
    if (status === 'succeeded' && run.outputSeconds !== undefined) metrics.video_output_duration_seconds = run.outputSeconds;
  }
  return {
    id: run.id,
    model: run.model,
    version: 'emulated',
    input: run.input,
    logs: '',
    output: status === 'succeeded' ? (run.value !== undefined ? run.value : run.single ? (urls[0] ?? null) : urls) : null,
    error: status === 'failed' ? (run.fail ?? 'Prediction failed') : null,
    status,
    created_at: iso(run.createdAt),
    started_at: started ? iso(run.startAt) : null,
    completed_at: done ? iso(endedAt) : null,
    data_removed: false,
    metrics,
    urls: {
      get: `${origin}/v1/predictions/${run.id}`,
      cancel: `${origin}/v1/predictions/${run.id}/cancel`,
      web: `${origin}/p/${run.id}`,
    },
  };
}

function countAsked(input: Record<string, unknown>): number | undefined {
  const n = input.n ?? input.num_outputs;
  return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : undefined;
}

const SPEECH_FORMATS = new Set(['mp3', 'wav', 'opus', 'flac', 'aac', 'pcm']);

/** What a transcription model answers for its input (a fixed text, one segment per sentence). */
function transcriptOf(input: Record<string, unknown>): unknown {
  const text = 'Hello from the emulated host. This is a transcript.';
  return {
    text,
    segments: [
      { start: 0, end: 0.5, text: 'Hello from the emulated host.' },
      { start: 0.5, end: 1, text: ' This is a transcript.' },
    ],
    language: typeof input.language === 'string' ? input.language : 'en',
  };
}

function defaultFiles(input: Record<string, unknown>, asked: number | undefined): string[] {
  if (typeof input.input === 'string') {
    const format = typeof input.response_format === 'string' && SPEECH_FORMATS.has(input.response_format) ? input.response_format : 'mp3';
    return [`speech-0.${format}`];
  }
  const video = typeof input.duration === 'number';
  return Array.from({ length: asked ?? 1 }, (_, i) => `out-${i}.${video ? 'mp4' : 'png'}`);
}

function newRun(model: string, input: Record<string, unknown>, s: PredictionScenario | null, now: number): Run {
  const asked = countAsked(input);
  const video = typeof input.duration === 'number';
  const transcribing = typeof input.input !== 'string' && (typeof input.file === 'string' || typeof input.audio === 'string');
  const files = s?.outputs ?? (transcribing ? [] : defaultFiles(input, asked));
  const startAt = now + Math.max(0, s?.startMs ?? 0);
  return {
    id: randomId(26).toLowerCase(),
    model,
    input,
    createdAt: now,
    startAt,
    endAt: startAt + Math.max(0, s?.durationMs ?? DEFAULT_DURATION_MS),
    files,
    value: s?.value !== undefined ? s.value : transcribing ? transcriptOf(input) : undefined,
    single: s?.outputShape === undefined ? files.length === 1 && asked === undefined : s.outputShape === 'string',
    fail: s?.fail,
    predictTime: s?.predictTime,
    outputSeconds: s?.outputSeconds ?? (video && typeof input.duration === 'number' ? input.duration : undefined),
    canceledAt: undefined,
  };
}

// ---------------------------------------------------------------------------
// Output files: a few real bytes of each format, so a client can tell what it got.

const FILES: Record<string, { type: string; bytes: Buffer }> = {
  png: { type: 'image/png', bytes: Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64') },
  jpg: { type: 'image/jpeg', bytes: Buffer.from('ffd8ffe000104a46494600010100000100010000ffd9', 'hex') },
  webp: { type: 'image/webp', bytes: Buffer.from('524946461a000000574542505650384c0d0000002f0000001007101111888808', 'hex') },
  mp4: { type: 'video/mp4', bytes: Buffer.from('000000186674797069736f6d0000020069736f6d6d703432', 'hex') },
  wav: { type: 'audio/wav', bytes: Buffer.from('524946462400000057415645666d7420100000000100010044ac000088580100020010006461746100000000', 'hex') },
  mp3: { type: 'audio/mpeg', bytes: Buffer.from('494433030000000000000000', 'hex') },
  opus: { type: 'audio/ogg', bytes: Buffer.from('4f676753000200000000000000000000', 'hex') },
  flac: { type: 'audio/flac', bytes: Buffer.from('664c614300000022', 'hex') },
};

function fileReply(name: string): Reply {
  const ext = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
  const file = FILES[ext === 'jpeg' ? 'jpg' : ext] ?? { type: 'text/plain; charset=utf-8', bytes: Buffer.from(`emulated output ${name}\n`) };
  return { type: 'json', status: 200, headers: { 'content-type': file.type }, body: '', bytes: file.bytes };
}

// ---------------------------------------------------------------------------

const CREATE = /^\/v1\/models\/([^/]+(?:\/[^/]+)?)\/predictions$/;
const PREDICTION = /^\/v1\/predictions\/([^/]+)$/;
const CANCEL = /^\/v1\/predictions\/([^/]+)\/cancel$/;
const FILE = /^\/files\/([^/]+)\/([^/]+)$/;

/** `Prefer: wait` or `wait=N` (1–60 s); undefined without the header, 'invalid' for anything else. */
function preferWait(ex: Exchange): number | undefined | 'invalid' {
  const prefer = header(ex, 'prefer');
  if (prefer === undefined) return undefined;
  const match = /^\s*wait(?:\s*=\s*(\d+))?\s*$/.exec(prefer);
  if (match === null) return 'invalid';
  const n = match[1] === undefined ? 60 : Number(match[1]);
  return n >= 1 && n <= 60 ? n : 'invalid';
}

export function predictionsProtocol(): ProtocolImpl {
  const runs = new Map<string, Run>();

  const create = (ex: Exchange, model: string): Reply => {
    if (ex.bodyInvalid || !isRecord(ex.body)) return problem(400, 'Invalid JSON', 'The request body is not a JSON object.');
    const body = ex.body;
    const extra = Object.keys(body).filter((k) => !TOP_LEVEL_FIELDS.has(k));
    if (extra.length > 0) {
      return problem(422, 'Input validation failed', `${extra[0]}: Additional property ${extra[0]} is not allowed`, {
        invalid_fields: extra.map((field) => ({ type: 'additional_property_not_allowed', field, description: `Additional property ${field} is not allowed` })),
      });
    }
    if (!isRecord(body.input)) {
      return problem(422, 'Input validation failed', 'input: input is required and must be an object', { invalid_fields: [{ type: 'required', field: 'input', description: 'input is required' }] });
    }
    const wait = preferWait(ex);
    if (wait === 'invalid') return problem(400, 'Invalid Prefer header', 'Prefer must be "wait" or "wait=N" with N from 1 to 60.');
    const picked = ex.take();
    const s: Scenario | null = picked.scenario;
    if (s !== null && s.kind === 'hang') return { type: 'hang' };
    if (s !== null && s.kind === 'error') return errorReply(s.status, s.body, s.headers);
    const now = Date.now();
    const run = newRun(model, body.input, s !== null && s.kind === 'prediction' ? s : null, now);
    runs.set(run.id, run);
    // With `Prefer: wait` the answer leaves when the run ends or the wait is over (after any scripted
    // delay of the answer itself), showing the run as it is then.
    const slow = Math.max(0, picked.opts.delayMs ?? 0);
    const delay = slow + (wait === undefined ? 0 : Math.min(Math.max(0, run.endAt - now - slow), wait * 1000));
    const reply = jsonReply(201, view(run, origin(ex), now + delay), {});
    if (delay > 0) reply.opts = { delayMs: delay };
    return reply;
  };

  return {
    kind: 'predictions',
    basePath: '/v1',
    handle(ex: Exchange): Reply {
      const file = FILE.exec(ex.pathname);
      if (ex.method === 'GET' && file !== null) {
        const run = runs.get(file[1] as string);
        const name = decodeURIComponent(file[2] as string);
        if (run === undefined || statusAt(run, Date.now()) !== 'succeeded' || !run.files.includes(name)) return errorReply(404);
        return fileReply(name);
      }
      const auth = header(ex, 'authorization');
      const token = auth === undefined ? undefined : /^Bearer\s+(\S+)$/i.exec(auth)?.[1];
      if (token !== ex.apiKey) return errorReply(401);

      const created = CREATE.exec(ex.pathname);
      if (created !== null && ex.method === 'POST') return create(ex, decodeURIComponent(created[1] as string));
      const cancel = CANCEL.exec(ex.pathname);
      if (cancel !== null && ex.method === 'POST') {
        const run = runs.get(cancel[1] as string);
        if (run === undefined) return errorReply(404);
        const now = Date.now();
        const status = statusAt(run, now);
        if (status === 'starting' || status === 'processing') run.canceledAt = now;
        return jsonReply(200, view(run, origin(ex), now));
      }
      const got = PREDICTION.exec(ex.pathname);
      if (got !== null && ex.method === 'GET') {
        const run = runs.get(got[1] as string);
        return run === undefined ? errorReply(404) : jsonReply(200, view(run, origin(ex), Date.now()));
      }
      return errorReply(404);
    },
  };
}

function origin(ex: Exchange): string {
  return `http://${header(ex, 'host') ?? '127.0.0.1'}`;
}
