/**
 * Deleting a bucket. The bucket is soft-deleted and its bytes leave the owner's
 * usage in one transaction, so from then on it is "not found" everywhere; then
 * its blobs and object rows are removed in batches before the caller gets its
 * answer. If an instance dies halfway, resumePurges() (at start-up and on every
 * garbage-collection pass, on any instance) finishes the job. Every step is
 * idempotent, so several instances may purge the same bucket at once.
 */
import { deleteInlineBlobs } from '../blob/inline-blobs.js';
import type { Db } from '../db/database.js';
import { nowIso } from './clock.js';
import { errors } from './errors.js';
import type { ObjectPorts } from './objects.js';

const PURGE_BATCH = 500;

export async function deleteBucket(ports: ObjectPorts, ownerId: number, bucketId: number): Promise<void> {
  await ports.db.transaction().execute(async (trx) => {
    const bucket = await trx
      .updateTable('buckets')
      .set({ deleted_at: nowIso() })
      .where('id', '=', bucketId)
      .where('owner_id', '=', ownerId)
      .where('deleted_at', 'is', null)
      .returning(['total_bytes'])
      .executeTakeFirst();
    if (!bucket) throw errors.bucketNotFound();
    await trx
      .updateTable('users')
      .set((eb) => ({ storage_used_bytes: eb('storage_used_bytes', '-', bucket.total_bytes) }))
      .where('id', '=', ownerId)
      .execute();
  });
  await ports.lookups?.invalidate();
  await purgeBucket(ports, bucketId);
}

/**
 * Removes every object of a soft-deleted bucket: blobs in the store first,
 * then the rows together with their inline bytes.
 */
export async function purgeBucket(ports: Pick<ObjectPorts, 'db' | 'blobs' | 'cache'>, bucketId: number): Promise<void> {
  for (;;) {
    const batch = await ports.db
      .selectFrom('objects')
      .select(['storage_key', 'inline'])
      .where('bucket_id', '=', bucketId)
      .orderBy('filename')
      .limit(PURGE_BATCH)
      .execute();
    if (batch.length === 0) return;
    const keys = batch.map((row) => row.storage_key);
    ports.cache.delete(keys);
    await ports.blobs.delete(batch.filter((row) => !row.inline).map((row) => row.storage_key));
    await ports.db.transaction().execute(async (trx) => {
      await deleteInlineBlobs(trx, batch.filter((row) => row.inline).map((row) => row.storage_key));
      await trx.deleteFrom('objects').where('bucket_id', '=', bucketId).where('storage_key', 'in', keys).execute();
    });
  }
}

/** Soft-deleted buckets that still have objects: deletions an instance did not finish. */
export async function resumePurges(ports: Pick<ObjectPorts, 'db' | 'blobs' | 'cache'>): Promise<number> {
  const pending = await unfinishedDeletions(ports.db);
  for (const bucketId of pending) await purgeBucket(ports, bucketId);
  return pending.length;
}

async function unfinishedDeletions(db: Db): Promise<number[]> {
  const rows = await db
    .selectFrom('buckets')
    .select('id')
    .where('deleted_at', 'is not', null)
    .where((eb) => eb.exists(eb.selectFrom('objects').select('bucket_id').whereRef('objects.bucket_id', '=', 'buckets.id')))
    .execute();
  return rows.map((row) => row.id);
}

