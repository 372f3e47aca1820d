/**
 * The PDF worker thread: decodes a base64 payload and counts its pages (pdf-parse.ts), one
 * job at a time, off the request thread. Started by pdf-pages.ts.
 */
import { parentPort } from 'node:worker_threads';
import { readPdfPages } from './pdf-parse.ts';

export interface PdfJob {
  id: number;
  /** The data URL; the base64 payload starts at `start` (sent whole: no copy is sliced on the request thread). */
  url: string;
  start: number;
}

// pdf-lib reports recoverable oddities of a file on console.warn; a client's file is not worth a log line.
console.warn = () => undefined;

const port = parentPort;
if (port !== null) {
  port.on('message', (job: PdfJob) => {
    const bytes = Buffer.from(job.url.slice(job.start), 'base64');
    void readPdfPages(bytes).then((result) => port.postMessage({ id: job.id, result }));
  });
  port.postMessage({ ready: true });
}
