/** The writes both dialects make the same way, through Kysely. */
import type { Db } from '../schema.js';
import { foldName } from '../folded-names.js';
import { nameSortKey } from '../name-sort-keys.js';
import { OBJECT_COLUMNS, type RemovedVersion, type StoredVersion } from '../repositories/objects.js';
import { WriteRefused, type MoveInput, type Moved, type ObjectWrites } from './object-writes.js';

export async function deleteInlineBytes(db: Db, storageKeys: string[]): Promise<void> {
  if (storageKeys.length === 0) return;
  await db.deleteFrom('inline_blobs').where('storage_key', 'in', storageKeys).execute();
}

/**
 * @param lockBucket locks the bucket's row first (PostgreSQL), in the order
 *   every write to a bucket's objects takes its locks, so they never deadlock.
 */
export function deleteVersionWith(db: Db, lockBucket: (trx: Db, bucketId: number) => Promise<void>): ObjectWrites['deleteVersion'] {
  return (bucket, filename) =>
    db.transaction().execute(async (trx) => {
      await lockBucket(trx, bucket.id);
      const old = await trx
        .deleteFrom('objects')
        .where('bucket_id', '=', bucket.id)
        .where('filename', '=', filename)
        .returning(['filename', 'storage_key', 'size', 'inline', 'etag'])
        .executeTakeFirst();
      if (!old) throw new WriteRefused('no-file');
      if (old.inline) await deleteInlineBytes(trx, [old.storage_key]);
      const counted = await trx
        .updateTable('buckets')
        .set((eb) => ({ object_count: eb('object_count', '-', 1), total_bytes: eb('total_bytes', '-', old.size) }))
        .where('id', '=', bucket.id)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      // A bucket deleted meanwhile already gave back its bytes: roll back rather than count them twice.
      if (Number(counted.numUpdatedRows) === 0) throw new WriteRefused('no-bucket');
      await trx
        .updateTable('users')
        .set((eb) => ({ storage_used_bytes: eb('storage_used_bytes', '-', old.size) }))
        .where('id', '=', bucket.owner_id)
        .execute();
      return old;
    });
}

/** The columns an in-place edit of a file's row may change: never its bytes, name or key. */
type RowEdit = { content_type?: string; metadata?: string | null; updated_at?: string; tags?: string | null };

/**
 * Rewrites a file's row in place, for the version named (its storage key) in a live bucket (a bucket being deleted
 * takes its files with it); null when that version is no longer there. One statement and no count changes, so no
 * transaction.
 */
async function editVersion(db: Db, input: { bucketId: number; filename: string; storageKey: string }, set: RowEdit) {
  const row = await db
    .updateTable('objects')
    .set(set)
    .where('bucket_id', '=', input.bucketId)
    .where('filename', '=', input.filename)
    .where('storage_key', '=', input.storageKey)
    .where((eb) => eb.exists(eb.selectFrom('buckets').select('id').where('id', '=', input.bucketId).where('deleted_at', 'is', null)))
    .returning(OBJECT_COLUMNS)
    .executeTakeFirst();
  return row ?? null;
}

/** A file's type, stored headers and user metadata; updated_at moves. */
export function editHeadersWith(db: Db): ObjectWrites['editHeaders'] {
  return (input) => editVersion(db, input, { content_type: input.contentType, metadata: input.metadata, updated_at: input.updatedAt });
}

/** A file's tags; S3 keeps Last-Modified as it was. */
export function editTagsWith(db: Db): ObjectWrites['editTags'] {
  return (input) => editVersion(db, input, { tags: input.tags });
}

/**
 * @param lockBucket as deleteVersionWith's; a move between two buckets locks
 *   both, the lower id first, so two moves the other way round never deadlock.
 */
