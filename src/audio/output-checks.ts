/**
 * The audio routes' output checks, one row per job kind: what is collected from the host's
 * output before the run is billed (the audio bytes speech answers with; the transcript). Each
 * reads only the outputs, so the process that resumes a job after a crash runs the same check
 * (wired into the media job runner by the gateway): a broken output is refunded, never billed.
 */
import { request as undiciRequest } from 'undici';
import type { OutputChecks } from '../media/job-runner.ts';
import { GatewayError } from '../shared/errors.ts';
import { readTranscript } from './transcript.ts';

/** Largest audio answer taken from a host. */
const MAX_AUDIO_BYTES = 64 * 1024 * 1024;
const DOWNLOAD_TIMEOUT_MS = 60_000;

/** The audio file the host delivered: a data URL, or its delivery URL fetched (bounded in size and time). */
async function download(urls: readonly unknown[], signal: AbortSignal): Promise<Buffer> {
  const url = String(urls[0]);
  const data = /^data:[^,]*;base64,(.*)$/s.exec(url);
  if (data !== null) return Buffer.from(data[1] as string, 'base64');
  const failed = (why: string) => new GatewayError('upstream_error', `The speech host's audio could not be fetched (${why}). Nothing was charged.`);
  let response;
  try {
    response = await undiciRequest(url, { signal, headersTimeout: DOWNLOAD_TIMEOUT_MS, bodyTimeout: DOWNLOAD_TIMEOUT_MS });
  } catch {
    throw failed('connection failed');
  }
  if (response.statusCode !== 200) {
    await response.body.dump();
    throw failed(`status ${response.statusCode}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += (chunk as Buffer).length;
    if (size > MAX_AUDIO_BYTES) {
      response.body.destroy();
      throw failed('larger than 64 MB');
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** speech: the audio bytes (a Buffer); transcription: the Transcript. A throw refunds the run. */
export const AUDIO_OUTPUT_CHECKS = {
  speech: download,
  transcription: async (outputs) => readTranscript(outputs),
} as const satisfies OutputChecks;
