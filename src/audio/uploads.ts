/**
 * Voice samples: POST /api/v1/audio/uploads (scope audio, multipart `file`) keeps the bytes
 * in the store and answers an unguessable URL, PUBLIC_BASE_URL + /api/v1/audio/uploads/<id>/<secret>,
 * which GET serves without a key for 24 hours; after that it answers 404 and the bytes are
 * deleted (on that read, and by the sweep for the rest). Checks, in order: the body
 * (invalid_body, missing_file, empty_file, 413 file_too_large over 10 MB), the type read from
 * the bytes (415 type_mismatch), the length (400 audio_unreadable over 60 s or unreadable),
 * then the account's 20 uploads per hour through the shared limiter (429 upload_limit_exceeded
 * with Retry-After), so a refused file never uses up the allowance.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RateLimiter, WindowLimit } from '../gate/rate-limit/rate-limiter.ts';
import { GatewayError, invalidApiKey } from '../shared/errors.ts';
import type { AudioUploadRecord, AudioUploadStore } from '../store/audio-uploads.ts';
import { declaredDisagrees, inspectAudio } from './audio-file.ts';
import { LIMITS, readForm, refuseLargeRequests } from './multipart.ts';

export const UPLOAD_TTL_MS = 24 * 3_600_000;
export const MAX_SAMPLE_SECONDS = 60;
/** Spec "Keys and uploads": 20 voice-sample uploads per hour per account (website and API together). */
export const UPLOADS_PER_HOUR: WindowLimit = { name: 'uploads', windowMs: 3_600_000, capacity: 20 };

const UPLOAD_PATH = '/api/v1/audio/uploads';
const URL_PATH = new RegExp(`^${UPLOAD_PATH}/([0-9a-f-]{36})/([A-Za-z0-9_-]{43})$`);

export interface VoiceSampleDeps {
  store: AudioUploadStore;
  limiter: RateLimiter;
  /** PUBLIC_BASE_URL; unset: the origin the request came to. */
  publicBaseUrl: string | undefined;
  now: () => number;
}

export class VoiceSamples {
  constructor(private readonly deps: VoiceSampleDeps) {}

  /** The origin upload URLs start with. */
  base(request: FastifyRequest): string {
    return this.deps.publicBaseUrl ?? `${request.protocol}://${request.host}`;
  }

  /**
   * The URL a media host is given for an upload: never the caller's own string (its origin may come from
   * a Host header the caller chose), but rebuilt on an origin the caller cannot choose: PUBLIC_BASE_URL,
   * or unset, the address the request arrived at on this machine's own socket.
   */
  hostUrl(upload: AudioUploadRecord, request: FastifyRequest): string {
    const socket = request.socket;
    // An IPv4 address on a dual-stack socket reads ::ffff:a.b.c.d.
    const local = (socket.localAddress ?? '127.0.0.1').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
    const origin = `http://${local.includes(':') ? `[${local}]` : local}:${socket.localPort ?? 80}`;
    return this.url(this.deps.publicBaseUrl ?? origin, upload);
  }

  /** The caller's own unexpired upload that `url` names, or undefined. */
  async ownUpload(url: string, accountId: string, base: string): Promise<AudioUploadRecord | undefined> {
    if (!url.startsWith(`${base}${UPLOAD_PATH}/`)) return undefined;
    const match = URL_PATH.exec(url.slice(base.length));
    if (match === null) return undefined;
    const upload = await this.find(match[1] as string, match[2] as string);
    return upload !== undefined && upload.accountId === accountId ? upload : undefined;
  }

  /** An unexpired upload whose secret matches; an expired one is deleted on the way. */
  async find(id: string, secret: string): Promise<AudioUploadRecord | undefined> {
    const upload = await this.deps.store.get(id);
    if (upload === undefined || !sameSecret(upload.secret, secret)) return undefined;
    if (upload.expiresAt <= this.deps.now()) {
      await this.deps.store.deleteExpired(this.deps.now());
      return undefined;
    }
    return upload;
  }

  /** Whole seconds the upload is still served. */
  secondsLeft(upload: AudioUploadRecord): number {
    return Math.max(0, Math.floor((upload.expiresAt - this.deps.now()) / 1000));
  }

  /** Deletes every expired upload (the gateway runs it on a timer). */
  sweep(): Promise<number> {
    return this.deps.store.deleteExpired(this.deps.now());
  }

