/** A bucket's tags (S3's bucket tagging), canonical JSON in buckets.tags (domain/object-tags.ts). */
import type { Db } from '../schema.js';

/** The live bucket's tags; null when it has none (or is gone). */
export async function findBucketTags(db: Db, bucketId: number): Promise<string | null> {
  const row = await db.selectFrom('buckets').select('tags').where('id', '=', bucketId).where('deleted_at', 'is', null).executeTakeFirst();
  return row?.tags ?? null;
}

/** Sets (or, with null, clears) a live bucket's tags. */
export async function saveBucketTags(db: Db, bucketId: number, tags: string | null): Promise<void> {
  await db.updateTable('buckets').set({ tags }).where('id', '=', bucketId).where('deleted_at', 'is', null).execute();
}
