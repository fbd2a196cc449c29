/**
 * Committing an upload: the one transaction that makes stored bytes a file's
 * current version. It
 * 1. reads the version it replaces (if any),
 * 2. moves the owner's usage by the difference, refusing in the same
 *    conditional update to grow past the plan's cap (so racing uploads can
 *    never together pass it),
 * 3. writes a small file's bytes and drops a replaced version's inline bytes,
 * 4. inserts or updates the object row,
 * 5. moves the bucket's counts, which also checks the bucket is still live
 *    (a deleted bucket rolls everything back).
 *
 * The same steps exist twice, by design:
 * - PostgreSQL: through Kysely, under a lock on the bucket row.
 * - Embedded SQLite: as prepared statements in one synchronous function, run
 *   by the group-commit writer (db/sqlite-writer.ts). Through Kysely the
 *   commit cost ~150 µs of CPU per upload (query building and its promise
 *   plumbing, measured), more than the rest of the request; as plain
 *   statements, ~25 µs. Both run under the whole HTTP test suite (embedded
 *   and scaled projects).
 */
import type SQLite from 'better-sqlite3';
import type { Transaction } from 'kysely';
import { deleteInlineBlobs, insertInlineBlob } from '../blob/inline-blobs.js';
import type { Dialect } from '../db/migrations.js';
import type { Database } from '../db/schema.js';
import { nowIso } from './clock.js';
import { errors } from './errors.js';
import type { ObjectPorts } from './objects.js';

export interface StoredBytes {
  size: number;
  sha256: string;
  /** A small file's bytes, to be written with its row; absent when they are in the blob store. */
  inlineBytes?: Buffer;
}

/** A version that was replaced or deleted: its bytes leave the store (inline ones left with the row). */
export interface RetiredVersion {
  storage_key: string;
  inline: number;
}

export interface CommitInput extends StoredBytes {
  ownerId: number;
  cap: number;
  plan: string;
  bucketId: number;
  filename: string;
  storageKey: string;
  contentType: string;
}

/** Records the new bytes as the file's current version. Returns the replaced version, if any. */
export function commitUpload(ports: Pick<ObjectPorts, 'db' | 'dialect' | 'writer'>, input: CommitInput): Promise<RetiredVersion | null> {
  if (ports.writer) return ports.writer.write((sqlite) => commitOnSqlite(sqlite, input));
  return commitWithKysely(ports, input);
}

