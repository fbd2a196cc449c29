/**
 * The embedded backend's write machinery, on real SQLite files:
 * - GroupSync: every caller waits for a flush that started after its call.
 * - SqliteWriter: writes queued together commit as one group, a failing write
 *   rolls back alone, results arrive only after the group's flush, and a
 *   write never runs inside a transaction Kysely has open; writeNow runs at
 *   once in a transaction of its own, under the same rule.
 * - The WAL checkpoint worker keeps the log from growing without bound.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/database.js';
import { openSqlite, type OpenSqlite } from '../src/db/sqlite.js';
import { GroupSync } from '../src/group-sync.js';

describe('GroupSync', () => {
  it('runs one flush for callers that arrive while another runs, and each caller waits for a flush started after it', async () => {
    const started: number[] = [];
    let release: (() => void) | null = null;
    const group = new GroupSync(async () => {
      started.push(Date.now());
      await new Promise<void>((resolve) => (release = resolve));
    });
    const order: string[] = [];
    const first = group.sync().then(() => order.push('first'));
    await new Promise((resolve) => setImmediate(resolve));
    // Two callers during the first flush share the second one.
    const second = group.sync().then(() => order.push('second'));
    const third = group.sync().then(() => order.push('third'));
    expect(started).toHaveLength(1);
    release!();
    await first;
    expect(order).toEqual(['first']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toHaveLength(2);
    release!();
    await Promise.all([second, third]);
    expect(order).toEqual(['first', 'second', 'third']);
    expect(started).toHaveLength(2);
  });

  it('a failed flush rejects its callers and the next caller gets a fresh one', async () => {
    let fail = true;
    const group = new GroupSync(async () => {
      if (fail) throw new Error('disk on fire');
    });
    await expect(group.sync()).rejects.toThrow('disk on fire');
    fail = false;
    await expect(group.sync()).resolves.toBeUndefined();
  });
});

describe('SqliteWriter (group commit on a real database)', () => {
  let dir: string;
  let database: OpenSqlite;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'pail-writes-'));
    database = openSqlite(path.join(dir, 'pail.db'), { checkpointInBackground: true });
    await migrateToLatest(database.db, database.dialect);
    await database.db.insertInto('users').values({ email: 'w@example.com', password_hash: 'x', plan: 'free', created_at: new Date().toISOString() }).execute();
  });

  afterEach(async () => {
    await database.close();
    await rm(dir, { recursive: true, force: true });
  });

  const usage = async () => (await database.db.selectFrom('users').select('storage_used_bytes').executeTakeFirstOrThrow()).storage_used_bytes;

  it('writes queued together commit as one group; a write that throws is rolled back alone', async () => {
    const writer = database.writer;
    const add = (bytes: number) =>
      writer.write((sqlite) => {
        sqlite.prepare('update users set storage_used_bytes = storage_used_bytes + ?').run(bytes);
        if (bytes === 13) throw new Error('unlucky');
        return bytes;
      });
    const results = await Promise.allSettled([add(1), add(13), add(100), add(1000)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ message: 'unlucky' });
    expect(await usage()).toBe(1101);
  });

  it('resolves only once the write is committed, and survives closing and reopening', async () => {
    const file = path.join(dir, 'pail.db');
    await database.writer.write((sqlite) => sqlite.prepare('update users set storage_used_bytes = 42').run());
    await database.close();
    database = openSqlite(file);
    expect(await usage()).toBe(42);
  });

  it('never runs inside a transaction Kysely has open', async () => {
    const seen: boolean[] = [];
    let queued: Promise<unknown> | undefined;
    await database.db.transaction().execute(async (trx) => {
      await trx.updateTable('users').set({ storage_used_bytes: 5 }).execute();
      queued = database.writer.write((sqlite) => {
        seen.push(sqlite.inTransaction);
        return sqlite.prepare('update users set storage_used_bytes = storage_used_bytes * 2').run();
      });
      // Give the writer several turns of the event loop while this transaction stays open.
      for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
      await trx.updateTable('users').set({ storage_used_bytes: 7 }).execute();
    });
    await queued;
    // It ran after the Kysely transaction committed (7 * 2), inside its own group transaction.
    expect(await usage()).toBe(14);
    expect(seen).toEqual([true]);
  });

  it('writeNow runs at once in its own transaction, but never inside one Kysely has open', async () => {
    expect(await database.writer.writeNow((sqlite) => sqlite.inTransaction)).toBe(true);
    let ran: Promise<unknown> | undefined;
    await database.db.transaction().execute(async (trx) => {
      await trx.updateTable('users').set({ storage_used_bytes: 5 }).execute();
      ran = database.writer.writeNow((sqlite) => sqlite.prepare('update users set storage_used_bytes = storage_used_bytes * 2').run());
      for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
      await trx.updateTable('users').set({ storage_used_bytes: 7 }).execute();
    });
    await ran;
    // After the Kysely transaction committed: 7 * 2, not (5 * 2) overwritten by 7.
    expect(await usage()).toBe(14);
    // A write that throws is rolled back whole.
    const failing = database.writer.writeNow((sqlite) => {
      sqlite.prepare('update users set storage_used_bytes = 1').run();
      throw new Error('refused');
    });
    await expect(failing).rejects.toThrow('refused');
    expect(await usage()).toBe(14);
  });

  it('checkpoints run on the worker, and the write-ahead log is reused rather than growing with every commit', async () => {
    const writer = database.writer;
    const blob = Buffer.alloc(8192, 1);
    await database.db.schema.createTable('filler').addColumn('bytes', 'blob').execute();
    const burst = async () => {
      for (let round = 0; round < 20; round++) {
        await Promise.all(Array.from({ length: 50 }, () => writer.write((sqlite) => sqlite.prepare('insert into filler (bytes) values (?)').run(blob))));
      }
    };
    const mainSize = async () => (await stat(path.join(dir, 'pail.db'))).size;
    // Until the database file holds `bytes` and has stopped growing (the checkpoint is done): the same size three
    // times 300 ms apart, so a checkpoint the host stalls for a moment is not taken for a finished one.
    const waitForMain = async (bytes: number) => {
      let last = -1;
      let same = 0;
      for (let i = 0; i < 100 && same < 2; i++) {
        const size = await mainSize();
        same = size >= bytes && size === last ? same + 1 : 0;
        last = size;
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      return mainSize();
    };
    // The server's own connection never checkpoints (wal_autocheckpoint=0): the
    // database file grows only because the worker copies the log into it.
    await burst();
    expect(await waitForMain(8 * 1024 * 1024)).toBeGreaterThan(8 * 1024 * 1024);
    // Once checkpointed, the next commits write the log from its start again:
    // a second burst of the same size leaves it about as large as one burst, not two.
    await burst();
    expect(await waitForMain(16 * 1024 * 1024)).toBeGreaterThan(16 * 1024 * 1024);
    const wal = await stat(path.join(dir, 'pail.db-wal'));
    expect(wal.size).toBeLessThan(14 * 1024 * 1024);
  });

  it('under writes that never pause, the log stays bounded instead of growing with them', async () => {
    const writer = database.writer;
    const blob = Buffer.alloc(8192, 1);
    await database.db.schema.createTable('filler').addColumn('bytes', 'blob').execute();
    // 200 MB of rows, group after group with no pause between them.
    for (let round = 0; round < 500; round++) {
      await Promise.all(Array.from({ length: 50 }, () => writer.write((sqlite) => sqlite.prepare('insert into filler (bytes) values (?)').run(blob))));
    }
    expect(
      (await database.db
        .selectFrom('filler' as never)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()) as unknown,
    ).toEqual({ n: 25_000 });
    const wal = await stat(path.join(dir, 'pail.db-wal'));
    // The log file is as long as the longest the log has been: its bound plus
    // what commits wrote before the next checkpoint report (every 200 ms), a
    // few tens of MB however fast this machine writes. A log that grew with
    // the writes would be as long as all of them (200 MB, measured).
    expect(wal.size).toBeLessThan(100 * 1024 * 1024);
  });
});
