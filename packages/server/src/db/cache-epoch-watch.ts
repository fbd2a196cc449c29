/**
 * Has a change that cached lookups depend on (a key revoked, a plan changed)
 * been committed by another process, such as the `pail` CLI, since we last
 * looked? Those changes move the `cache_epochs` row (domain/cache-epoch.ts).
 *
 * Reading that row on every request costs a SQLite read transaction (file
 * locks, a page read): measured, 15 µs of a 55 µs HEAD. So the row is read
 * only after the database's directory has changed. Another process's commit
 * writes the write-ahead log with write(2), which inotify reports before that
 * process can even exit, so the next request (sent after the CLI returned)
 * finds the flag set. Where the directory cannot be watched, every request
 * reads the row, as before. (`PRAGMA data_version` would also move for the
 * checkpoint worker's connection, emptying the caches every few hundred
 * milliseconds.)
 */
import type SQLite from 'better-sqlite3';
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';

export interface CacheEpochWatch {
  /** True when the epoch moved since the last call (and on the first call). */
  moved(): boolean;
  close(): void;
}

export function watchCacheEpoch(sqlite: SQLite.Database, file: string): CacheEpochWatch {
  // Prepared on first use, after migrations have created the table.
  let read: SQLite.Statement | null = null;
  let seen: unknown;
  let changed = true;
  let watcher: FSWatcher | null = null;
  try {
    watcher = watch(path.dirname(path.resolve(file)), { persistent: false }, () => {
      changed = true;
    });
    watcher.on('error', () => {
      // Watching stopped (the directory went away, or inotify failed): read the row every time.
      watcher?.close();
      watcher = null;
    });
  } catch {
    watcher = null;
  }
  return {
    moved() {
      if (watcher !== null && !changed) return false;
      changed = false;
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
