/**
 * POST /api/v1/audio/transcriptions (scope audio): multipart `file` + `model` (+ `language`,
 * `response_format`, and the fields of the widely used transcription API). Checks in order:
 * the body (413 before reading over 26 MB, invalid_body, missing_file, empty_file, 413 over
 * 25 MB), the fields and the model (validation_failed, model_not_found, model_unavailable),
 * the file (415 type_mismatch when its bytes are not audio), the language (400 invalid_value:
 * not ISO-639-1, or missing or unsupported on a model whose routing needs one), then the hold.
 * GPU-time models are held at their time limit and billed on the host's predict time, never
 * more GPU seconds than the audio is long (when its length can be read).
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { inputFields } from '../media/input-schema.ts';
import { prepareMedia, type MediaRoute, type PreparedMedia } from '../media/media-request.ts';
import { GatewayError } from '../shared/errors.ts';
import { inspectAudio, isAudioOrVideo } from './audio-file.ts';
import { checkHost, runAudio, termsOf, undelivered, type AudioRouteDeps } from './audio-run.ts';
import { LIMITS, readForm, refuseLargeRequests, type MultipartForm } from './multipart.ts';
import { renderTranscript, RESPONSE_FORMATS, type ResponseFormat, type Transcript } from './transcript.ts';

export const TRANSCRIPTION_ROUTE: MediaRoute = {
  kind: 'transcription',
  category: 'transcription_stt',
  format: 'transcription',
  noun: 'a transcription',
  fields: {
    model: { schema: z.string().min(1, 'must be a model slug'), required: true },
    response_format: { schema: z.enum(RESPONSE_FORMATS), required: false },
    prompt: { schema: z.string().max(10_000), required: false },
    temperature: { schema: z.number().min(0).max(1), required: false },
    timestamp_granularities: { schema: z.array(z.enum(['segment', 'word'])), required: false },
  },
  routeOnly: ['model', 'response_format', 'prompt', 'temperature', 'timestamp_granularities'],
  modelInputs: [],
  needs: [],
  // The file and the language are the route's own: their errors have their own codes.
  ownChecks: ['file', 'language'],
};

/** Where a model takes the audio: the first of these its input schema declares. */
const FILE_INPUTS = ['file', 'audio', 'audio_file'];
const ISO_639_1 = /^[a-z]{2}$/;

/** The form's text fields as the route's body: numbers and lists where the API has them; `language` apart. */
function bodyOf(form: MultipartForm): { body: Record<string, unknown>; language: unknown } {
  const body: Record<string, unknown> = {};
  let language: unknown;
  for (const [name, value] of Object.entries(form.fields)) {
    if (name === 'language') language = value;
    else if (name === 'temperature' && typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) body[name] = Number(value);
    else if (name === 'timestamp_granularities[]' || name === 'timestamp_granularities') body.timestamp_granularities = Array.isArray(value) ? value : [value];
    else body[name] = value;
  }
  return { body, language };
}

/** The language the host gets (the model's own code where its routing maps them), or 400 invalid_value. */
function hostLanguage(language: unknown, media: PreparedMedia): string | undefined {
  const routing = media.model.entry.transcription;
  const slug = media.model.entry.slug;
  if (language === undefined || language === '') {
    if (routing?.needs_language === true) throw invalidLanguage(`The model '${slug}' needs the spoken language: send language as an ISO-639-1 code.`);
    return undefined;
  }
  if (typeof language !== 'string' || !ISO_639_1.test(language)) throw invalidLanguage('language must be one ISO-639-1 code (two lowercase letters, e.g. "fr").');
  if (routing?.languages === undefined) return language;
  const own = routing.languages[language];
  if (own === undefined) throw invalidLanguage(`The model '${slug}' does not take the language '${language}'.`);
  return own;
}

function invalidLanguage(message: string): GatewayError {
  return new GatewayError('invalid_value', message, { param: 'language' });
}

export function registerTranscriptionRoute(scope: FastifyInstance, deps: AudioRouteDeps): void {
  scope.post('/api/v1/audio/transcriptions', {
    config: { access: { scope: 'audio', auth: 'required', rateHeaders: 'always' } },
    onRequest: refuseLargeRequests(LIMITS.transcription),
  }, async (request, reply) => {
    const form = await readForm(request, LIMITS.transcription);
    const { body, language } = bodyOf(form);
    const media = prepareMedia(body, TRANSCRIPTION_ROUTE, deps.catalog);
    // The language and host are checked once, before the file: a refusal does not wait for the length, and is told after the type's.
    let refused: unknown;
    let lang: string | undefined;
    try {
      lang = hostLanguage(language, media);
      checkHost(request, deps, media);
    } catch (error) {
      refused = error;
    }
    const { sniffed, seconds } = await inspectAudio(form.file.bytes, refused === undefined ? 'audio' : 'never');
    if (!isAudioOrVideo(sniffed)) {
      throw new GatewayError('type_mismatch', `The file is ${sniffed.detected ?? 'of no known type'}, not audio.`, { param: 'file' });
    }
    if (refused !== undefined) throw refused;
    const declared = inputFields(media.model.entry.configuration.input_schema).fields;
    const input: Record<string, unknown> = { ...media.input };
    // The answer's format is rendered here from the transcript: the host runs its default.
    const defaultFormat = media.model.entry.configuration.default_params.response_format;
    if (defaultFormat === undefined) delete input.response_format;
    else input.response_format = defaultFormat;
    input[FILE_INPUTS.find((name) => name in declared) ?? 'file'] = `data:${sniffed.detected};base64,${form.file.bytes.toString('base64')}`;
    if (lang !== undefined && 'language' in declared) input.language = lang;
    // GPU time is held and billed as on every GPU model (the host's predict_time, capped only by the model's time
    // limit): the audio's length bounds neither, as a host may take longer than the recording lasts.
    const terms = termsOf(request, media, { input, characters: 0 });
    const outcome = await runAudio(request, reply, deps, {
      kind: 'transcription',
      media,
      input,
      terms,
      output: 'value',
      refusal: { spendingLimit: 'monthly_limit_exceeded', holdMadeOf: "the model's GPU time for this recording", lowerBy: 'send a shorter recording' },
    });
    if (outcome.kind !== 'delivered') return undelivered(reply, outcome);
    // The transcript the runner read (AUDIO_OUTPUT_CHECKS.transcription) before billing the run.
    const format = (body.response_format as ResponseFormat | undefined) ?? 'json';
    const rendered = renderTranscript(outcome.collected as Transcript, format, { language: typeof language === 'string' ? language : undefined, duration: seconds });
    return reply.code(200).type(rendered.contentType).send(rendered.body);
  });
}
