/** Queries on bucket_public_access_blocks: a bucket's four S3 switches, or no row for none. */
import type { BucketPublicAccessBlocksTable, Db } from '../schema.js';

export type PublicAccessBlockRow = Omit<BucketPublicAccessBlocksTable, 'bucket_id'>;

export function findPublicAccessBlock(db: Db, bucketId: number): Promise<PublicAccessBlockRow | undefined> {
  return db
    .selectFrom('bucket_public_access_blocks')
    .select(['block_public_acls', 'ignore_public_acls', 'block_public_policy', 'restrict_public_buckets'])
    .where('bucket_id', '=', bucketId)
    .executeTakeFirst();
}

export async function savePublicAccessBlock(db: Db, bucketId: number, block: PublicAccessBlockRow): Promise<void> {
  await db
    .insertInto('bucket_public_access_blocks')
    .values({ bucket_id: bucketId, ...block })
    .onConflict((conflict) => conflict.column('bucket_id').doUpdateSet(block))
    .execute();
}

export async function deletePublicAccessBlock(db: Db, bucketId: number): Promise<void> {
  await db.deleteFrom('bucket_public_access_blocks').where('bucket_id', '=', bucketId).execute();
}