async function commitWithKysely(ports: Pick<ObjectPorts, 'db' | 'dialect'>, input: CommitInput): Promise<RetiredVersion | null> {
  return ports.db.transaction().execute(async (trx) => {
    // Locking the bucket row serialises commits per bucket, so two uploads of one name cannot both count as new.
    await lockLiveBucket(trx, ports.dialect, input.bucketId);

    const old = await trx
      .selectFrom('objects')
      .select(['storage_key', 'size', 'inline'])
      .where('bucket_id', '=', input.bucketId)
      .where('filename', '=', input.filename)
      .executeTakeFirst();
    const delta = input.size - (old?.size ?? 0);

    const usage = await trx
      .updateTable('users')
      .set((eb) => ({ storage_used_bytes: eb('storage_used_bytes', '+', delta) }))
      .where('id', '=', input.ownerId)
      .$if(delta > 0, (q) => q.where((eb) => eb(eb('storage_used_bytes', '+', delta), '<=', input.cap)))
      .executeTakeFirst();
    if (Number(usage.numUpdatedRows) === 0) throw errors.storageLimit(input.plan, input.cap);

    const now = nowIso();
    const version = { storage_key: input.storageKey, size: input.size, content_type: input.contentType, etag: input.sha256, inline: input.inlineBytes ? 1 : 0, updated_at: now };
    if (input.inlineBytes) await insertInlineBlob(trx, input.storageKey, input.inlineBytes);
    if (old?.inline) await deleteInlineBlobs(trx, [old.storage_key]);
    if (old) {
      await trx.updateTable('objects').set(version).where('bucket_id', '=', input.bucketId).where('filename', '=', input.filename).execute();
    } else {
      await trx.insertInto('objects').values({ bucket_id: input.bucketId, filename: input.filename, created_at: now, ...version }).execute();
    }
    const counted = await trx
      .updateTable('buckets')
      .set((eb) => ({ object_count: eb('object_count', '+', old ? 0 : 1), total_bytes: eb('total_bytes', '+', delta) }))
      .where('id', '=', input.bucketId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (Number(counted.numUpdatedRows) === 0) throw errors.bucketNotFound();
    return old ?? null;
  });
}

const SQLITE_STATEMENTS = {
  old: 'select storage_key, size, inline from objects where bucket_id = ? and filename = ?',
  grow: 'update users set storage_used_bytes = storage_used_bytes + ? where id = ? and storage_used_bytes + ? <= ?',
  shrink: 'update users set storage_used_bytes = storage_used_bytes + ? where id = ?',
  insertInline: 'insert into inline_blobs (storage_key, bytes) values (?, ?)',
  deleteInline: 'delete from inline_blobs where storage_key = ?',
  insertObject:
    'insert into objects (bucket_id, filename, storage_key, size, content_type, etag, inline, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  updateObject:
    'update objects set storage_key = ?, size = ?, content_type = ?, etag = ?, inline = ?, updated_at = ? where bucket_id = ? and filename = ?',
  count: 'update buckets set object_count = object_count + ?, total_bytes = total_bytes + ? where id = ? and deleted_at is null',
} as const;

type Prepared = { [K in keyof typeof SQLITE_STATEMENTS]: SQLite.Statement };
const prepared = new WeakMap<SQLite.Database, Prepared>();

function statements(sqlite: SQLite.Database): Prepared {
  let found = prepared.get(sqlite);
  if (!found) {
    found = Object.fromEntries(Object.entries(SQLITE_STATEMENTS).map(([name, text]) => [name, sqlite.prepare(text)])) as Prepared;
    prepared.set(sqlite, found);
  }
  return found;
}

/** The same steps as commitWithKysely, synchronously; SQLite serialises all writes, so no lock is needed. */
function commitOnSqlite(sqlite: SQLite.Database, input: CommitInput): RetiredVersion | null {
  const sql = statements(sqlite);
  const old = sql.old.get(input.bucketId, input.filename) as (RetiredVersion & { size: number }) | undefined;
  const delta = input.size - (old?.size ?? 0);
  const usage = delta > 0 ? sql.grow.run(delta, input.ownerId, delta, input.cap) : sql.shrink.run(delta, input.ownerId);
  if (usage.changes === 0) throw errors.storageLimit(input.plan, input.cap);

  const now = nowIso();
  const inline = input.inlineBytes ? 1 : 0;
  if (input.inlineBytes) sql.insertInline.run(input.storageKey, input.inlineBytes);
  if (old?.inline) sql.deleteInline.run(old.storage_key);
  if (old) {
    sql.updateObject.run(input.storageKey, input.size, input.contentType, input.sha256, inline, now, input.bucketId, input.filename);
  } else {
    sql.insertObject.run(input.bucketId, input.filename, input.storageKey, input.size, input.contentType, input.sha256, inline, now, now);
  }
  if (sql.count.run(old ? 0 : 1, delta, input.bucketId).changes === 0) throw errors.bucketNotFound();
  return old ? { storage_key: old.storage_key, inline: old.inline } : null;
}

/**
 * On PostgreSQL, locks a live bucket's row for the rest of the transaction, or
 * fails with Bucket not found. Every write to a bucket's objects takes this
 * lock first, so they never deadlock. SQLite serialises all writes anyway, so
 * there the statement is skipped and the final counts update checks liveness.
 */
export async function lockLiveBucket(trx: Transaction<Database>, dialect: Dialect, bucketId: number): Promise<void> {
  if (dialect !== 'postgres') return;
  const live = await trx
    .selectFrom('buckets')
    .select('id')
    .where('id', '=', bucketId)
    .where('deleted_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
  if (!live) throw errors.bucketNotFound();
}
