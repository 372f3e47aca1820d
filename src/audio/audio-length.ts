/**
 * The length of an audio file, measured from its bytes. Runs in the audio worker thread
 * (audio-worker.ts), never on the request thread: music-metadata takes tens of seconds on
 * crafted MP3 and WAV files (docs/decisions.md "Audio length from the audio itself").
 */
import { parseBuffer } from 'music-metadata';
import { isMatroska, matroskaSeconds } from './matroska-length.ts';
import { isOgg, oggSeconds } from './ogg-length.ts';
import { UnreadableAudio } from './walk-budget.ts';

/** Longer than this, a length is not believed (the largest upload, 25 MB, holds some 9 hours at Opus's lowest rate). */
export const MAX_AUDIO_SECONDS = 24 * 60 * 60;

/**
 * The length in seconds, or undefined when it cannot be read from the file. Matroska/WebM and
 * Ogg are measured by their walkers alone, from the audio's own timestamps and packets (and,
 * for Matroska, the Segment Info's Duration when it is longer): music-metadata takes WebM's
 * length from that header only and an Ogg's from the page it stops on, so a file
 * under-reporting there must not pass the voice-sample limit or cap a transcription's bill
 * below the audio it carries; and crafted files of tiny elements or pages keep it busy for
 * seconds (some 2 µs a byte of EBML), where the walkers are linear and bounded. Other files
 * (MP3, WAV) are measured by music-metadata. Unreadable: a walker refused the file
 * (`UnreadableAudio`: past its work budget, too many tracks or streams, Opus packets it cannot
 * see), or the length is not finite or over `MAX_AUDIO_SECONDS`.
 */
export async function measureSeconds(bytes: Buffer, contentType: string | undefined): Promise<number | undefined> {
  let seconds: number | undefined;
  try {
    if (isMatroska(bytes)) seconds = matroskaSeconds(bytes);
    else if (isOgg(bytes)) seconds = oggSeconds(bytes);
    else seconds = await metadataSeconds(bytes, contentType);
  } catch (error) {
    if (error instanceof UnreadableAudio) return undefined;
    throw error;
  }
  if (seconds === undefined || !Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_AUDIO_SECONDS) return undefined;
  return seconds;
}

async function metadataSeconds(bytes: Buffer, contentType: string | undefined): Promise<number | undefined> {
  try {
    const { format } = await parseBuffer(bytes, contentType === undefined ? undefined : { mimeType: contentType, size: bytes.length }, { duration: true, skipCovers: true });
    return format.duration;
  } catch {
    return undefined;
  }
}
