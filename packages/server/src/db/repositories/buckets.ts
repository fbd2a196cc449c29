/** Queries on buckets. A bucket is live until deleted_at is set; only live buckets are found. */
import type { BucketIdentity, BucketRow, Db } from '../schema.js';

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
export function findBucketRules(db: Db, bucketId: number): Promise<Pick<BucketRow, 'max_file_bytes' | 'allowed_types'> | undefined> {
  return db.selectFrom('buckets').select(['max_file_bytes', 'allowed_types']).where('id', '=', bucketId).where('deleted_at', 'is', null).executeTakeFirst();
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
export async function setBucketPublic(db: Db, bucketId: number, isPublic: boolean): Promise<boolean> {
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
 * there was no such bucket.
 */
export function softDeleteBucket(db: Db, ownerId: number, bucketId: number, at: string): Promise<BucketIdentity | undefined> {
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
    await trx
      .updateTable('users')
      .set((eb) => ({ storage_used_bytes: eb('storage_used_bytes', '-', bucket.total_bytes) }))
      .where('id', '=', ownerId)
      .execute();
    return { id: bucket.id, owner_id: bucket.owner_id, storage_name: bucket.storage_name };
  });
}

/** Soft-deleted buckets that still have objects: deletions not finished yet. */
export function bucketsToPurge(db: Db): Promise<BucketIdentity[]> {
  return db
    .selectFrom('buckets')
    .select(['id', 'owner_id', 'storage_name'])
    .where('deleted_at', 'is not', null)
    .where((eb) => eb.exists(eb.selectFrom('objects').select('bucket_id').whereRef('objects.bucket_id', '=', 'buckets.id')))
    .execute();
}
