/**
 * Group commit for the embedded SQLite backend's hottest writes (upload
 * commits).
 *
 * An fdatasync of the write-ahead log is many times slower while commits keep
 * appending to it, so "commit, then wait for a shared flush" (wal-sync.ts
 * alone) caps the small-upload rate. Instead, writes queue here while a flush
 * runs; then the whole queue runs as one transaction, each write in its own
 * savepoint (one write failing, e.g. over the storage cap, rolls back only
 * that write), and one flush makes the group durable. This writer appends
 * nothing to the log during its flush, so the flush stays short, and the event
 * loop never waits for the disk. See docs/performance.md.
 *
 * A write is a synchronous function of the better-sqlite3 handle: it runs to
 * completion without yielding, so it cannot interleave with anything else on
 * the connection. It never starts inside a transaction someone else (Kysely)
 * has open; Kysely's SQLite transactions finish within one turn of the event
 * loop, so the writer waits a turn at a time until none is open.
 */
import type SQLite from 'better-sqlite3';
import { KeyedBatcher, type Outcome } from './keyed-batcher.js';
import type { WalCheckpointer } from './wal-checkpointer.js';
import type { WalSync } from './wal-sync.js';

type Write = (sqlite: SQLite.Database) => unknown;

export class SqliteWriter {
  /** One queue (one key): while a group commits and flushes, the next one gathers. */
  private readonly batcher = new KeyedBatcher<'sqlite', Write, unknown>((_key, group) => this.commitGroup(group));

  /**
   * The group's transaction and each write's savepoint, made once: every
   * transaction() call builds four wrapper functions, a measurable share of a
   * small upload's CPU when made per write. Called inside a transaction, a
   * better-sqlite3 transaction function runs as a savepoint.
   */
  private readonly inTransaction: (group: Write[], outcomes: Outcome<unknown>[]) => void;
  private readonly inSavepoint: (work: Write) => unknown;
  private readonly inImmediateTransaction: (work: Write) => unknown;

  constructor(
    private readonly sqlite: SQLite.Database,
    private readonly wal: WalSync,
    /** The server's background checkpoints, when it has them (wal-checkpointer.ts). */
    private readonly checkpointer: WalCheckpointer | null = null,
  ) {
    const ownTransaction = sqlite.transaction((work: Write) => work(sqlite));
    this.inSavepoint = ownTransaction;
    // BEGIN IMMEDIATE: the write lock from the start, so what its reads see is what its writes change.
    this.inImmediateTransaction = (work: Write) => ownTransaction.immediate(work);
    this.inTransaction = sqlite.transaction((group: Write[], outcomes: Outcome<unknown>[]) => {
      for (const work of group) {
        // A throw rolls back this write's savepoint only.
        try {
          outcomes.push({ ok: true, value: this.inSavepoint(work) });
        } catch (error) {
          outcomes.push({ ok: false, error });
        }
      }
    });
  }

  /** Runs `work` in the next group; resolves with its result once the group is on disk. */
  write<T>(work: (sqlite: SQLite.Database) => T): Promise<T> {
    return this.batcher.run('sqlite', work) as Promise<T>;
  }

  /**
   * Runs `work` at once in a transaction of its own, without waiting for a
   * flush: for writes whose request waits for one anyway before it is
   * answered (request-hooks.ts), or that a crash may lose (a reservation,
   * which would lapse). Like a group, never inside a transaction Kysely has open.
   */
  async writeNow<T>(work: (sqlite: SQLite.Database) => T): Promise<T> {
    await this.outsideKyselyTransactions();
    return this.inImmediateTransaction(work) as T;
  }

  /** better-sqlite3 has one connection: a Kysely transaction open on it (awaiting between statements) must end first. */
  private async outsideKyselyTransactions(): Promise<void> {
    while (this.sqlite.inTransaction) await new Promise((resolve) => setImmediate(resolve));
  }

  private async commitGroup(group: Write[]): Promise<Outcome<unknown>[]> {
    // A long log: let a checkpoint copy all of it first, so this commit starts it again.
    if (this.checkpointer?.logTooLong) await this.checkpointer.catchUp();
    await this.outsideKyselyTransactions();
    const outcomes = this.runGroup(group);
    // If the flush fails, nothing of the group is known to be durable: every write fails.
    await this.wal.sync();
    return outcomes;
  }

  private runGroup(group: Write[]): Outcome<unknown>[] {
    const outcomes: Outcome<unknown>[] = [];
    try {
      this.inTransaction(group, outcomes);
    } catch (error) {
      // The group's commit itself failed (disk full, I/O error): nothing of it happened.
      return group.map(() => ({ ok: false, error }));
    }
    return outcomes;
  }
}
