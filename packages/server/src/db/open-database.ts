/**
 * What opening a database gives (database.ts opens it, sqlite.ts and
 * postgres.ts make it). Apart from the opener, so that the dialects and
 * every module they import never import the opener back.
 */
import type { Dialect } from './migrations.js';
import type { ObjectWrites } from './object-writes/object-writes.js';
import type { Db } from './schema.js';

export interface OpenDatabase {
  db: Db;
  dialect: Dialect;
  /** The per-dialect writes of objects (object-writes/). */
  writes: ObjectWrites;
  /** Resolves once every commit made so far is on disk. */
  durable: () => Promise<void>;
  /**
   * SQLite only: true when a change that cached lookups depend on was
   * committed since the last call, by this process or another (the `pail`
   * CLI). Null on PostgreSQL.
   */
  committedElsewhere: (() => boolean) | null;
  close: () => Promise<void>;
}

export interface OpenOptions {
  /** A long-running server: SQLite's WAL checkpoints run on a worker thread; short-lived commands leave them to SQLite. */
  checkpointInBackground?: boolean;
}
