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
import { keptVersionsToPurge } from '../db/repositories/object-versions.js';
import { versionsToPurge } from '../db/repositories/objects.js';
import type { BucketIdentity, Db } from '../db/schema.js';
import { getOwnBucket } from './buckets.js';
import { nowIso } from './clock.js';
import { AppError, errors } from './errors.js';
import { bucketDeletionBlocker } from './object-lock.js';
import { retireVersions } from './object-bytes.js';
import { bucketDeletedChange, outboxFor } from './webhook-events.js';
import type { StoragePorts } from './ports.js';
import { OPERATOR, recordAudit, type Actor } from './audit.js';

const PURGE_BATCH = 500;

type PurgePorts = Pick<StoragePorts, 'db' | 'writes' | 'blobs' | 'events' | 'durable'>;

/** Deletes the owner's bucket and every file in it; `operation` is the door's name for the request, for whoever hears of it. */
export async function deleteBucket(ports: StoragePorts, ownerId: number, rawId: string, operation?: string, actor: Actor = OPERATOR): Promise<void> {
  // A bucket holding locked versions stays, whoever asks (object-lock.ts); the refusal says until when. Asked in the
  // deletion's own transaction, under the bucket's lock: a lock set just before cannot be purged with it. Asked of
  // every bucket, not only one whose row read here says it has lock: lock turned on and a version locked after
  // that read would otherwise go with it.
  const own = await getOwnBucket(ports.db, ownerId, rawId);
  const guard = async (trx: Db) => {
    const held = await bucketDeletionBlocker({ db: trx, clock: ports.clock }, own.id);
    if (held !== null) throw new AppError('ObjectLocked', held);
  };
  // Issue 39: bucket.deleted, written in the deletion's transaction (its files' purge reports nothing more).
  const outbox = await outboxFor(ports, own.id, [bucketDeletedChange(`user:${ownerId}`)]);
  const bucket = await softDeleteBucket(ports.db, ownerId, own.id, nowIso(), outbox, guard);
  if (!bucket) throw errors.bucketNotFound();
  await recordAudit(ports.db, {
    userId: ownerId,
    actor,
    action: 'bucket.deleted',
    target: `bucket:${bucket.id}`,
    details: { storage_name: bucket.storage_name },
  });
  await ports.events.announce({
    type: 'bucket-removed',
    ownerId: bucket.owner_id,
    bucketId: bucket.id,
    bucketStorageName: bucket.storage_name,
    operation: operation ?? null,
  });
  await purgeBucket(ports, bucket, operation ?? null);
}

/** Removes every version of a soft-deleted bucket: its current files, then the kept versions and delete markers; bytes in the store first, then the rows. */
async function purgeBucket(ports: PurgePorts, bucket: BucketIdentity, operation: string | null): Promise<void> {
  await purgeCurrent(ports, bucket, operation);
  for (;;) {
    const kept = await keptVersionsToPurge(ports.db, bucket.id, PURGE_BATCH);
    if (kept.length === 0) return;
    const stored = kept.flatMap((version) => (version.storage_key === null ? [] : [{ storage_key: version.storage_key, inline: version.inline }]));
    await retireVersions(ports, stored, { strict: true });
    await ports.writes.removePurgedKept(bucket.id, kept);
  }
}

async function purgeCurrent(ports: PurgePorts, bucket: BucketIdentity, operation: string | null): Promise<void> {
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
