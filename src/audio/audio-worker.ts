/**
 * The audio worker thread: sniffs an audio file's format (audio-sniff.ts) and measures its
 * length (audio-length.ts), one job at a time, off the request thread. Started by audio-file.ts
 * through the shared WorkerPool.
 */
import { serveJobs } from '../shared/worker-pool.ts';
import { measureSeconds } from './audio-length.ts';
import { measures, sniffAudio, type MeasureWhen, type SniffedAudio } from './audio-sniff.ts';

/**
 * One job: the file's bytes (transferred, not copied) and either the type to measure them as,
 * or `sniff`: sniff them, then measure (as the sniffed type) the files `when` says.
 */
export interface AudioJob {
  bytes: ArrayBuffer;
  task: { contentType: string | undefined } | { sniff: MeasureWhen };
}

/**
 * The sniffed format (for a `sniff` job) and the length (undefined: unreadable, or not
 * measured), or the message of an error the sniff or measurement threw (a bug of ours, not the
 * file's). A `sniff` job reports the format before measuring, so a measurement stopped at the
 * time limit still answers it.
 */
export type AudioAnswer = { sniffed?: SniffedAudio; seconds: number | undefined } | { error: string };

serveJobs<AudioJob, AudioAnswer>(async (_id, job, report) => {
  try {
    const bytes = Buffer.from(job.bytes);
    if ('contentType' in job.task) return { seconds: await measureSeconds(bytes, job.task.contentType) };
    const sniffed = await sniffAudio(bytes);
    if (!measures(sniffed, job.task.sniff)) return { sniffed, seconds: undefined };
    report({ sniffed, seconds: undefined });
    // The sniffed type, whichever the caller reads (contentType or detected): both pick the same music-metadata parser, and the Matroska and Ogg walkers take no type.
    return { sniffed, seconds: await measureSeconds(bytes, sniffed.contentType) };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
});