  async upload(request: FastifyRequest): Promise<AudioUploadRecord> {
    const pass = request.gate;
    if (pass === undefined) throw invalidApiKey();
    const account = pass.key.record.accountId;
    // A caller already over the limit is told before sending 10 MB; the upload counts only once it is accepted.
    const early = await this.deps.limiter.peek(UPLOADS_PER_HOUR, account, this.deps.now());
    if (!early.allowed) throw overLimit(early.resetSeconds);
    const { file } = await readForm(request, LIMITS.voiceSample);
    // Measured only when the two type checks below pass: a refusal before them does not wait for the length.
    const { sniffed, seconds } = await inspectAudio(file.bytes, { voiceDeclaredAs: file.declaredType });
    if (sniffed.format === undefined) {
      throw new GatewayError('type_mismatch', `The file is ${sniffed.detected ?? 'of no known type'}; voice samples are MP3, WAV, WebM or Ogg (read from the bytes).`, { param: 'file' });
    }
    if (declaredDisagrees(file.declaredType, sniffed.format)) {
      throw new GatewayError('type_mismatch', `The file is declared as ${file.declaredType ?? ''} but its bytes are ${sniffed.format.toUpperCase()}.`, { param: 'file' });
    }
    if (seconds === undefined) throw new GatewayError('audio_unreadable', 'The length of the audio cannot be read from the file.', { param: 'file' });
    if (seconds > MAX_SAMPLE_SECONDS) {
      throw new GatewayError('audio_unreadable', `The sample is ${seconds.toFixed(1)} seconds long; at most ${MAX_SAMPLE_SECONDS} seconds are accepted.`, { param: 'file' });
    }
    const counted = await this.deps.limiter.hit(UPLOADS_PER_HOUR, account, this.deps.now());
    if (!counted.allowed) throw overLimit(counted.resetSeconds);
    const now = this.deps.now();
    const upload: AudioUploadRecord = {
      id: randomUUID(),
      secret: randomBytes(32).toString('base64url'),
      accountId: account,
      keyId: pass.key.record.id,
      contentType: sniffed.contentType as string,
      bytes: file.bytes,
      durationSeconds: seconds,
      createdAt: now,
      expiresAt: now + UPLOAD_TTL_MS,
    };
    await this.deps.store.create(upload);
    return upload;
  }

  url(base: string, upload: AudioUploadRecord): string {
    return `${base}${UPLOAD_PATH}/${upload.id}/${upload.secret}`;
  }
}

function overLimit(retryAfter: number): GatewayError {
  return new GatewayError('upload_limit_exceeded', `At most ${UPLOADS_PER_HOUR.capacity} voice samples are uploaded per hour per account. Retry after ${retryAfter} seconds.`, {
    headers: { 'retry-after': String(retryAfter) },
  });
}

function sameSecret(stored: string, given: string): boolean {
  const a = Buffer.from(stored);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** POST in the multipart scope; GET (no key) wherever the caller registers it. */
export function registerUploadRoute(scope: FastifyInstance, samples: VoiceSamples): void {
  scope.post(UPLOAD_PATH, {
    config: { access: { scope: 'audio', auth: 'required', rateHeaders: 'always' } },
    onRequest: refuseLargeRequests(LIMITS.voiceSample),
  }, async (request, reply) => {
    const upload = await samples.upload(request);
    return reply.code(201).send({
      id: upload.id,
      object: 'audio.upload',
      url: samples.url(samples.base(request), upload),
      expires_at: Math.floor(upload.expiresAt / 1000),
      bytes: upload.bytes.length,
      duration_seconds: upload.durationSeconds,
      content_type: upload.contentType,
    });
  });
}

export function registerUploadDownload(app: FastifyInstance, samples: VoiceSamples): void {
  app.get(`${UPLOAD_PATH}/:id/:secret`, async (request, reply) => {
    const { id, secret } = request.params as { id: string; secret: string };
    const upload = await samples.find(id, secret);
    if (upload === undefined) throw new GatewayError('not_found', 'No such upload, or it has expired (uploads are kept for 24 hours).');
    return reply.code(200).type(upload.contentType).header('cache-control', `private, max-age=${samples.secondsLeft(upload)}`).send(upload.bytes);
  });
}
