/**
 * What format an audio file is, read from its first bytes by file-type. Runs in the audio worker
 * thread (audio-worker.ts), never on the request thread: file-type's walk over crafted input
 * (10 MB of a gzip header and zeros) takes a sixth of a second. A declared type is only believed
 * when the bytes agree with it.
 */
import { fileTypeFromBuffer } from 'file-type';

/** The voice-sample formats (spec "Keys and uploads") and the media types that name each. */
const VOICE_FORMATS = {
  mp3: { contentType: 'audio/mpeg', declared: ['audio/mpeg', 'audio/mp3', 'audio/mpeg3', 'audio/x-mpeg', 'audio/x-mp3'] },
  wav: { contentType: 'audio/wav', declared: ['audio/wav', 'audio/x-wav', 'audio/wave', 'audio/vnd.wave'] },
  webm: { contentType: 'audio/webm', declared: ['audio/webm', 'video/webm'] },
  ogg: { contentType: 'audio/ogg', declared: ['audio/ogg', 'application/ogg', 'audio/opus', 'video/ogg'] },
} as const;

export type VoiceFormat = keyof typeof VOICE_FORMATS;

/** file-type's extension → the format it is a case of. */
const BY_EXTENSION: Record<string, VoiceFormat> = { mp3: 'mp3', wav: 'wav', webm: 'webm', ogg: 'ogg', opus: 'ogg', oga: 'ogg', spx: 'ogg' };

/** Declared types that say nothing about the content. */
const UNDECLARED = new Set(['', 'application/octet-stream', 'binary/octet-stream']);

export interface SniffedAudio {
  /** undefined: not one of the voice-sample formats (the detected type, if any, in `detected`). */
  format: VoiceFormat | undefined;
  detected: string | undefined;
  contentType: string | undefined;
}

/** A file whose type is not known (file-type found none, or the worker stopped before it answered). */
export const UNKNOWN_AUDIO: SniffedAudio = { format: undefined, detected: undefined, contentType: undefined };

export async function sniffAudio(bytes: Uint8Array): Promise<SniffedAudio> {
  const found = await fileTypeFromBuffer(bytes);
  const format = found === undefined ? undefined : BY_EXTENSION[found.ext];
  return { format, detected: found?.mime, contentType: format === undefined ? found?.mime : VOICE_FORMATS[format].contentType };
}

/** Whether a part's declared media type disagrees with the format its bytes are. */
export function declaredDisagrees(declared: string | undefined, format: VoiceFormat): boolean {
  const type = (declared ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (UNDECLARED.has(type)) return false;
  return !(VOICE_FORMATS[format].declared as readonly string[]).includes(type);
}

/** Whether the bytes are some audio or video (what a transcription takes). */
export function isAudioOrVideo(sniffed: SniffedAudio): boolean {
  return sniffed.detected !== undefined && /^(audio|video)\//.test(sniffed.detected);
}

/**
 * Which sniffed files go on to have their length measured: a voice sample whose declared type
 * agrees with its bytes (uploads), any audio or video (transcriptions), or none (a request that
 * will be refused anyway). The others are refused before their length matters.
 */
export type MeasureWhen = { voiceDeclaredAs: string | undefined } | 'audio' | 'never';

export function measures(sniffed: SniffedAudio, when: MeasureWhen): boolean {
  if (when === 'never') return false;
  if (when === 'audio') return isAudioOrVideo(sniffed);
  return sniffed.format !== undefined && !declaredDisagrees(when.voiceDeclaredAs, sniffed.format);
}
