/**
 * SQLite WAL checkpoints on a worker thread, off the event loop.
 *
 * A checkpoint copies the write-ahead log back into the database file and
 * fsyncs both. By default SQLite runs one inside whichever commit pushes the
 * log past 1000 pages, on the thread that commits: here, the event loop,
 * stalled for milliseconds every few hundred small uploads (measured: 10 % of
 * a small-upload workload's CPU went to COMMIT). The server's connection turns
 * that off, and a worker thread with its own connection runs a PASSIVE
 * checkpoint every CHECKPOINT_EVERY_MS, which never blocks the writer. If the
 * worker dies, the server's connection takes checkpoints back (onFailure).
 *
 * The log starts again from its beginning only after a checkpoint has copied
 * all of it; a commit made meanwhile appends instead. The group-commit writer
 * pauses for every flush, which gives checkpoints their turn, but under
 * writes that never pause the log file grows until they do (it is reused,
 * not shrunk, afterwards).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const CHECKPOINT_EVERY_MS = 200;

// CommonJS run by eval, so it works the same from compiled output and from the
// TypeScript sources under test; the driver's path comes from the main thread.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 1000');
const checkpoint = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or interrupted: the next tick tries again.
  }
};
const timer = setInterval(checkpoint, workerData.everyMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export class WalCheckpointer {
  private readonly worker: Worker;
  private stopping = false;

  constructor(databaseFile: string, onFailure: (error: unknown) => void) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file: databaseFile, everyMs: CHECKPOINT_EVERY_MS } });
    // It never keeps the process alive on its own.
    this.worker.unref();
    this.worker.on('error', (error) => onFailure(error));
    this.worker.on('exit', (code) => {
      if (!this.stopping) onFailure(new Error(`WAL checkpoint worker exited with code ${code}`));
    });
  }

  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    const exited = new Promise((resolve) => this.worker.once('exit', resolve));
    this.worker.postMessage('stop');
    await exited;
  }
}
