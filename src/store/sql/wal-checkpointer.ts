/**
 * WAL checkpoints off the request path: a worker thread with its own connection runs a
 * passive checkpoint every second, so the fsyncs a checkpoint makes never stall the
 * event loop that commits holds and settlements. If the worker fails, the main
 * connection checkpoints automatically again.
 *
 * Under steady load a passive checkpoint never catches up with the writer, so the log is
 * never restarted and grows without end (780 MB after a minute of the bench), every read
 * slower as it grows. The worker reports the log's length after each passive checkpoint;
 * past RESTART_AFTER_FRAMES the main connection (the only writer, so nothing waits on a
 * lock) runs a RESTART checkpoint: it copies the few frames the passive one left and the
 * next commit writes the log from its start again; `journal_size_limit` keeps the file
 * itself at that size.
 */
import { createRequire } from 'node:module';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';

const CHECKPOINT_EVERY_MS = 1000;
/** Frames (pages, 4 KiB by default) the log may hold before it is restarted: 16 MiB. */
const RESTART_AFTER_FRAMES = 4096;

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
const timer = setInterval(() => {
  try {
    const [passive] = db.pragma('wal_checkpoint(PASSIVE)');
    if (passive !== undefined) parentPort.postMessage(passive.log);
  } catch {}
}, workerData.everyMs);
parentPort.on('message', () => {
  clearInterval(timer);
  try { db.pragma('wal_checkpoint(TRUNCATE)'); } catch {}
  db.close();
  parentPort.close();
});
`;

/** Starts the checkpointer for a file database; returns the function that stops it. */
export function startWalCheckpointer(database: BetterSqlite3.Database, file: string): () => Promise<void> {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: { file, driver, everyMs: CHECKPOINT_EVERY_MS },
    // It holds nothing: a small heap keeps its memory small.
    resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 2, codeRangeSizeMb: 8 },
  });
  worker.unref();
  database.pragma('wal_autocheckpoint = 0');
  database.pragma(`journal_size_limit = ${RESTART_AFTER_FRAMES * 4096}`);
  worker.on('message', (frames: number) => {
    if (!stopping && database.open && frames > RESTART_AFTER_FRAMES) database.pragma('wal_checkpoint(RESTART)');
  });
  let stopping = false;
  let exited = false;
  const fallBack = () => {
    if (!stopping && database.open) database.pragma('wal_autocheckpoint = 1000');
  };
  worker.on('error', fallBack);
  worker.on('exit', () => {
    exited = true;
    fallBack();
  });
  return async () => {
    if (exited) return;
    stopping = true;
    // Keep the process alive until the worker has written its last checkpoint.
    worker.ref();
    const done = once(worker, 'exit');
    worker.postMessage('stop');
    await done;
  };
}
