/**
 * POST /api/v1/audio/speech (scope audio): `{model, input, voice?, voice_sample?, consent?,
 * response_format?, speed?, language?}` → 200 audio bytes with the format's Content-Type
 * (default audio/mpeg) and X-Job-Id; billed per 1,000 characters of `input`. Checks in order:
 * the body against the route's fields and the model's input schema (validation_failed), the
 * model, then the voice sample: sent to a model without a reference-voice input, or missing
 * on a cloning-only model → voice_sample_required; without `consent: true` → consent_required;
 * not the URL of the caller's own unexpired upload → invalid_voice_sample; then the hold.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { inputFields } from '../media/input-schema.ts';
import { prepareMedia, type MediaRoute, type PreparedMedia } from '../media/media-request.ts';
import { GatewayError, invalidApiKey } from '../shared/errors.ts';
import { checkHost, runAudio, termsOf, undelivered, type AudioRouteDeps } from './audio-run.ts';
import type { VoiceSamples } from './uploads.ts';

/** Audio formats and the Content-Type each is answered with. */
const FORMATS = { mp3: 'audio/mpeg', opus: 'audio/opus', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm' } as const;
type SpeechFormat = keyof typeof FORMATS;

export const SPEECH_ROUTE: MediaRoute = {
  kind: 'speech',
  category: 'speech_tts',
  format: 'speech',
  noun: 'a speech',
  fields: {
    model: { schema: z.string().min(1, 'must be a model slug'), required: true },
    input: { schema: z.string().min(1, 'must not be empty').max(40_000), required: true },
    voice: { schema: z.string().min(1), required: false },
    voice_sample: { schema: z.string().min(1), required: false },
    consent: { schema: z.boolean(), required: false },
    response_format: { schema: z.enum(Object.keys(FORMATS) as [SpeechFormat, ...SpeechFormat[]]), required: false },
    speed: { schema: z.number().min(0.25).max(4), required: false },
    language: { schema: z.string().regex(/^[a-z]{2}$/, 'must be an ISO-639-1 code'), required: false },
  },
  // Sent to the host only when the model declares them (the OpenAI client always sends `voice`).
  routeOnly: ['model', 'consent', 'voice_sample', 'voice', 'speed', 'language', 'response_format'],
  modelInputs: [],
  needs: [],
  ownChecks: ['voice_sample'],
};

/**
 * The format answered: the one the host is asked for; without one asked, MP3 (the spec's default) when the
 * model's format input takes it, else the model's own default; a model without a format input answers MP3 only.
 */
function answerFormat(body: Record<string, unknown>, media: PreparedMedia, input: Record<string, unknown>): SpeechFormat {
  const field = inputFields(media.model.entry.configuration.input_schema).fields.response_format;
  if (field !== undefined) {
    // The catalog's default for the host (xtts-v2: wav) does not decide the client's default.
    if (body.response_format === undefined && input.response_format !== undefined && field.safeParse('mp3').success) input.response_format = 'mp3';
    const format = input.response_format;
    return typeof format === 'string' && format in FORMATS ? (format as SpeechFormat) : 'mp3';
  }
  if (body.response_format !== undefined && body.response_format !== 'mp3') {
    const why = `the model '${media.model.entry.slug}' answers mp3 only`;
    throw new GatewayError('validation_failed', `Invalid request: response_format: ${why}.`, { param: 'response_format', details: { formErrors: [], fieldErrors: { response_format: [why] } } });
  }
  return 'mp3';
}

/** The model's fit for a voice sample, then consent, then the upload itself; the URL the host is to fetch it at, if one was sent. */
async function checkVoiceSample(request: FastifyRequest, media: PreparedMedia, samples: VoiceSamples): Promise<string | undefined> {
  const body = request.body as Record<string, unknown>;
  const schema = inputFields(media.model.entry.configuration.input_schema);
  const slug = media.model.entry.slug;
  const sample = body.voice_sample;
  if (sample === undefined) {
    if (schema.required.has('voice_sample')) throw new GatewayError('voice_sample_required', `The model '${slug}' only clones a voice: send voice_sample (the URL of your upload) with consent: true.`, { param: 'voice_sample' });
    return undefined;
  }
  if (!('voice_sample' in schema.fields)) throw new GatewayError('voice_sample_required', `The model '${slug}' takes no reference voice: leave voice_sample out, or choose a voice-cloning model.`, { param: 'voice_sample' });
  if (body.consent !== true) throw new GatewayError('consent_required', 'A voice sample needs consent: true (you have the speaker\'s consent to clone the voice).', { param: 'consent' });
  const pass = request.gate;
  if (pass === undefined) throw invalidApiKey();
  const upload = await samples.ownUpload(String(sample), pass.key.record.accountId, samples.base(request));
  if (upload === undefined) throw new GatewayError('invalid_voice_sample', 'voice_sample must be the URL of an unexpired upload of your own account (POST /audio/uploads).', { param: 'voice_sample' });
  return samples.hostUrl(upload, request);
}

export function registerSpeechRoute(app: FastifyInstance, deps: AudioRouteDeps & { samples: VoiceSamples }): void {
  app.post('/api/v1/audio/speech', { config: { access: { scope: 'audio', auth: 'required', rateHeaders: 'always' } } }, async (request, reply) => {
    const media = prepareMedia(request.body, SPEECH_ROUTE, deps.catalog);
    const sampleUrl = await checkVoiceSample(request, media, deps.samples);
    checkHost(request, deps, media);
    const input: Record<string, unknown> = { ...media.input };
    if (sampleUrl !== undefined) input.voice_sample = sampleUrl;
    const format = answerFormat(request.body as Record<string, unknown>, media, input);
    const text = String(input.input);
    const terms = termsOf(request, media, { input, characters: [...text].length });
    const outcome = await runAudio(request, reply, deps, {
      kind: 'speech',
      media,
      input,
      terms,
      output: 'files',
      refusal: { spendingLimit: 'monthly_limit_exceeded', holdMadeOf: "the input's characters at the model's price", lowerBy: 'send a shorter input' },
    });
    if (outcome.kind !== 'delivered') return undelivered(reply, outcome);
    // The audio bytes the runner collected (AUDIO_OUTPUT_CHECKS.speech) before billing the run.
    return reply.code(200).type(FORMATS[format]).send(outcome.collected as Buffer);
  });
}
