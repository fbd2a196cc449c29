/**
 * A bucket's object lock configuration (decisions.md, "Object lock"): lock
 * turned on, for good, and its default retention, by S3's
 * PutObjectLockConfiguration or the Pail API's bucket PATCH. As S3 allows,
 * lock may be turned on after the bucket was made only where versioning is
 * enabled; it is never turned off.
 */
import type { DefaultRetention, RetentionMode } from '@pail/shared';
import type { Caches } from '../cache/caches.js';
import { setBucketLock } from '../db/repositories/version-locks.js';
import type { BucketRow, BucketVersioning, Db } from '../db/schema.js';
import { OPERATOR, recordAudit, type Actor } from './audit.js';
import { AppError, errors } from './errors.js';
import { checkedDefaultRetention, defaultRetentionOf } from './object-lock.js';

const versioningNeeded = (): AppError => new AppError('InvalidBucketState', 'Versioning must be enabled on the bucket to enable Object Lock');

/**
 * Sets a bucket's object lock configuration: lock enabled (for good) and its
 * default retention (null: none), in force for every version written after
 * the answer, on every instance (the bucket's rules are forgotten). A bucket
 * without lock gets it only while its versioning is enabled (409
 * InvalidBucketState otherwise, also when it was suspended meanwhile).
 * Returns the bucket's row after the change.
 */
export async function setLockConfiguration(
  ports: { db: Db; caches: Caches },
  bucket: Pick<BucketRow, 'id' | 'owner_id' | 'object_lock' | 'versioning'>,
  defaultRetention: DefaultRetention | null,
  actor: Actor = OPERATOR,
): Promise<BucketRow> {
  if (bucket.object_lock !== 1 && bucket.versioning !== 'enabled') throw versioningNeeded();
  const row = await setBucketLock(ports.db, bucket.id, {
    object_lock: 1,
    lock_default_mode: defaultRetention?.mode ?? null,
    lock_default_days: defaultRetention?.days ?? null,
    lock_default_years: defaultRetention?.years ?? null,
  });
  if (!row) throw bucket.object_lock === 1 ? errors.bucketNotFound() : versioningNeeded();
  await ports.caches.changed('buckets');
  await recordAudit(ports.db, {
    userId: bucket.owner_id,
    actor,
    action: 'bucket.object_lock_changed',
    target: `bucket:${bucket.id}`,
    details: { default_retention: defaultRetention },
  });
  return row;
}

/** What a bucket PATCH may ask of its lock (absent: unchanged). */
export interface LockPatch {
  object_lock?: boolean;
  default_retention?: { mode: RetentionMode; days?: number | null; years?: number | null } | null;
}

/**
 * The default retention a bucket PATCH sets with its lock configuration
 * (null: none), or undefined when it changes nothing about lock; checked
 * before the PATCH changes anything. `versioningAfter`: the bucket's
 * versioning once the same PATCH has set it. Refused: turning lock off
 * (400), a default retention without lock (400), turning lock on where
 * versioning is not enabled (409, as S3).
 */
export function lockPatchOf(
  bucket: Pick<BucketRow, 'object_lock' | 'lock_default_mode' | 'lock_default_days' | 'lock_default_years'>,
  patch: LockPatch,
  versioningAfter: BucketVersioning,
): DefaultRetention | null | undefined {
  const hasLock = bucket.object_lock === 1;
  if (patch.object_lock === false && hasLock) throw errors.validation('object_lock cannot be turned off: a bucket with object lock keeps it for good');
  const locked = hasLock || patch.object_lock === true;
  if (!locked) {
    if (patch.default_retention !== undefined && patch.default_retention !== null) throw errors.validation('default_retention needs object_lock: true');
    return undefined;
  }
  if (patch.object_lock !== true && patch.default_retention === undefined) return undefined;
  if (!hasLock && versioningAfter !== 'enabled') throw versioningNeeded();
  if (patch.default_retention === undefined) return defaultRetentionOf(bucket);
  return patch.default_retention === null ? null : checkedDefaultRetention(patch.default_retention);
}
