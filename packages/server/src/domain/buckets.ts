/**
 * Buckets: create, list, get, change visibility, delete. A caller only ever
 * sees its own live buckets; anything else is "Bucket not found".
 */
import { bucketNameProblem, type StorageBucket } from '@pail/shared';
import { randomBytes } from 'node:crypto';
import type { LRUCache } from 'lru-cache';
import type { Db } from '../db/database.js';
import type { BucketRow } from '../db/schema.js';
import { nowIso } from './clock.js';
import { errors } from './errors.js';

export function bucketView(row: BucketRow): StorageBucket {
  return {
    id: row.id,
    name: row.name,
    public: row.public === 1,
    object_count: row.object_count,
    total_bytes: row.total_bytes,
    created_at: row.created_at,
  };
}

/** Bucket ids in paths are positive integers; anything else cannot name a bucket. */
export function parseBucketId(raw: string): number | null {
  if (!/^[1-9][0-9]{0,15}$/.test(raw)) return null;
  return Number(raw);
}

/** `visibility` and `public` are two ways to say one thing; together they must agree. */
export function parseVisibility(body: Record<string, unknown>, required: boolean): boolean | undefined {
  const { visibility, public: isPublic } = body;
  if (visibility !== undefined && visibility !== 'public' && visibility !== 'private') {
    throw errors.validation('visibility must be "public" or "private"');
  }
  if (isPublic !== undefined && typeof isPublic !== 'boolean') throw errors.validation('public must be true or false');
  const fromVisibility = visibility === undefined ? undefined : visibility === 'public';
  if (fromVisibility !== undefined && isPublic !== undefined && fromVisibility !== isPublic) {
    throw errors.validation('visibility and public contradict each other');
  }
  const result = fromVisibility ?? isPublic;
  if (required && result === undefined) throw errors.validation('visibility is required: "public" or "private"');
  return result;
}

export async function createBucket(db: Db, ownerId: number, body: Record<string, unknown>): Promise<StorageBucket> {
  const problem = bucketNameProblem(body.name);
  if (problem) throw errors.validation(problem);
  const name = body.name as string;
  const isPublic = parseVisibility(body, false) ?? false;
  const live = await findLiveBucketByName(db, ownerId, name);
  if (live) throw errors.bucketNameTaken();
  try {
    const row = await db
      .insertInto('buckets')
      .values({
        owner_id: ownerId,
        name,
        // Globally unique and never reused, so a URL or blob key can never point at another bucket.
        storage_name: `${name}-${randomBytes(6).toString('hex')}`,
        public: isPublic ? 1 : 0,
        created_at: nowIso(),
        deleted_at: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return bucketView(row);
  } catch (error) {
    // Two creates racing for one name: the partial unique index decides.
    if (await findLiveBucketByName(db, ownerId, name)) throw errors.bucketNameTaken();
    throw error;
  }
}

function findLiveBucketByName(db: Db, ownerId: number, name: string) {
  return db
    .selectFrom('buckets')
    .select('id')
    .where('owner_id', '=', ownerId)
    .where('name', '=', name)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function listBuckets(db: Db, ownerId: number): Promise<StorageBucket[]> {
  const rows = await db
    .selectFrom('buckets')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .execute();
  return rows.map(bucketView);
}

/** What an upload needs of a bucket: fields fixed when it is created. */
export type BucketIdentity = Pick<BucketRow, 'id' | 'owner_id' | 'storage_name'>;

/**
 * The caller's bucket for an upload, or BucketNotFound (also for other owners'
 * buckets). Its identity never changes, so it is cached per (owner, id)
 * without invalidation; whether the bucket is still live is checked again by
 * the upload's commit, which answers Bucket not found if it was deleted.
 */
export async function ownBucketForUpload(
  ports: { db: Db; bucketIdentities: LRUCache<string, BucketIdentity> },
  ownerId: number,
  rawId: string,
): Promise<BucketIdentity> {
  const cacheKey = `${ownerId}/${rawId}`;
  const cached = ports.bucketIdentities.get(cacheKey);
  if (cached) return cached;
  const { id, owner_id, storage_name } = await getOwnBucket(ports.db, ownerId, rawId);
  const identity = { id, owner_id, storage_name };
  ports.bucketIdentities.set(cacheKey, identity);
  return identity;
}

/** The caller's live bucket, or BucketNotFound (also for other owners' buckets). */
export async function getOwnBucket(db: Db, ownerId: number, rawId: string): Promise<BucketRow> {
  const id = parseBucketId(rawId);
  if (id === null) throw errors.bucketNotFound();
  const row = await db
    .selectFrom('buckets')
    .selectAll()
    .where('id', '=', id)
    .where('owner_id', '=', ownerId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) throw errors.bucketNotFound();
  return row;
}

export async function setVisibility(
  ports: { db: Db; lookups: { invalidate(): Promise<void> } | null },
  ownerId: number,
  rawId: string,
  body: Record<string, unknown>,
): Promise<void> {
  const { db } = ports;
  const isPublic = parseVisibility(body, true);
  const bucket = await getOwnBucket(db, ownerId, rawId);
  await db
    .updateTable('buckets')
    .set({ public: isPublic ? 1 : 0 })
    .where('id', '=', bucket.id)
    .where('deleted_at', 'is', null)
    .execute();
  await ports.lookups?.invalidate();
}
