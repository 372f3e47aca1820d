/**
 * The PDF worker thread: takes a base64 payload in slices, decodes it and counts its pages
 * (pdf-parse.ts), one job at a time, off the request thread. Started by pdf-pages.ts.
 */
import { parentPort } from 'node:worker_threads';
import { readPdfPages } from './pdf-parse.ts';

/** One slice of a job's base64 payload; the job runs when its last slice arrives. */
export interface PdfJob {
  id: number;
  base64: string;
  last: boolean;
}

// pdf-lib reports recoverable oddities of a file on console.warn; a client's file is not worth a log line.
console.warn = () => undefined;

const port = parentPort;
if (port !== null) {
  let slices: string[] = [];
  let current = -1;
  port.on('message', (job: PdfJob) => {
    if (job.id !== current) slices = [];
    current = job.id;
    slices.push(job.base64);
    if (!job.last) return;
    // Joined before decoding: slices of a payload with line breaks in it need not end on a 4-character group.
    const bytes = Buffer.from(slices.join(''), 'base64');
    slices = [];
    void readPdfPages(bytes).then((result) => port.postMessage({ id: job.id, result }));
  });
  port.postMessage({ ready: true });
}
