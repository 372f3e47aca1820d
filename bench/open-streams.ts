/**
 * Many concurrent open streams: each on its own connection, held until the answer
 * ends. Counts errors and completions, the most streams open at once, and samples the
 * gateway's resident memory. At most PENDING_CAP connections (below Node's default listen backlog of 511) wait for their answer's
 * headers at a time: beyond what the server admits per second, more would only overflow
 * the kernel's listen backlog (connections reset), which is not what is measured here.
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';

const PENDING_CAP = 400;

export interface OpenStreamsResult {
  errors: number;
  /** The most streams open at once (answer headers received, end not yet). */
  peak_open: number;
  /** Error kinds: HTTP status or socket error code → count. */
  error_kinds: Record<string, number>;
  completed: number;
  peak_rss_mib: number | null;
  /** The process's resident memory before the streams opened. */
  rss_before_mib: number | null;
  seconds: number;
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

export async function openStreams(origin: string, path: string, count: number, headers: () => Record<string, string>, body: string, pid: number, measureRss: boolean): Promise<OpenStreamsResult> {
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const url = new URL(origin);
  const before = measureRss ? rssMiB(pid) : 0;
  let peak = before;
  const sampler = measureRss ? setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 100) : undefined;
  const started = Date.now();
  let errors = 0;
  let completed = 0;
  let pending = 0;
  let open = 0;
  let peakOpen = 0;
  let admitted: () => void = () => undefined;
  const kinds: Record<string, number> = {};
  const fail = (kind: string) => {
    errors++;
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  };
  const one = () =>
    new Promise<void>((resolve) => {
      pending++;
      let waiting = true;
      const answered = () => {
        if (!waiting) return;
        waiting = false;
        pending--;
        admitted();
      };
      const request = http.request({ host: url.hostname, port: url.port, path, method: 'POST', agent, headers: { ...headers(), 'content-type': 'application/json' } }, (response) => {
        answered();
        open++;
        peakOpen = Math.max(peakOpen, open);
        let tail = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (tail = (tail + chunk).slice(-64)));
        response.on('end', () => {
          open--;
          if (response.statusCode === 200 && tail.includes('[DONE]')) completed++;
          else fail(response.statusCode === 200 ? `200 without [DONE]: ${tail.slice(-40)}` : `HTTP ${response.statusCode}: ${tail.slice(-60)}`);
          resolve();
        });
        response.on('error', (error: NodeJS.ErrnoException) => {
          open--;
          fail(`response ${error.code ?? error.message}`);
          resolve();
        });
      });
      request.on('error', (error: NodeJS.ErrnoException) => {
        answered();
        fail(`request ${error.code ?? error.message}`);
        resolve();
      });
      request.end(body);
    });
  const all: Promise<void>[] = [];
  // Open in waves so the listen backlog is not what gets measured.
  for (let i = 0; i < count; i++) {
    all.push(one());
    if (i % 250 === 249) await new Promise((r) => setTimeout(r, 20));
    while (pending >= PENDING_CAP) await new Promise<void>((r) => (admitted = r));
  }
  await Promise.all(all);
  if (sampler !== undefined) clearInterval(sampler);
  agent.destroy();
  return { errors, error_kinds: kinds, completed, peak_open: peakOpen, peak_rss_mib: measureRss ? Math.round(peak) : null, rss_before_mib: measureRss ? Math.round(before) : null, seconds: Math.round((Date.now() - started) / 100) / 10 };
}
