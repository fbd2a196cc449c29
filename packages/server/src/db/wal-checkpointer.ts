/**
 * SQLite WAL checkpoints on a worker thread, off the event loop.
 *
 * A checkpoint copies the write-ahead log back into the database file and
 * fsyncs both. By default SQLite runs one inside whichever commit pushes the
 * log past 1000 pages, on the thread that commits: here, the event loop,
 * stalled for milliseconds every few hundred small uploads. The server's
 * connection turns that off, and a worker thread with its own connection runs
 * a PASSIVE checkpoint every CHECKPOINT_EVERY_MS, which never blocks the
 * writer. If the worker dies, the server's connection takes checkpoints back
 * (onFailure).
 *
 * The log restarts only when a commit finds that a checkpoint has copied all
 * of it, which under steady uploads never happens (commits keep appending
 * while it copies): the log would grow without end, and a flush of a growing
 * file has its new blocks and size to write as well. So the worker reports the
 * log's length after each checkpoint, and once it passes MAX_LOG_FRAMES the
 * group-commit writer waits (asynchronously) for catchUp(): a checkpoint that
 * copies everything, after which its next commit restarts the log. See
 * docs/performance.md.
 */
import { Worker } from 'node:worker_threads';
import { sqliteDriverPath } from './sqlite-driver.js';

const CHECKPOINT_EVERY_MS = 200;
/** As SQLite's own automatic checkpoints: 1000 pages, about 4 MB of log. */
const MAX_LOG_FRAMES = 1000;
/** A checkpoint cannot copy frames a reader still needs; after this many tries, writing goes on. */
const MAX_CATCH_UP_TRIES = 20;

// CommonJS run by eval, so it works the same from compiled output and from the
// TypeScript sources under test; the driver's path comes from the main thread.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 1000');
const checkpoint = () => {
  try {
    // [{ busy, log, checkpointed }]: frames in the log, and how many of them are copied.
    parentPort.postMessage(db.pragma('wal_checkpoint(PASSIVE)')[0]);
  } catch {
    // Busy or interrupted: the next tick tries again.
    parentPort.postMessage(null);
  }
};
const timer = setInterval(checkpoint, workerData.everyMs);
parentPort.on('message', (message) => {
  if (message === 'checkpoint') return checkpoint();
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

export class WalCheckpointer {
  private readonly worker: Worker;
  private stopping = false;
  private failed = false;
  /** Frames in the log at the last checkpoint. */
  private logFrames = 0;
  private catchingUp: { done: Promise<void>; resolve: () => void; tries: number } | null = null;

  constructor(databaseFile: string, onFailure: (error: unknown) => void) {
    const driver = sqliteDriverPath;
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file: databaseFile, everyMs: CHECKPOINT_EVERY_MS } });
    // It never keeps the process alive on its own.
    this.worker.unref();
    this.worker.on('message', (result: CheckpointResult | null) => this.reported(result));
    this.worker.on('error', (error) => {
      this.fail();
      onFailure(error);
    });
    this.worker.on('exit', (code) => {
      this.fail();
      if (!this.stopping) onFailure(new Error(`WAL checkpoint worker exited with code ${code}`));
    });
  }

  /** The log is long enough that the writer should let a checkpoint catch up before its next commit. */
  get logTooLong(): boolean {
    return !this.failed && this.logFrames > MAX_LOG_FRAMES;
  }

  /** Resolves once a checkpoint has copied the whole log (or has tried MAX_CATCH_UP_TRIES times). */
  catchUp(): Promise<void> {
    if (this.failed) return Promise.resolve();
    if (!this.catchingUp) {
      let resolve!: () => void;
      const done = new Promise<void>((r) => (resolve = r));
      this.catchingUp = { done, resolve, tries: 0 };
      this.worker.postMessage('checkpoint');
    }
    return this.catchingUp.done;
  }

  private reported(result: CheckpointResult | null): void {
    if (result) this.logFrames = result.log;
    const waiting = this.catchingUp;
    if (!waiting) return;
    const whole = result !== null && result.busy === 0 && result.checkpointed === result.log;
    if (whole || ++waiting.tries >= MAX_CATCH_UP_TRIES) {
      // All copied: the writer's next commit starts the log again.
      if (whole) this.logFrames = 0;
      this.catchingUp = null;
      waiting.resolve();
    } else {
      this.worker.postMessage('checkpoint');
    }
  }

  /** Without the worker, commits checkpoint again (database.ts): nobody waits for it. */
  private fail(): void {
    this.failed = true;
    const waiting = this.catchingUp;
    this.catchingUp = null;
    waiting?.resolve();
  }

  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.fail();
    const exited = new Promise((resolve) => this.worker.once('exit', resolve));
    this.worker.postMessage('stop');
    await exited;
  }
}
