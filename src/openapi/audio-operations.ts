/** The audio routes: voice-sample uploads (and their URL), transcriptions and speech. */
import type { ErrorCode } from '../shared/errors.ts';
import { body, GATE, pathParam, RATE_HEADERS, type Json, type Operation } from './operation-parts.ts';

const MONEY: ErrorCode[] = ['insufficient_credits', 'monthly_limit_exceeded', 'api_key_limit_exceeded', 'trial_limit'];
const UPSTREAM: ErrorCode[] = ['upstream_rate_limited', 'upstream_error', 'model_unavailable', 'provider_timeout', 'internal_error'];
const FORM: ErrorCode[] = ['invalid_body', 'missing_file', 'empty_file', 'file_too_large'];

function multipart(properties: Json, required: string[], description: string): Json {
  const file = { type: 'string', contentMediaType: 'application/octet-stream', description: 'The audio file (binary).' };
  return { required: true, description, content: { 'multipart/form-data': { schema: { type: 'object', required: ['file', ...required], properties: { file, ...properties } } } } };
}

const audio = (types: string[]) => Object.fromEntries(types.map((t) => [t, { schema: { type: 'string', contentMediaType: t } }]));

export const AUDIO: Operation[] = [
  {
    method: 'post', route: '/api/v1/audio/uploads', path: '/api/v1/audio/uploads', operationId: 'uploadVoiceSample', tag: 'Media', security: 'apiKey', scope: 'audio',
    summary: 'Upload a voice sample',
    description: 'Multipart with one non-empty `file` part: MP3, WAV, WebM or Ogg (read from the bytes; a declared part type that disagrees → 415 type_mismatch), at most 10 MB (a request over 11 MB is refused from its Content-Length before it is read) and 60 seconds (400 audio_unreadable, also when the length cannot be read). 20 uploads per hour per account (429 upload_limit_exceeded with Retry-After). `url` serves the bytes without a key for 24 hours, then answers 404; use it as `voice_sample` on speech.',
    body: multipart({}, [], 'The voice sample.'),
    ok: [{ status: 201, description: '`{id, object:"audio.upload", url, expires_at (Unix seconds), bytes, duration_seconds, content_type}`.', headers: RATE_HEADERS }],
    errors: [...FORM, 'audio_unreadable', 'type_mismatch', 'upload_limit_exceeded', ...GATE, 'internal_error'],
    errorHeaders: RATE_HEADERS,
  },
  {
    method: 'get', route: '/api/v1/audio/uploads/:id/:secret', path: '/api/v1/audio/uploads/{id}/{secret}', operationId: 'getVoiceSample', tag: 'Media', security: 'none',
    summary: 'The bytes of an upload',
    description: 'No key: the URL itself is the secret. Served for 24 hours after the upload, then 404 (and the bytes are deleted).',
    parameters: [pathParam('id', 'Upload id (UUID).', { type: 'string', format: 'uuid' }), pathParam('secret', 'The unguessable part of the URL.')],
    ok: [{ status: 200, description: 'The audio bytes with their content type.', content: audio(['audio/mpeg', 'audio/wav', 'audio/webm', 'audio/ogg']) }],
    errors: ['not_found', 'internal_error'],
  },
  {
    method: 'post', route: '/api/v1/audio/transcriptions', path: '/api/v1/audio/transcriptions', operationId: 'createTranscription', tag: 'Media', security: 'apiKey', scope: 'audio',
    summary: 'Speech to text',
    description: 'As the widely used transcription API. Files up to 25 MB; a request over 26 MB is refused from its Content-Length before it is read. A model whose routing needs a language (SeamlessM4T type) without a supported ISO-639-1 `language` → 400 invalid_value. GPU-time models are held at their time limit (at most the audio\'s length) and billed on the host\'s predict time, never more GPU seconds than the audio lasts.',
    body: multipart({
      model: { type: 'string' },
      language: { type: 'string', pattern: '^[a-z]{2}$', description: 'ISO-639-1.' },
      response_format: { type: 'string', enum: ['json', 'text', 'srt', 'vtt', 'verbose_json'], default: 'json' },
      prompt: { type: 'string' },
      temperature: { type: 'number', minimum: 0, maximum: 1 },
      'timestamp_granularities[]': { type: 'array', items: { type: 'string', enum: ['segment', 'word'] } },
    }, ['model'], 'The recording and the fields; an unknown field → 400 validation_failed.'),
    ok: [{
      status: 200,
      description: 'json: `{text}`; verbose_json: `{task, language, duration, text, segments:[{id, start, end, text}]}`; text, srt and vtt as text.',
      headers: ['X-Job-Id', ...RATE_HEADERS],
      content: { 'application/json': { schema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } } }, 'text/plain': { schema: { type: 'string' } }, 'text/vtt': { schema: { type: 'string' } } },
    }],
    errors: [...FORM, 'validation_failed', 'invalid_value', 'type_mismatch', 'model_not_found', 'provider_rejected_request', ...GATE, ...MONEY, ...UPSTREAM],
    errorHeaders: RATE_HEADERS,
  },
  {
    method: 'post', route: '/api/v1/audio/speech', path: '/api/v1/audio/speech', operationId: 'createSpeech', tag: 'Media', security: 'apiKey', scope: 'audio',
    summary: 'Text to speech',
    description: 'Billed per 1,000 characters of `input`. `voice_sample` is the URL of an unexpired upload of your own account (else 400 invalid_voice_sample) and needs `consent: true` (else 400 consent_required); a model without a reference-voice input that gets one, or a cloning-only model that gets none → 400 voice_sample_required (`configuration.input_schema` shows which: `voice_sample` under `properties`, and under `required` for cloning-only models). Other model inputs as `configuration.input_schema` shows them.',
    body: body({
      type: 'object',
      required: ['model', 'input'],
      properties: {
        model: { type: 'string' },
        input: { type: 'string', minLength: 1 },
        voice: { type: 'string' },
        voice_sample: { type: 'string', format: 'uri' },
        consent: { type: 'boolean' },
        response_format: { type: 'string', enum: ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'], default: 'mp3' },
        speed: { type: 'number', minimum: 0.25, maximum: 4 },
        language: { type: 'string', pattern: '^[a-z]{2}$' },
      },
      additionalProperties: true,
    }, 'Strict: an unknown or invalid field answers 400 validation_failed with `param` and `details {formErrors, fieldErrors}`.'),
    ok: [{ status: 200, description: 'The audio bytes, `Content-Type` of the format (default audio/mpeg).', headers: ['X-Job-Id', ...RATE_HEADERS], content: audio(['audio/mpeg', 'audio/opus', 'audio/aac', 'audio/flac', 'audio/wav', 'audio/pcm']) }],
    errors: ['invalid_json', 'validation_failed', 'voice_sample_required', 'invalid_voice_sample', 'consent_required', 'model_not_found', 'provider_rejected_request', ...GATE, ...MONEY, ...UPSTREAM],
    errorHeaders: RATE_HEADERS,
  },
];
