/**
 * A small pool of worker threads that run untrusted parsing (PDF page counts, audio lengths)
 * off the request thread, so a large or hostile file never stalls other requests. A job that
 * runs too long is stopped (its worker terminated), and a worker that dies (out of memory, say)
 * is replaced; either way the job gets the pool's `timedOut` or `died` answer (given what the job
 * reported on the way, if anything: the format of a file whose length was still being measured). Workers start on
 * first use and keep the process alive only while they have a job.
 *
 * The worker module runs from its TypeScript source (under tsx: tests, the demo) or from the
 * compiled build (dist/); `workerModule` names the right file. Inside the worker, `serveJobs`
 * answers the pool's messages.
 */
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { parentPort, Worker, type ResourceLimits, type Transferable } from 'node:worker_threads';

/** One worker per spare core, at most two: the request thread keeps a core. */
export const DEFAULT_POOL_SIZE = Math.max(1, Math.min(2, availableParallelism() - 1));

/** Runs the worker module from its TypeScript source (tsx) or from the compiled build. */
const BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
(async () => {
  if (workerData.tsx !== undefined) (await import(workerData.tsx)).register();
  await import(workerData.file);
})().catch((error) => { setImmediate(() => { throw error; }); });
`;

/** Running from source: the worker registers tsx's ESM loader first (its ESM entry, beside the CommonJS one). */
let tsxApi: string | undefined;
function tsxApiUrl(): string {
  tsxApi ??= pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  return tsxApi;
}

/**
 * The URL of a worker module beside the module at `from` (its `import.meta.url`): `name.ts`
 * when running from source, `name.js` in the compiled build.
 */
export function workerModule(from: string, name: string): string {
  return new URL(`./${name}${from.endsWith('.ts') ? '.ts' : '.js'}`, from).href;
}

/** What a job posts to its worker: each call sends one message (with buffers to transfer); false once the job was stopped. */
export type PostToWorker<Message> = (message: Message, transfer?: readonly Transferable[]) => boolean;

export interface WorkerPoolOptions<Result> {
  /** The worker module's URL (`workerModule`); it calls `serveJobs`. */
  file: string;
  /** Names the pool in errors ("the PDF worker did not start"). */
  name: string;
  size?: number;
  /** A job still running after this long is stopped and answered `timedOut(reported)`. */
  timeoutMs: number;
  resourceLimits: ResourceLimits;
  /** `reported`: what the job last reported before its result (serveJobs's `report`), if anything. */
  timedOut(reported: Result | undefined): Result;
  /** The answer for a job whose worker died under it (out of memory, an uncaught error). */
  died(reported: Result | undefined): Result;
}

/** A message between the pool and a worker: a job's part, the worker's readiness, or a job's report or result. */
interface JobPart<Message> {
  id: number;
  part: Message;
}
type FromWorker<Result> = { ready: true } | { id: number; result: Result } | { id: number; reported: Result };

interface Job<Message, Result> {
  id: number;
  send(post: PostToWorker<Message>): Promise<void> | void;
  resolve(result: Result): void;
  reject(error: Error): void;
}

interface Slot<Message, Result> {
  worker: Worker | undefined;
  ready: boolean;
  job: Job<Message, Result> | undefined;
  reported: Result | undefined;
  timer: NodeJS.Timeout | undefined;
}

export class WorkerPool<Message, Result> {
  private readonly slots: Slot<Message, Result>[] = [];
  private readonly queue: Job<Message, Result>[] = [];
  private nextId = 1;

  constructor(private readonly options: WorkerPoolOptions<Result>) {}

  /**
   * Runs one job: `send` posts its parts to the worker (one message, or slices with turns of
   * the event loop between them), whose `serveJobs` handler answers with the result. Rejects
   * only when no worker can be started at all.
   */
  run(send: (post: PostToWorker<Message>) => Promise<void> | void): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, send, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.slots.length < (this.options.size ?? DEFAULT_POOL_SIZE)) this.slots.push({ worker: undefined, ready: false, job: undefined, reported: undefined, timer: undefined });
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (slot.job !== undefined) continue;
      const job = this.queue.shift() as Job<Message, Result>;
      slot.job = job;
      if (slot.worker === undefined) this.start(slot);
      else if (slot.ready) this.send(slot, job);
    }
  }

  private start(slot: Slot<Message, Result>): void {
    const file = this.options.file;
    const worker = new Worker(BOOTSTRAP, {
      eval: true,
      workerData: { file, tsx: file.endsWith('.ts') ? tsxApiUrl() : undefined },
      resourceLimits: this.options.resourceLimits,
      stdout: false,
      stderr: false,
    });
    slot.worker = worker;
    slot.ready = false;
    worker.on('message', (message: FromWorker<Result>) => {
      if ('ready' in message) {
        slot.ready = true;
        if (slot.job !== undefined) this.send(slot, slot.job);
        return;
      }
      const job = slot.job;
      if (job === undefined || message.id !== job.id) return;
      if ('reported' in message) {
        slot.reported = message.reported;
        return;
      }
      this.finish(slot);
      job.resolve(message.result);
      this.pump();
    });
    const failed = (error: Error | undefined) => {
      if (slot.worker !== worker) return;
      const job = slot.job;
      const wasReady = slot.ready;
      const reported = slot.reported;
      this.finish(slot);
      slot.worker = undefined;
      slot.ready = false;
      if (job !== undefined) {
        // A worker that never became ready cannot run any job: that is our failure, not the file's.
        if (!wasReady) job.reject(new Error(`the ${this.options.name} worker did not start: ${error?.message ?? 'it exited'}`));
        else job.resolve(this.options.died(reported));
      }
      this.pump();
    };
    worker.on('error', failed);
    worker.on('exit', () => failed(undefined));
    // A worker keeps the process alive only while it has a job: finish() unrefs it, send() refs it again.
  }

  private send(slot: Slot<Message, Result>, job: Job<Message, Result>): void {
    const worker = slot.worker as Worker;
    worker.ref();
    slot.timer = setTimeout(() => {
      if (slot.job !== job) return;
      const reported = slot.reported;
      this.finish(slot);
      slot.worker = undefined;
      slot.ready = false;
      void worker.terminate();
      job.resolve(this.options.timedOut(reported));
      this.pump();
    }, this.options.timeoutMs);
    slot.timer.unref();
    const post: PostToWorker<Message> = (part, transfer) => {
      if (slot.job !== job) return false; // stopped or failed meanwhile
      const message: JobPart<Message> = { id: job.id, part };
      worker.postMessage(message, transfer);
      return true;
    };
    void Promise.resolve()
      .then(() => job.send(post))
      .catch((error: unknown) => {
        if (slot.job !== job) return;
        // The parts could not be posted (a value that cannot be cloned): the worker may hold half a job, so it is replaced.
        this.finish(slot);
        slot.worker = undefined;
        slot.ready = false;
        void worker.terminate();
        job.reject(error instanceof Error ? error : new Error(String(error)));
        this.pump();
      });
  }

  private finish(slot: Slot<Message, Result>): void {
    slot.worker?.unref();
    if (slot.timer !== undefined) clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.job = undefined;
    slot.reported = undefined;
  }
}

/**
 * Inside a worker: answers the pool's jobs, one at a time. `handle` gets each part of a job
 * and answers its result, or undefined while it waits for more parts; on the way it may
 * `report` an answer for the pool to give should the job be stopped (WorkerPoolOptions.timedOut, died).
 */
export function serveJobs<Message, Result>(handle: (id: number, part: Message, report: (reported: Result) => void) => Promise<Result | undefined> | Result | undefined): void {
  const port = parentPort;
  if (port === null) return;
  port.on('message', (message: JobPart<Message>) => {
    const report = (reported: Result) => port.postMessage({ id: message.id, reported } satisfies FromWorker<Result>);
    void Promise.resolve(handle(message.id, message.part, report)).then((result) => {
      if (result !== undefined) port.postMessage({ id: message.id, result } satisfies FromWorker<Result>);
    });
  });
  port.postMessage({ ready: true } satisfies FromWorker<Result>);
}