export function moveVersionWith(db: Db, lockBucket: (trx: Db, bucketId: number) => Promise<void>): ObjectWrites['moveVersion'] {
  return (input) =>
    db.transaction().execute(async (trx) => {
      const { from, to } = input;
      for (const bucketId of [...new Set([from.bucketId, to.bucketId])].sort((a, b) => a - b)) await lockBucket(trx, bucketId);
      const source = await trx
        .selectFrom('objects')
        .select('size')
        .where('bucket_id', '=', from.bucketId)
        .where('filename', '=', from.filename)
        .where('storage_key', '=', from.storageKey)
        .executeTakeFirst();
      if (!source) throw new WriteRefused('no-file');
      const replaced = await takeTarget(trx, input);
      const row = await trx
        .updateTable('objects')
        .set({
          bucket_id: to.bucketId,
          filename: to.filename,
          name_folded: foldName(to.filename),
          name_sort: nameSortKey(to.filename),
          ...(input.contentType !== undefined ? { content_type: input.contentType } : {}),
        })
        .where('bucket_id', '=', from.bucketId)
        .where('filename', '=', from.filename)
        .returning(OBJECT_COLUMNS)
        .executeTakeFirstOrThrow();
      // What each bucket gains and loses (within one bucket, only an overwritten version leaves); each
      // update also finds its bucket still live, as SQLite takes no lock that would.
      const changes =
        from.bucketId === to.bucketId
          ? [{ bucketId: to.bucketId, count: replaced ? -1 : 0, bytes: -(replaced?.size ?? 0) }]
          : [
              { bucketId: from.bucketId, count: -1, bytes: -row.size },
              { bucketId: to.bucketId, count: replaced ? 0 : 1, bytes: row.size - (replaced?.size ?? 0) },
            ];
      for (const change of changes) {
        const counted = await trx
          .updateTable('buckets')
          .set((eb) => ({ object_count: eb('object_count', '+', change.count), total_bytes: eb('total_bytes', '+', change.bytes) }))
          .where('id', '=', change.bucketId)
          .where('deleted_at', 'is', null)
          .executeTakeFirst();
        if (Number(counted.numUpdatedRows) === 0) throw new WriteRefused('no-bucket');
      }
      if (replaced && replaced.size !== 0) {
        await trx
          .updateTable('users')
          .set((eb) => ({ storage_used_bytes: eb('storage_used_bytes', '-', replaced.size) }))
          .where('id', '=', input.ownerId)
          .execute();
      }
      return { row, replaced } satisfies Moved;
    });
}

/** The version at a move's new name: refused unless the move overwrites, else its row (and inline bytes) removed. */
async function takeTarget(trx: Db, input: MoveInput): Promise<RemovedVersion | null> {
  const target = trx.deleteFrom('objects').where('bucket_id', '=', input.to.bucketId).where('filename', '=', input.to.filename);
  if (!input.overwrite) {
    const present = await trx
      .selectFrom('objects')
      .select('filename')
      .where('bucket_id', '=', input.to.bucketId)
      .where('filename', '=', input.to.filename)
      .executeTakeFirst();
    if (present) throw new WriteRefused('exists');
    return null;
  }
  const old = await target.returning(['filename', 'storage_key', 'size', 'inline', 'etag']).executeTakeFirst();
  if (old?.inline) await deleteInlineBytes(trx, [old.storage_key]);
  return old ?? null;
}

export function removePurgedWith(db: Db): ObjectWrites['removePurged'] {
  return async (bucketId, versions) => {
    if (versions.length === 0) return [];
    return db.transaction().execute(async (trx) => {
      await deleteInlineBytes(
        trx,
        versions.filter((version) => version.inline).map((version) => version.storage_key),
      );
      return trx
        .deleteFrom('objects')
        .where('bucket_id', '=', bucketId)
        .where(
          'storage_key',
          'in',
          versions.map((version) => version.storage_key),
        )
        .returning(['filename', 'storage_key', 'size', 'inline', 'etag'])
        .execute();
    });
  };
}

export function readInlineWith(db: Db): ObjectWrites['readInline'] {
  return async (storageKey) => {
    const row = await db.selectFrom('inline_blobs').select('bytes').where('storage_key', '=', storageKey).executeTakeFirst();
    // PostgreSQL's bytea and SQLite's blob both arrive as Buffers.
    return row?.bytes;
  };
}

export type { RemovedVersion, StoredVersion };
