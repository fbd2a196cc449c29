/**
 * A user's unfinished uploads as the user sees them (decisions.md, "Plans,
 * storage caps, rate limits"): resumable uploads in progress and S3 multipart
 * uploads not yet completed or aborted, each with what it holds against the
 * cap. Read-only: what the cap checks count is holdings.ts's, under the
 * owner's row lock; these reads take no lock and count two of its terms (a
 * resumable upload's declared length, a multipart upload's kept parts).
 */
import { sql } from 'kysely';
import type { Db } from '../schema.js';
import { heldTerms } from './holdings.js';

/** At most this many of each kind are listed, newest first (an owner with more cancels some, or waits for expiry). */
export const UNFINISHED_LIST_LIMIT = 1000;

export interface UnfinishedResumableRow {
  id: string;
  bucket_id: number;
  bucket_name: string;
  storage_name: string;
  filename: string;
  content_type: string;
  length: number;
  received: number;
  created_at: string;
  updated_at: string;
}

export interface UnfinishedMultipartRow {
  id: string;
  bucket_id: number;
  bucket_name: string;
  storage_name: string;
  filename: string;
  content_type: string;
  /** Bytes of its kept parts. */
  bytes: number;
  parts: number;
  created_at: string;
  /** When its last part was kept; null when it has none. */
  last_part_at: string | null;
}

/** The owner's resumable uploads (in these buckets only, when `bucketIds` is given), newest first. */
export async function resumableUploadsOf(db: Db, ownerId: number, bucketIds: readonly number[] | null, id?: string): Promise<UnfinishedResumableRow[]> {
  if (bucketIds !== null && bucketIds.length === 0) return [];
  const rows = await db
    .selectFrom('resumable_uploads')
    .innerJoin('buckets', 'buckets.id', 'resumable_uploads.bucket_id')
    .select([
      'resumable_uploads.id',
      'resumable_uploads.bucket_id',
      'buckets.name as bucket_name',
      'buckets.storage_name',
      'resumable_uploads.filename',
      'resumable_uploads.content_type',
      'resumable_uploads.length',
      'resumable_uploads.received',
      'resumable_uploads.created_at',
      'resumable_uploads.updated_at',
    ])
    .where('resumable_uploads.owner_id', '=', ownerId)
    .$if(bucketIds !== null, (q) => q.where('resumable_uploads.bucket_id', 'in', bucketIds!))
    .$if(id !== undefined, (q) => q.where('resumable_uploads.id', '=', id!))
    .orderBy('resumable_uploads.created_at', 'desc')
    .orderBy('resumable_uploads.id')
    .limit(UNFINISHED_LIST_LIMIT)
    .execute();
  return rows.map((row) => ({ ...row, length: Number(row.length), received: Number(row.received) }));
}

/** The owner's multipart uploads with their kept parts' bytes (in these buckets only, when `bucketIds` is given), newest first. */
export async function multipartUploadsOf(db: Db, ownerId: number, bucketIds: readonly number[] | null, id?: string): Promise<UnfinishedMultipartRow[]> {
  if (bucketIds !== null && bucketIds.length === 0) return [];
  const rows = await db
    .selectFrom('multipart_uploads')
    .innerJoin('buckets', 'buckets.id', 'multipart_uploads.bucket_id')
    .leftJoin('multipart_parts', 'multipart_parts.upload_id', 'multipart_uploads.id')
    .select((eb) => [
      'multipart_uploads.id',
      'multipart_uploads.bucket_id',
      'buckets.name as bucket_name',
      'buckets.storage_name',
      'multipart_uploads.filename',
      'multipart_uploads.content_type',
      'multipart_uploads.created_at',
      eb.fn.coalesce(eb.fn.sum<number | string>('multipart_parts.size'), eb.lit(0)).as('bytes'),
      eb.fn.count<number | string>('multipart_parts.part_number').as('parts'),
      eb.fn.max('multipart_parts.created_at').as('last_part_at'),
    ])
    .where('multipart_uploads.owner_id', '=', ownerId)
    .$if(bucketIds !== null, (q) => q.where('multipart_uploads.bucket_id', 'in', bucketIds!))
    .$if(id !== undefined, (q) => q.where('multipart_uploads.id', '=', id!))
    // Grouped by both primary keys, so every other column depends on the group (PostgreSQL asks that).
    .groupBy(['multipart_uploads.id', 'buckets.id'])
    .orderBy('multipart_uploads.created_at', 'desc')
    .orderBy('multipart_uploads.id')
    .limit(UNFINISHED_LIST_LIMIT)
    .execute();
  return rows.map((row) => ({ ...row, bytes: Number(row.bytes), parts: Number(row.parts), last_part_at: row.last_part_at ?? null }));
}

/**
 * Bytes the owner's unfinished uploads hold: the cap's own terms for resumable
 * uploads' declared lengths and multipart uploads' kept parts (holdings.ts).
 * The cap also counts reservations of uploads still streaming, which are not
 * unfinished uploads: a request holds them only while it runs.
 */
export async function unfinishedHeldBytes(db: Db, ownerId: number): Promise<number> {
  const p = { user: sql.val(ownerId) };
  const held = await db.selectNoFrom([heldTerms.resumable(db, p).as('resumable'), heldTerms.parts(db, p).as('parts')]).executeTakeFirstOrThrow();
  return Number(held.resumable) + Number(held.parts);
}
