/**
 * The embedded backend: one SQLite file in WAL mode. Commits are made
 * durable in groups off the main thread (wal-sync.ts), upload commits are
 * grouped too (sqlite-writer.ts), and in a long-running server checkpoints
 * run on a worker thread (wal-checkpointer.ts).
 */
import type BetterSqlite3 from 'better-sqlite3';
import SQLite from './sqlite-driver.js';
import { Kysely, SqliteDialect, type SqliteDatabase } from 'kysely';
import { LRUCache } from 'lru-cache';
import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { announceCacheEpochMoves, watchCacheEpoch } from './cache-epoch-watch.js';
import type { OpenDatabase, OpenOptions } from './open-database.js';
import { sqliteObjectWrites } from './object-writes/sqlite.js';
import type { Database } from './schema.js';
import { SqliteWriter } from './sqlite-writer.js';
import { WalCheckpointer } from './wal-checkpointer.js';
import { WalSync } from './wal-sync.js';

export interface OpenSqlite extends OpenDatabase {
  /** The group-commit writer, for tests of it. */
  writer: SqliteWriter;
}

export function openSqlite(file: string, options: OpenOptions = {}): OpenSqlite {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  // Created (or kept) readable by the server's user only; SQLite gives its -wal and -shm files the same mode.
  closeSync(openSync(file, 'a', 0o600));
  chmodSync(file, 0o600);
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  // NORMAL survives a process crash but does not fsync in the commit; durable() does, off the main thread.
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  const wal = new WalSync(sqlite, file);
  let checkpointer: WalCheckpointer | null = null;
  if (options.checkpointInBackground) {
    sqlite.pragma('wal_autocheckpoint = 0');
    checkpointer = new WalCheckpointer(file, () => {
      // Never let the log grow without bound: checkpoints go back to commits.
      if (sqlite.open) sqlite.pragma('wal_autocheckpoint = 1000');
    });
  }
  // A database created by this very process gets its table from migrations
  // later; a process that changes the epoch (the CLI) opens an existing one.
  const hasEpochs = sqlite.prepare("select 1 from sqlite_master where type = 'table' and name = 'cache_epochs'").get() !== undefined;
  if (hasEpochs) announceCacheEpochMoves(sqlite, file);
  const epochs = watchCacheEpoch(sqlite, file);
  const writer = new SqliteWriter(sqlite, wal, checkpointer);
  return {
    db,
    dialect: 'sqlite',
    writes: sqliteObjectWrites(db, sqlite, writer),
    writer,
    durable: () => wal.sync(),
    committedElsewhere: () => epochs.moved(),
    close: async () => {
      epochs.close();
      await checkpointer?.stop();
      await wal.close();
      await db.destroy();
    },
  };
}

/**
 * Kysely prepares every query anew, and preparing costs more than running a
 * simple indexed lookup, so prepared statements are kept by their SQL text.
 * Bounded, because `in (…)` lists of varying length make many distinct texts.
 */
function withStatementCache(sqlite: BetterSqlite3.Database): SqliteDatabase {
  const statements = new LRUCache<string, BetterSqlite3.Statement>({ max: 500 });
  return {
    close: () => sqlite.close(),
    prepare(text: string) {
      let statement = statements.get(text);
      if (!statement) {
        statement = sqlite.prepare(text);
        statements.set(text, statement);
      }
      return statement;
    },
  };
}
