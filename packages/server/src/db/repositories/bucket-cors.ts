/** Queries on bucket_cors: a bucket's CORS rules as one JSON text, or no row for none. */
import type { Db } from '../schema.js';

export async function findCorsRules(db: Db, bucketId: number): Promise<string | undefined> {
  const row = await db.selectFrom('bucket_cors').select('rules').where('bucket_id', '=', bucketId).executeTakeFirst();
  return row?.rules;
}

/** The rules of a live bucket named by its storage name (unsigned requests name buckets so); undefined for none or no bucket. */
export async function findCorsRulesByStorageName(db: Db, storageName: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('bucket_cors')
    .innerJoin('buckets', 'buckets.id', 'bucket_cors.bucket_id')
    .select('bucket_cors.rules')
    .where('buckets.storage_name', '=', storageName)
    .where('buckets.deleted_at', 'is', null)
    .executeTakeFirst();
  return row?.rules;
}

export async function saveCorsRules(db: Db, bucketId: number, rules: string): Promise<void> {
  await db
    .insertInto('bucket_cors')
    .values({ bucket_id: bucketId, rules })
    .onConflict((conflict) => conflict.column('bucket_id').doUpdateSet({ rules }))
    .execute();
}

export async function deleteCorsRules(db: Db, bucketId: number): Promise<void> {
  await db.deleteFrom('bucket_cors').where('bucket_id', '=', bucketId).execute();
}
