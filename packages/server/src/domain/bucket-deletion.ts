/**
 * Deleting a bucket. The bucket is soft-deleted and its bytes leave the owner's
 * usage in one transaction, so from then on it is "not found" everywhere (the
 * removal is announced: object-events.ts); then its blobs and object rows are
 * removed in batches before the caller gets its answer, each row's removal
 * announced too. If an instance dies halfway, resumePurges() (at start-up and
 * on every garbage-collection pass, on any instance) finishes the job. Every
 * step is idempotent, so several instances may purge the same bucket at once;
 * a row's removal is announced by the one that removed it.
 */
import { bucketsToPurge, softDeleteBucket } from '../db/repositories/buckets.js';
import { versionsToPurge } from '../db/repositories/objects.js';
import type { BucketIdentity } from '../db/schema.js';
import { parseBucketId } from './buckets.js';
import { nowIso } from './clock.js';
import { errors } from './errors.js';
import { retireVersions } from './object-bytes.js';
import type { StoragePorts } from './ports.js';

const PURGE_BATCH = 500;

type PurgePorts = Pick<StoragePorts, 'db' | 'writes' | 'blobs' | 'events' | 'durable'>;

/** Deletes the owner's bucket and every file in it; `operation` is the door's name for the request, for whoever hears of it. */
export async function deleteBucket(ports: StoragePorts, ownerId: number, rawId: string, operation?: string): Promise<void> {
  const bucket = await softDeleteBucket(ports.db, ownerId, parseBucketId(rawId), nowIso());
  if (!bucket) throw errors.bucketNotFound();
  await ports.events.announce({
    type: 'bucket-removed',
    ownerId: bucket.owner_id,
    bucketId: bucket.id,
    bucketStorageName: bucket.storage_name,
    operation: operation ?? null,
  });
  await purgeBucket(ports, bucket, operation ?? null);
}

/** Removes every object of a soft-deleted bucket: bytes in the store first, then the rows. */
async function purgeBucket(ports: PurgePorts, bucket: BucketIdentity, operation: string | null): Promise<void> {
  for (;;) {
    const batch = await versionsToPurge(ports.db, bucket.id, PURGE_BATCH);
    if (batch.length === 0) return;
    await retireVersions(ports, batch, { strict: true });
    for (const removed of await ports.writes.removePurged(bucket.id, batch)) {
      await ports.events.announce({
        type: 'object-removed',
        ownerId: bucket.owner_id,
        bucketId: bucket.id,
        bucketStorageName: bucket.storage_name,
        filename: removed.filename,
        storageKey: removed.storage_key,
        size: removed.size,
        etag: removed.etag,
        cause: 'bucket-deleted',
        operation,
      });
    }
  }
}

/** Finishes the deletions an instance did not; returns how many buckets it purged. */
export async function resumePurges(ports: PurgePorts): Promise<number> {
  const pending = await bucketsToPurge(ports.db);
  for (const bucket of pending) await purgeBucket(ports, bucket, null);
  return pending.length;
}
