/** Queries on buckets. A bucket is live until deleted_at is set; only live buckets are found. */
import type { BucketIdentity, BucketRow, Db } from '../schema.js';
import { insertOutbox, type OutboxEvent } from './webhook-outbox.js';

export function insertBucket(
  db: Db,
  values: {
    owner_id: number;
    name: string;
    storage_name: string;
    public: number;
    created_at: string;
    max_file_bytes?: number | null;
    allowed_types?: string | null;
    object_lock?: number;
    versioning?: 'enabled';
    lock_default_mode?: string | null;
    lock_default_days?: number | null;
    lock_default_years?: number | null;
  },
): Promise<BucketRow> {
  return db
    .insertInto('buckets')
    .values({ ...values, deleted_at: null })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function countLiveBuckets(db: Db, ownerId: number): Promise<number> {
  const row = await db
    .selectFrom('buckets')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('owner_id', '=', ownerId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function liveBucketNamed(db: Db, ownerId: number, name: string): Promise<boolean> {
  const row = await db
    .selectFrom('buckets')
    .select('id')
    .where('owner_id', '=', ownerId)
    .where('name', '=', name)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether any bucket, live or deleted, of any owner has (had) this storage name. */
export async function storageNameUsed(db: Db, storageName: string): Promise<boolean> {
  return (await db.selectFrom('buckets').select('id').where('storage_name', '=', storageName).executeTakeFirst()) !== undefined;
}

export function listLiveBuckets(db: Db, ownerId: number): Promise<BucketRow[]> {
  return db.selectFrom('buckets').selectAll().where('owner_id', '=', ownerId).where('deleted_at', 'is', null).orderBy('id').execute();
}

export function findOwnLiveBucket(db: Db, ownerId: number, bucketId: number): Promise<BucketRow | undefined> {
  return db.selectFrom('buckets').selectAll().where('id', '=', bucketId).where('owner_id', '=', ownerId).where('deleted_at', 'is', null).executeTakeFirst();
}

export function findOwnLiveBucketByStorageName(db: Db, ownerId: number, storageName: string): Promise<BucketRow | undefined> {
  return db
    .selectFrom('buckets')
    .selectAll()
    .where('storage_name', '=', storageName)
    .where('owner_id', '=', ownerId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/** The owner's live bucket by its name, or else by its storage name (S3 clients may use either). */
export async function findOwnLiveBucketByName(db: Db, ownerId: number, name: string): Promise<BucketRow | undefined> {
  const byName = await db
    .selectFrom('buckets')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('name', '=', name)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return byName ?? findOwnLiveBucketByStorageName(db, ownerId, name);
}

/** A live bucket's limits; undefined when it is gone. */
export type BucketRulesRow = Pick<
  BucketRow,
  'max_file_bytes' | 'allowed_types' | 'versioning' | 'object_lock' | 'lock_default_mode' | 'lock_default_days' | 'lock_default_years'
> & {
  /** Its lifecycle rules' JSON (null: none): the expiry a write tells (domain/lifecycle-expiry.ts). */
  lifecycle_rules: string | null;
};

export function findBucketRules(db: Db, bucketId: number): Promise<BucketRulesRow | undefined> {
  return db
    .selectFrom('buckets')
    .leftJoin('bucket_lifecycle as lifecycle', 'lifecycle.bucket_id', 'buckets.id')
    .select(['max_file_bytes', 'allowed_types', 'versioning', 'object_lock', 'lock_default_mode', 'lock_default_days', 'lock_default_years'])
    .select('lifecycle.rules as lifecycle_rules')
    .where('buckets.id', '=', bucketId)
    .where('buckets.deleted_at', 'is', null)
    .executeTakeFirst();
}

/**
 * Sets a live bucket's versioning: enabled, or suspended once it has been
 * versioned (S3 never takes a bucket back to unversioned; suspending one
 * that never was versioned is as S3: it becomes suspended). The row after,
 * or undefined when it is gone.
 */
/**
 * Sets a live bucket's versioning; undefined when it is gone, or when it would
 * suspend a bucket with object lock (checked in the statement itself, so a
 * lock turned on meanwhile is never missed: lock-changes.ts).
 */
export function setBucketVersioning(db: Db, bucketId: number, versioning: 'enabled' | 'suspended'): Promise<BucketRow | undefined> {
  return db
    .updateTable('buckets')
    .set({ versioning })
    .where('id', '=', bucketId)
    .where('deleted_at', 'is', null)
    .$if(versioning === 'suspended', (q) => q.where('object_lock', '=', 0))
    .returningAll()
    .executeTakeFirst();
}

/** Changes a live bucket's limits (fields absent: unchanged); the row after, or undefined when it is gone. */
export function setBucketLimits(
  db: Db,
  bucketId: number,
  limits: { max_file_bytes?: number | null; allowed_types?: string | null },
): Promise<BucketRow | undefined> {
  return db.updateTable('buckets').set(limits).where('id', '=', bucketId).where('deleted_at', 'is', null).returningAll().executeTakeFirst();
}

/**
 * Sets a live bucket's visibility; making it public only while no public
 * access block forbids it (BlockPublicAcls), in the same statement so that
 * a block saved meanwhile is not slipped past. False when nothing changed:
 * the bucket is gone, or blocked.
 */
export async function setBucketPublic(db: Db, bucketId: number, isPublic: boolean, outbox?: OutboxEvent[]): Promise<boolean> {
  // Issue 39: with webhook events to write, the change and its events share one transaction.
  if (outbox && outbox.length > 0) {
    return db.transaction().execute(async (trx) => {
      const changed = await setBucketPublic(trx, bucketId, isPublic);
      if (changed) await insertOutbox(trx, outbox);
      return changed;
    });
  }
  const result = await db
    .updateTable('buckets')
    .set({ public: isPublic ? 1 : 0 })
    .where('id', '=', bucketId)
    .where('deleted_at', 'is', null)
    .$if(isPublic, (q) =>
      q.where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('bucket_public_access_blocks')
              .select('bucket_id')
              .where('bucket_public_access_blocks.bucket_id', '=', bucketId)
              .where('block_public_acls', '=', 1),
          ),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Marks the owner's live bucket deleted and gives its bytes back to the
 * owner's usage, in one transaction. The bucket as it was, or undefined when
 * there was no such bucket. `guard` (object lock) is asked in the
 * transaction once the bucket's row is locked by the update, which a change
 * of a version's lock takes too (version-locks.ts), so it sees every lock
 * answered as set; it throws to refuse, rolling the deletion back.
 */
export function softDeleteBucket(
  db: Db,
  ownerId: number,
  bucketId: number,
  at: string,
  outbox?: OutboxEvent[],
  guard?: (trx: Db) => Promise<void>,
): Promise<BucketIdentity | undefined> {
  return db.transaction().execute(async (trx) => {
    const bucket = await trx
      .updateTable('buckets')
      .set({ deleted_at: at })
      .where('id', '=', bucketId)
      .where('owner_id', '=', ownerId)
      .where('deleted_at', 'is', null)
      .returning(['id', 'owner_id', 'storage_name', 'total_bytes'])
      .executeTakeFirst();
    if (!bucket) return undefined;
    await guard?.(trx);
    await trx
      .updateTable('users')
      .set((eb) => ({ storage_used_bytes: eb('storage_used_bytes', '-', bucket.total_bytes) }))
      .where('id', '=', ownerId)
      .execute();
    // Issue 39: the webhook events of this change, in its transaction.
    await insertOutbox(trx, outbox);
    return { id: bucket.id, owner_id: bucket.owner_id, storage_name: bucket.storage_name };
  });
}

/** Soft-deleted buckets that still have objects: deletions not finished yet. */
export function bucketsToPurge(db: Db): Promise<BucketIdentity[]> {
  return db
    .selectFrom('buckets')
    .select(['id', 'owner_id', 'storage_name'])
    .where('deleted_at', 'is not', null)
    .where((eb) =>
      eb.or([
        eb.exists(eb.selectFrom('objects').select('bucket_id').whereRef('objects.bucket_id', '=', 'buckets.id')),
        eb.exists(eb.selectFrom('object_versions').select('bucket_id').whereRef('object_versions.bucket_id', '=', 'buckets.id')),
      ]),
    )
    .execute();
}
