/**
 * Opens the metadata database chosen by configuration and brings its schema up
 * to date. PostgreSQL migrations run under Kysely's advisory lock, so instances
 * starting together never race.
 */
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type SqliteDatabase } from 'kysely';
import { LRUCache } from 'lru-cache';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { DatabaseConfig } from '../config.js';
import { announceCacheEpochMoves, watchCacheEpoch } from './cache-epoch-watch.js';
import { migrationProvider, type Dialect } from './migrations.js';
import type { Database } from './schema.js';
import { SqliteWriter } from './sqlite-writer.js';
import { WalCheckpointer } from './wal-checkpointer.js';
import { WalSync } from './wal-sync.js';

export type Db = Kysely<Database>;

export interface OpenDatabase {
  db: Db;
  dialect: Dialect;
  /**
   * Resolves once every commit made so far is on disk. PostgreSQL commits are
   * durable when they return; SQLite's are flushed in groups (wal-sync.ts).
   */
  durable: () => Promise<void>;
  /** SQLite only: group commit for the hottest writes (sqlite-writer.ts). */
  writer: SqliteWriter | null;
  /**
   * SQLite only: true when a change that cached lookups depend on was
   * committed since the last call, by this process or another (the `pail`
   * CLI): the `cache_epochs` row moved. Null on PostgreSQL.
   */
  committedElsewhere: (() => boolean) | null;
  /** Closes the database (and the WAL flusher). */
  close: () => Promise<void>;
}

export interface OpenOptions {
  /**
   * A long-running server: SQLite's WAL checkpoints run on a worker thread
   * (wal-checkpointer.ts). Short-lived commands leave them to SQLite.
   */
  checkpointInBackground?: boolean;
}

export function openDatabase(config: DatabaseConfig, options: OpenOptions = {}): OpenDatabase {
  if (config.kind === 'sqlite') {
    mkdirSync(path.dirname(config.file), { recursive: true });
    const sqlite = new SQLite(config.file);
    sqlite.pragma('journal_mode = WAL');
    // NORMAL survives a process crash but does not fsync in the commit;
    // durable() does, off the main thread and in groups (wal-sync.ts).
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
    const wal = new WalSync(sqlite, config.file);
    let checkpointer: WalCheckpointer | null = null;
    if (options.checkpointInBackground) {
      sqlite.pragma('wal_autocheckpoint = 0');
      checkpointer = new WalCheckpointer(config.file, () => {
        // Never let the log grow without bound: checkpoints go back to commits.
        if (sqlite.open) sqlite.pragma('wal_autocheckpoint = 1000');
      });
    }
    // A database created by this very process gets its table from migrations
    // later; a process that changes the epoch (the CLI) opens an existing one.
    const hasEpochs = sqlite.prepare("select 1 from sqlite_master where type = 'table' and name = 'cache_epochs'").get() !== undefined;
    if (hasEpochs) announceCacheEpochMoves(sqlite, config.file);
    const epochs = watchCacheEpoch(sqlite, config.file);
    return {
      db,
      dialect: 'sqlite',
      durable: () => wal.sync(),
      writer: new SqliteWriter(sqlite, wal, checkpointer),
      committedElsewhere: () => epochs.moved(),
      close: async () => {
        epochs.close();
        await checkpointer?.stop();
        await wal.close();
        await db.destroy();
      },
    };
  }
  const pool = new pg.Pool({
    connectionString: config.url,
    max: 20,
    // An unreachable server fails a request after this long instead of hanging it.
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
    // int8 (bigint) as a JS number: byte counts stay far below 2^53.
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        oid === 20 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // An idle connection that dies (PostgreSQL restarted, failed over, or ended
  // the session) is reported here; unheard, the 'error' event would crash the
  // process. The pool drops that connection and the next query opens a new one.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: 'postgres', durable: async () => {}, writer: null, committedElsewhere: null, close: () => db.destroy() };
}

/**
 * Kysely prepares every query anew; preparing costs more than running a
 * simple indexed lookup. Keeping prepared statements by their SQL text makes
 * the hot paths (key lookup, object lookup) one step instead of two. Bounded,
 * because `in (…)` lists of varying length make many distinct texts.
 */
function withStatementCache(sqlite: SQLite.Database): SqliteDatabase {
  const statements = new LRUCache<string, SQLite.Statement>({ max: 500 });
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

export async function migrateToLatest(db: Kysely<any>, dialect: Dialect): Promise<string[]> {
  // Kysely looks for its migration tables in every schema unless told which one,
  // so a second Pail (or any Kysely app) in another schema of the same database
  // would make it skip creating them here. Pin them to the schema we write to.
  const migrationTableSchema =
    dialect === 'postgres'
      ? (await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db)).rows[0]?.schema ?? undefined
      : undefined;
  const migrator = new Migrator({ db, provider: migrationProvider(dialect), migrationTableSchema });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
