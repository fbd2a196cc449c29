/**
 * Durable SQLite commits without stalling the event loop.
 *
 * SQLite runs in WAL mode with synchronous=NORMAL: a commit is appended to the
 * `-wal` file but not fsynced, which survives a process crash but not a power
 * cut. synchronous=FULL would fsync inside every commit, on the main thread,
 * one at a time. Instead, a write request waits, before it is answered, for an
 * fdatasync of the WAL file on the thread pool; the syncs are grouped
 * (group-sync.ts), so one covers every commit made while the previous one ran.
 * This is the same flush SQLite's FULL mode does, done off-thread and shared
 * (docs/performance.md). A request that wrote nothing does not wait: the
 * connection's change counter tells.
 *
 * The WAL file exists from the first write (migrations write) until the last
 * connection closes, so one descriptor stays valid for the server's life.
 */
import type SQLite from 'better-sqlite3';
import { open, type FileHandle } from 'node:fs/promises';
import { GroupSync } from '../group-sync.js';

export class WalSync {
  private file: Promise<FileHandle> | null = null;
  private readonly group = new GroupSync(async () => {
    this.file ??= open(`${this.databaseFile}-wal`, 'r');
    await (await this.file).datasync();
  });
  private readonly changes: SQLite.Statement;
  private syncedChanges = 0;

  constructor(
    sqlite: SQLite.Database,
    private readonly databaseFile: string,
  ) {
    this.changes = sqlite.prepare('select total_changes() as n').pluck();
  }

  /** Resolves once every commit made so far on this connection is on disk. */
  async sync(): Promise<void> {
    const changes = this.changes.get() as number;
    if (changes === this.syncedChanges) return;
    await this.group.sync();
    // Everything counted before the flush began is on disk now.
    this.syncedChanges = Math.max(this.syncedChanges, changes);
  }

  async close(): Promise<void> {
    const file = await this.file?.catch(() => null);
    this.file = null;
    await file?.close();
  }
}
