/**
 * The PDF worker thread: takes a base64 payload in slices, decodes it and counts its pages
 * (pdf-parse.ts), one job at a time, off the request thread. Started by pdf-pages.ts.
 */
import { serveJobs } from '../../shared/worker-pool.ts';
import { readPdfPages, type PdfPages } from './pdf-parse.ts';

/** One slice of a job's base64 payload; the job runs when its last slice arrives. */
export interface PdfJob {
  base64: string;
  last: boolean;
}

// pdf-lib reports recoverable oddities of a file on console.warn; a client's file is not worth a log line.
console.warn = () => undefined;

let slices: string[] = [];
let current = -1;
serveJobs<PdfJob, PdfPages>((id, job) => {
  if (id !== current) slices = [];
  current = id;
  slices.push(job.base64);
  if (!job.last) return undefined;
  // Joined before decoding: slices of a payload with line breaks in it need not end on a 4-character group.
  const bytes = Buffer.from(slices.join(''), 'base64');
  slices = [];
  return readPdfPages(bytes);
});
