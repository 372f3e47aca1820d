/**
 * PDF page counts off the request thread: a small pool of worker threads (pdf-worker.ts)
 * decodes and parses each PDF, so a large or hostile file never stalls other requests.
 * A parse that runs too long is stopped, and a worker that dies (out of memory, say) is
 * replaced; either way that PDF is refused as unreadable. Workers start on first use and
 * keep the process alive only while they have a job.
 */
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { decodePrefix, type Base64DataUrl } from './data-url.ts';
import type { PdfPages } from './pdf-parse.ts';
import type { PdfJob } from './pdf-worker.ts';

export type { PdfPages } from './pdf-parse.ts';

/** A parse still running after this long is stopped and the PDF refused. */
export const PDF_PARSE_TIMEOUT_MS = 20_000;

/** One worker per spare core, at most two: the request thread keeps a core. */
const POOL_SIZE = Math.max(1, Math.min(2, availableParallelism() - 1));

/**
 * Each worker's heap. The stream cap (pdf-parse.ts) bounds what one stream inflates to; this
 * bounds the object model of a file with millions of tiny objects.
 */
const WORKER_LIMITS = { maxOldGenerationSizeMb: 384, maxYoungGenerationSizeMb: 32 };

/** Runs the worker module from its TypeScript source (tsx) or from the compiled build. */
const BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
(async () => {
  if (workerData.tsx !== undefined) (await import(workerData.tsx)).register();
  await import(workerData.file);
})().catch((error) => { setImmediate(() => { throw error; }); });
`;

const SOURCE = import.meta.url.endsWith('.ts');
const WORKER_FILE = new URL(SOURCE ? './pdf-worker.ts' : './pdf-worker.js', import.meta.url).href;
/** Running from source (tests, the demo): the worker registers tsx's ESM loader first (its ESM entry, beside the CommonJS one). */
const TSX_API = SOURCE ? pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href : undefined;

interface Job {
  id: number;
  data: Base64DataUrl;
  resolve(result: PdfPages): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker | undefined;
  ready: boolean;
  job: Job | undefined;
  timer: NodeJS.Timeout | undefined;
}

const slots: Slot[] = [];
const queue: Job[] = [];
let nextId = 1;

/**
 * Pages of a base64 PDF, or why it cannot be taken. Files that do not start like a PDF are
 * refused here, without a worker. Rejects only when no worker can be started at all.
 */
export function countPdfPages(data: Base64DataUrl): Promise<PdfPages> {
  // The PDF header must be within the first 1,024 bytes (ISO 32000-1, 7.5.2 and its implementation notes).
  if (!decodePrefix(data, 1024).toString('latin1').includes('%PDF-')) {
    return Promise.resolve({ ok: false, reason: 'unreadable', message: 'it does not start with a PDF header' });
  }
  return new Promise((resolve, reject) => {
    queue.push({ id: nextId++, data, resolve, reject });
    pump();
  });
}

function pump(): void {
  while (slots.length < POOL_SIZE) slots.push({ worker: undefined, ready: false, job: undefined, timer: undefined });
  for (const slot of slots) {
    if (queue.length === 0) return;
    if (slot.job !== undefined) continue;
    const job = queue.shift() as Job;
    slot.job = job;
    if (slot.worker === undefined) start(slot);
    else if (slot.ready) send(slot, job);
  }
}

function start(slot: Slot): void {
  const worker = new Worker(BOOTSTRAP, {
    eval: true,
    workerData: { file: WORKER_FILE, tsx: TSX_API },
    resourceLimits: WORKER_LIMITS,
    stdout: false,
    stderr: false,
  });
  slot.worker = worker;
  slot.ready = false;
  worker.on('message', (message: { ready?: true; id?: number; result?: PdfPages }) => {
    if (message.ready === true) {
      slot.ready = true;
      if (slot.job !== undefined) send(slot, slot.job);
      return;
    }
    const job = slot.job;
    if (job === undefined || message.id !== job.id || message.result === undefined) return;
    finish(slot);
    job.resolve(message.result);
    pump();
  });
  const failed = (error: Error | undefined) => {
    if (slot.worker !== worker) return;
    const job = slot.job;
    const wasReady = slot.ready;
    finish(slot);
    slot.worker = undefined;
    slot.ready = false;
    if (job !== undefined) {
      // A worker that never became ready cannot run any PDF: that is our failure, not the file's.
      if (!wasReady) job.reject(new Error(`the PDF worker did not start: ${error?.message ?? 'it exited'}`));
      else job.resolve({ ok: false, reason: 'unreadable', message: 'parsing it needs more memory than a PDF may use' });
    }
    pump();
  };
  worker.on('error', failed);
  worker.on('exit', () => failed(undefined));
  // A worker keeps the process alive only while it has a job: finish() unrefs it, send() refs it again.
}

function send(slot: Slot, job: Job): void {
  const worker = slot.worker as Worker;
  worker.ref();
  slot.timer = setTimeout(() => {
    if (slot.job !== job) return;
    finish(slot);
    slot.worker = undefined;
    slot.ready = false;
    void worker.terminate();
    job.resolve({ ok: false, reason: 'unreadable', message: `parsing it takes longer than ${PDF_PARSE_TIMEOUT_MS / 1000} s` });
    pump();
  }, PDF_PARSE_TIMEOUT_MS);
  slot.timer.unref();
  void sendSlices(slot, job, worker);
}

/** Base64 characters per message: copying one into the worker takes a few milliseconds. */
const SLICE_CHARS = 2 * 1024 * 1024;

/** The payload in slices, with a turn of the event loop between them: a 20 MiB part never holds the request thread for long. */
async function sendSlices(slot: Slot, job: Job, worker: Worker): Promise<void> {
  const { url, start } = job.data;
  for (let at = start; at < url.length; at += SLICE_CHARS) {
    if (slot.job !== job) return; // stopped or failed meanwhile
    const last = at + SLICE_CHARS >= url.length;
    const message: PdfJob = { id: job.id, base64: url.slice(at, at + SLICE_CHARS), last };
    worker.postMessage(message);
    if (!last) await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

function finish(slot: Slot): void {
  slot.worker?.unref();
  if (slot.timer !== undefined) clearTimeout(slot.timer);
  slot.timer = undefined;
  slot.job = undefined;
}
