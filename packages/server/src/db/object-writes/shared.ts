/** The writes both dialects make the same way, through Kysely. */
import type { Db } from '../schema.js';
import { OBJECT_COLUMNS, type RemovedVersion, type StoredVersion } from '../repositories/objects.js';
import { WriteRefused, type ObjectWrites } from './object-writes.js';

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

/**
 * One statement, so no transaction: it changes no count, and the version
 * (storage key) it names is the one it rewrites or none. A bucket being
 * deleted takes its files with it, so the rewrite asks that it is live.
 */
export function editHeadersWith(db: Db): ObjectWrites['editHeaders'] {
  return async (input) => {
    const row = await db
      .updateTable('objects')
      .set({ content_type: input.contentType, metadata: input.metadata, updated_at: input.updatedAt })
      .where('bucket_id', '=', input.bucketId)
      .where('filename', '=', input.filename)
      .where('storage_key', '=', input.storageKey)
      .where((eb) => eb.exists(eb.selectFrom('buckets').select('id').where('id', '=', input.bucketId).where('deleted_at', 'is', null)))
      .returning(OBJECT_COLUMNS)
      .executeTakeFirst();
    return row ?? null;
  };
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
