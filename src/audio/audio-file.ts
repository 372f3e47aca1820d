/**
 * What an audio file is, read from its bytes: the format (audio-sniff.ts) and the length
 * (audio-length.ts), both in a worker thread with a time limit, so the request thread does no
 * parsing of the file. A declared type is only believed when the bytes agree with it.
 */
import { WorkerPool, workerModule } from '../shared/worker-pool.ts';
import { UNKNOWN_AUDIO, type MeasureWhen, type SniffedAudio } from './audio-sniff.ts';
import type { AudioAnswer, AudioJob } from './audio-worker.ts';

export { declaredDisagrees, isAudioOrVideo, type MeasureWhen, type SniffedAudio, type VoiceFormat } from './audio-sniff.ts';
export { MAX_AUDIO_SECONDS } from './audio-length.ts';

/**
 * A measurement still running after this long is stopped (its worker terminated and replaced)
 * and the file is unreadable. Honest files of the largest size (25 MB) take well under a second;
 * crafted MP3 and WAV files keep music-metadata busy for up to 80 s.
 */
export const AUDIO_MEASURE_TIMEOUT_MS = 5_000;

/** Each worker's heap: music-metadata's frame scan keeps little; the file itself is outside it. */
const WORKER_LIMITS = { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 32 };

/** A stopped job answers what it had reported (the format, when its length was being measured): the length is unreadable. */
const stopped = (reported: AudioAnswer | undefined): AudioAnswer => (reported !== undefined && 'sniffed' in reported ? { sniffed: reported.sniffed, seconds: undefined } : { seconds: undefined });

const pool = new WorkerPool<AudioJob, AudioAnswer>({
  file: workerModule(import.meta.url, 'audio-worker'),
  name: 'audio',
  timeoutMs: AUDIO_MEASURE_TIMEOUT_MS,
  resourceLimits: WORKER_LIMITS,
  timedOut: stopped,
  died: stopped,
});

/** Runs one job on the bytes: a copy of just them, transferred (the Buffer may be a view of a larger pool, which cloning would copy whole). */
async function run(bytes: Buffer, task: AudioJob['task']): Promise<{ sniffed?: SniffedAudio; seconds: number | undefined }> {
  const answer = await pool.run((post) => {
    const copy = new Uint8Array(bytes).buffer;
    post({ bytes: copy, task }, [copy]);
  });
  if ('error' in answer) throw new Error(`reading the audio failed: ${answer.error}`);
  return answer;
}

/**
 * The length in seconds, or undefined when it cannot be read from the file (docs/decisions.md
 * "Audio length from the audio itself"; `measureSeconds` in audio-length.ts says how), measured
 * in a worker thread: a file whose measurement takes longer than `AUDIO_MEASURE_TIMEOUT_MS`, or
 * that kills its worker, is unreadable. Rejects when no worker can be started, or on a
 * measurement's own error (not the file's: as before, that is the request's failure).
 */
export async function audioSeconds(bytes: Buffer, contentType: string | undefined): Promise<number | undefined> {
  return (await run(bytes, { contentType })).seconds;
}

/**
 * The file's format and, when `when` says so (`measures` in audio-sniff.ts), its length as the
 * sniffed type, as `audioSeconds` measures it — in one worker job. A file not measured has
 * seconds undefined. A job stopped before the format was known (its worker died, say) is of no
 * known type. Rejects as `audioSeconds` does.
 */
export async function inspectAudio(bytes: Buffer, when: MeasureWhen): Promise<{ sniffed: SniffedAudio; seconds: number | undefined }> {
  const { sniffed, seconds } = await run(bytes, { sniff: when });
  return { sniffed: sniffed ?? UNKNOWN_AUDIO, seconds };
}
