/**
 * PDF page counts off the request thread: a small pool of worker threads (pdf-worker.ts, run
 * by the shared WorkerPool) decodes and parses each PDF, so a large or hostile file never
 * stalls other requests. A parse that runs too long is stopped, and a worker that dies (out of
 * memory, say) is replaced; either way that PDF is refused as unreadable.
 */
import { WorkerPool, workerModule, type PostToWorker } from '../../shared/worker-pool.ts';
import { decodePrefix, type Base64DataUrl } from './data-url.ts';
import type { PdfPages } from './pdf-parse.ts';
import type { PdfJob } from './pdf-worker.ts';

export type { PdfPages } from './pdf-parse.ts';

/** A parse still running after this long is stopped and the PDF refused. */
export const PDF_PARSE_TIMEOUT_MS = 20_000;

/**
 * Each worker's heap. The stream cap (pdf-parse.ts) bounds what one stream inflates to; this
 * bounds the object model of a file with millions of tiny objects.
 */
const WORKER_LIMITS = { maxOldGenerationSizeMb: 384, maxYoungGenerationSizeMb: 32 };

const pool = new WorkerPool<PdfJob, PdfPages>({
  file: workerModule(import.meta.url, 'pdf-worker'),
  name: 'PDF',
  timeoutMs: PDF_PARSE_TIMEOUT_MS,
  resourceLimits: WORKER_LIMITS,
  timedOut: () => ({ ok: false, reason: 'unreadable', message: `parsing it takes longer than ${PDF_PARSE_TIMEOUT_MS / 1000} s` }),
  died: () => ({ ok: false, reason: 'unreadable', message: 'parsing it needs more memory than a PDF may use' }),
});

/**
 * Pages of a base64 PDF, or why it cannot be taken. Files that do not start like a PDF are
 * refused here, without a worker. Rejects only when no worker can be started at all.
 */
export function countPdfPages(data: Base64DataUrl): Promise<PdfPages> {
  // The PDF header must be within the first 1,024 bytes (ISO 32000-1, 7.5.2 and its implementation notes).
  if (!decodePrefix(data, 1024).toString('latin1').includes('%PDF-')) {
    return Promise.resolve({ ok: false, reason: 'unreadable', message: 'it does not start with a PDF header' });
  }
  return pool.run((post) => sendSlices(data, post));
}

/** Base64 characters per message: copying one into the worker takes a few milliseconds. */
const SLICE_CHARS = 2 * 1024 * 1024;

/** The payload in slices, with a turn of the event loop between them: a 20 MiB part never holds the request thread for long. */
async function sendSlices(data: Base64DataUrl, post: PostToWorker<PdfJob>): Promise<void> {
  const { url, start } = data;
  for (let at = start; at < url.length; at += SLICE_CHARS) {
    const last = at + SLICE_CHARS >= url.length;
    if (!post({ base64: url.slice(at, at + SLICE_CHARS), last })) return; // stopped or failed meanwhile
    if (!last) await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
