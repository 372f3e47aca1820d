/**
 * What an audio file is, read from its bytes: the container (file-type) and the length
 * (music-metadata). A declared type is only believed when the bytes agree with it.
 */
import { fileTypeFromBuffer } from 'file-type';
import { parseBuffer } from 'music-metadata';

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

export async function sniffAudio(bytes: Buffer): Promise<SniffedAudio> {
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

/** The length in seconds, or undefined when it cannot be read from the file. */
export async function audioSeconds(bytes: Buffer, contentType: string | undefined): Promise<number | undefined> {
  try {
    const { format } = await parseBuffer(bytes, contentType === undefined ? undefined : { mimeType: contentType, size: bytes.length }, { duration: true, skipCovers: true });
    const seconds = format.duration;
    return seconds !== undefined && Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
  } catch {
    return undefined;
  }
}
