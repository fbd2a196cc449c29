/**
 * Deleting a bucket. The bucket is soft-deleted and its bytes leave the owner's
 * usage in one transaction, so from then on it is "not found" everywhere; then
 * its blobs and object rows are removed in batches before the caller gets its
 * answer. If an instance dies halfway, resumePurges() (at start-up and on every
 * garbage-collection pass, on any instance) finishes the job. Every step is
 * idempotent, so several instances may purge the same bucket at once.
 */
import { bucketsToPurge, softDeleteBucket } from '../db/repositories/buckets.js';
import { versionsToPurge } from '../db/repositories/objects.js';
import { parseBucketId } from './buckets.js';
import { nowIso } from './clock.js';
import { errors } from './errors.js';
import { retireVersions } from './object-bytes.js';
import type { StoragePorts } from './ports.js';

const PURGE_BATCH = 500;

export async function deleteBucket(ports: StoragePorts, ownerId: number, rawId: string): Promise<void> {
  const bucketId = parseBucketId(rawId);
  if (!(await softDeleteBucket(ports.db, ownerId, bucketId, nowIso()))) throw errors.bucketNotFound();
  await ports.caches.changed('objects');
  await purgeBucket(ports, bucketId);
}

/** Removes every object of a soft-deleted bucket: bytes in the store first, then the rows. */
async function purgeBucket(ports: Pick<StoragePorts, 'db' | 'writes' | 'blobs' | 'caches' | 'durable'>, bucketId: number): Promise<void> {
  for (;;) {
    const batch = await versionsToPurge(ports.db, bucketId, PURGE_BATCH);
    if (batch.length === 0) return;
    await retireVersions(ports, batch, { strict: true });
    await ports.writes.removePurged(bucketId, batch);
  }
}

/** Finishes the deletions an instance did not; returns how many buckets it purged. */
export async function resumePurges(ports: Pick<StoragePorts, 'db' | 'writes' | 'blobs' | 'caches' | 'durable'>): Promise<number> {
  const pending = await bucketsToPurge(ports.db);
  for (const bucketId of pending) await purgeBucket(ports, bucketId);
  return pending.length;
}
