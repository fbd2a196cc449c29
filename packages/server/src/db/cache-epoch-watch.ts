/**
 * Has another process (the `pail` CLI) committed a change that cached
 * lookups depend on since we last looked? Such changes move the
 * `cache_epochs` row (repositories/cache-epochs.ts). Reading that row on
 * every request would cost a read transaction, so every connection that
 * moves it also touches a sentinel file beside the database (through a
 * temporary trigger), and the server reads the row only for a second after
 * inotify reports a touch: the touch happens before the moving transaction
 * commits, hence a window rather than one read. Where the sentinel cannot be
 * watched, every request reads the row. The sentinel is watched rather than
 * the database's directory, which every commit of the server's own would
 * wake, and `PRAGMA data_version` moves for the checkpoint worker's commits
 * too (docs/performance.md).
 */
import type SQLite from 'better-sqlite3';
import { closeSync, openSync, watch, writeFileSync, type FSWatcher } from 'node:fs';

/** How long after a touch every request reads the row. */
const WINDOW_MS = 1000;

const sentinelOf = (databaseFile: string) => `${databaseFile}-cache-epoch`;

/**
 * On this connection, every move of the row touches the sentinel. Call once
 * the table exists (after migrations); until then there is nothing to move.
 */
export function announceCacheEpochMoves(sqlite: SQLite.Database, databaseFile: string): void {
  const sentinel = sentinelOf(databaseFile);
  sqlite.function('pail_cache_epoch_moved', () => {
    writeFileSync(sentinel, String(Date.now()));
    return null;
  });
  sqlite.exec(`create temp trigger if not exists pail_announce_cache_epoch after update on main.cache_epochs
    begin select pail_cache_epoch_moved(); end`);
}

export interface CacheEpochWatch {
  /** True when the epoch moved since the last call (and on the first call). */
  moved(): boolean;
  close(): void;
}

export function watchCacheEpoch(sqlite: SQLite.Database, databaseFile: string): CacheEpochWatch {
  // Prepared on first use, after migrations have created the table.
  let read: SQLite.Statement | null = null;
  let seen: unknown;
  let readUntil = Number.POSITIVE_INFINITY; // until the first read
  let watcher: FSWatcher | null = null;
  try {
    const sentinel = sentinelOf(databaseFile);
    closeSync(openSync(sentinel, 'a', 0o600));
    watcher = watch(sentinel, { persistent: false }, () => {
      readUntil = Date.now() + WINDOW_MS;
    });
    watcher.on('error', () => {
      // Watching stopped (the file went away, or inotify failed): read the row every time.
      watcher?.close();
      watcher = null;
    });
  } catch {
    watcher = null;
  }
  return {
    moved() {
      if (watcher !== null && Date.now() > readUntil) return false;
      if (readUntil === Number.POSITIVE_INFINITY) readUntil = 0;
      read ??= sqlite.prepare('select epoch from cache_epochs where id = 1').pluck();
      const now = read.get();
      if (now === seen) return false;
      seen = now;
      return true;
    },
    close() {
      watcher?.close();
      watcher = null;
    },
  };
}
