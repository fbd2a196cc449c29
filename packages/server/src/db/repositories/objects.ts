/** Queries that read objects (writes are per dialect, in ../object-writes/). */
import { sql } from 'kysely';
import type { BucketRow, Db, ObjectRow } from '../schema.js';
import { partKeys } from './multipart.js';
import { startingWith } from '../name-ranges.js';

/** A version whose bytes are to be removed: from the blob store, or (inline) from the database. */
export interface StoredVersion {
  storage_key: string;
  inline: number;
}

/** A version a write removed with its row: its bytes to remove, and what its removal is announced with. */
export interface RemovedVersion extends StoredVersion {
  filename: string;
  size: number;
  etag: string;
}

/**
 * A file found by its bucket (by id, by storage name, or by its owner's name
 * for it) and its name, with what reading it needs of the bucket: its
 * visibility and the switches of its public access block that hide it (null: no block).
 */
export interface ReadableObject {
  bucket: Pick<BucketRow, 'id' | 'owner_id' | 'name' | 'public' | 'storage_name' | 'versioning' | 'object_lock'> & {
    ignore_public_acls: number | null;
    restrict_public_buckets: number | null;
    /** Its lifecycle rules' JSON (null: none), for the expiry a read tells (domain/lifecycle-expiry.ts). */
    lifecycle_rules: string | null;
  };
  object: ObjectRow;
}

/** `ownerName`: an owner's bucket by name or storage name, the name first, as the S3 API names buckets (findOwnLiveBucketByName). */
export type BucketRef = { id: number } | { storageName: string } | { ownerName: { ownerId: number; name: string } };

/**
 * What a listing shows of a file (the Pail API's objectView, S3's Contents). A listing reads up to a thousand rows a
 * page, and the columns it leaves out (metadata, tags, checksums, the version) are the ones a file's own view needs.
 */
export const LISTED_COLUMNS = [
  'filename',
  'storage_key',
  'size',
  'content_type',
  'etag',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof ObjectRow)[];
export type ListedRow = Pick<ObjectRow, (typeof LISTED_COLUMNS)[number]>;

/** Every column of an ObjectRow: name_folded, which only search reads, stays in the table. */
export const OBJECT_COLUMNS = [
  'bucket_id',
  ...LISTED_COLUMNS,
  'inline',
  'metadata',
  'checksums',
  'tags',
  'version_id',
] as const satisfies readonly (keyof ObjectRow)[];

export function findObjectRow(db: Db, bucketId: number, filename: string): Promise<ObjectRow | undefined> {
  return db.selectFrom('objects').select(OBJECT_COLUMNS).where('bucket_id', '=', bucketId).where('filename', '=', filename).executeTakeFirst();
}

/** The rows of those of `filenames` that exist, in byte order of their names. */
export function findObjectRows(db: Db, bucketId: number, filenames: readonly string[]): Promise<ObjectRow[]> {
  if (filenames.length === 0) return Promise.resolve([]);
  return db.selectFrom('objects').select(OBJECT_COLUMNS).where('bucket_id', '=', bucketId).where('filename', 'in', filenames).orderBy('filename').execute();
}

type RowsPage = { prefix: string; after?: string | undefined; from?: string | undefined; limit: number };

/** A page of rows in byte order: names after `after`, or from `from` on (inclusive), that start with `prefix`. */
export function listObjectRows(db: Db, bucketId: number, page: RowsPage): Promise<ObjectRow[]> {
  return pageOfRows(db, bucketId, page).select(OBJECT_COLUMNS).execute();
}

/** The same page, with only what a listing shows of each file. */
export function listListedRows(db: Db, bucketId: number, page: RowsPage): Promise<ListedRow[]> {
  return pageOfRows(db, bucketId, page).select(LISTED_COLUMNS).execute();
}

function pageOfRows(db: Db, bucketId: number, page: RowsPage) {
  let q = db.selectFrom('objects').where('bucket_id', '=', bucketId);
  q = q.$call(startingWith('filename', page.prefix));
  if (page.after !== undefined) q = q.where('filename', '>', page.after);
  if (page.from !== undefined) q = q.where('filename', '>=', page.from);
  return q.orderBy('filename').limit(page.limit);
}

/**
 * A live bucket and, if it holds one, the file of that name, in one query:
 * the hottest read of the service. Null when the bucket does not exist;
 * `object: null` when the file does not.
 */
export async function findBucketAndObject(
  db: Db,
  bucketRef: BucketRef,
  filename: string,
): Promise<{ bucket: ReadableObject['bucket']; object: ObjectRow | null } | null> {
  const row = await db
    .selectFrom('buckets')
    .leftJoin('objects', (join) => join.onRef('objects.bucket_id', '=', 'buckets.id').on('objects.filename', '=', filename))
    .leftJoin('bucket_public_access_blocks as block', 'block.bucket_id', 'buckets.id')
    // A lookup by primary key that finds nothing for a bucket without rules: no second query on the hottest read.
    .leftJoin('bucket_lifecycle as lifecycle', 'lifecycle.bucket_id', 'buckets.id')
    .select([
      'buckets.id as bucket_id',
      'buckets.owner_id',
      'buckets.name',
      'buckets.public',
      'buckets.storage_name',
      'buckets.versioning',
      'buckets.object_lock',
      'block.ignore_public_acls',
      'block.restrict_public_buckets',
      'lifecycle.rules as lifecycle_rules',
      'objects.storage_key',
      'objects.size',
      'objects.content_type',
      'objects.etag',
      'objects.created_at',
      'objects.updated_at',
      'objects.inline',
      'objects.metadata',
      'objects.checksums',
      'objects.tags',
      'objects.version_id',
    ])
    .$if('id' in bucketRef, (q) => q.where('buckets.id', '=', (bucketRef as { id: number }).id))
    .$if('storageName' in bucketRef, (q) => q.where('buckets.storage_name', '=', (bucketRef as { storageName: string }).storageName))
    .$if('ownerName' in bucketRef, (q) => {
      const { ownerId, name } = (bucketRef as { ownerName: { ownerId: number; name: string } }).ownerName;
      return q
        .where('buckets.owner_id', '=', ownerId)
        .where((eb) => eb.or([eb('buckets.name', '=', name), eb('buckets.storage_name', '=', name)]))
        .orderBy(sql`case when ${sql.ref('buckets.name')} = ${name} then 0 else 1 end`);
    })
    .where('buckets.deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) return null;
  const bucket = {
    id: row.bucket_id,
    owner_id: row.owner_id,
    name: row.name,
    public: row.public,
    storage_name: row.storage_name,
    versioning: row.versioning,
    object_lock: row.object_lock,
    ignore_public_acls: row.ignore_public_acls,
    restrict_public_buckets: row.restrict_public_buckets,
    lifecycle_rules: row.lifecycle_rules,
  };
  if (row.storage_key === null) return { bucket, object: null };
  return {
    bucket,
    object: {
      bucket_id: row.bucket_id,
      filename,
      storage_key: row.storage_key,
      size: row.size as number,
      content_type: row.content_type as string,
      etag: row.etag as string,
      created_at: row.created_at as string,
      updated_at: row.updated_at as string,
      inline: row.inline as number,
      metadata: row.metadata,
      checksums: row.checksums,
      tags: row.tags,
      version_id: row.version_id,
    },
  };
}

/** Which of these names hold a file in the bucket. */
export async function takenNames(db: Db, bucketId: number, filenames: string[]): Promise<Set<string>> {
  if (filenames.length === 0) return new Set();
  const rows = await db.selectFrom('objects').select('filename').where('bucket_id', '=', bucketId).where('filename', 'in', filenames).execute();
  return new Set(rows.map((row) => row.filename));
}

/** The next versions of a deleted bucket to remove. */
export function versionsToPurge(db: Db, bucketId: number, limit: number): Promise<StoredVersion[]> {
  return db.selectFrom('objects').select(['storage_key', 'inline']).where('bucket_id', '=', bucketId).orderBy('filename').limit(limit).execute();
}

/** Which of these storage keys some object, or a kept multipart part, still refers to. */
export async function referencedKeys(db: Db, storageKeys: string[]): Promise<Set<string>> {
  if (storageKeys.length === 0) return new Set();
  const rows = await db.selectFrom('objects').select('storage_key').where('storage_key', 'in', storageKeys).execute();
  // A noncurrent version keeps its bytes too (migration 0020).
  const kept = await db.selectFrom('object_versions').select('storage_key').where('storage_key', 'in', storageKeys).execute();
  return new Set([
    ...rows.map((row) => row.storage_key),
    ...kept.flatMap((row) => (row.storage_key === null ? [] : [row.storage_key])),
    ...(await partKeys(db, storageKeys)),
  ]);
}

/** The version the multipart upload `uploadId` made, while it is the file's current one: what a repeated completion answers with. */
export function findCompletedBy(
  db: Db,
  bucketId: number,
  filename: string,
  uploadId: string,
): Promise<Pick<ObjectRow, 'size' | 'etag' | 'checksums' | 'tags' | 'updated_at'> | undefined> {
  return db
    .selectFrom('objects')
    .select(['size', 'etag', 'checksums', 'tags', 'updated_at'])
    .where('bucket_id', '=', bucketId)
    .where('filename', '=', filename)
    .where('upload_id', '=', uploadId)
    .executeTakeFirst();
}

/** The parts (JSON) kept with the version stored under `storageKey`: null when it has none (or is no longer the file's). */
export async function findObjectParts(db: Db, bucketId: number, filename: string, storageKey: string): Promise<string | null> {
  const row = await db
    .selectFrom('objects')
    .select('parts')
    .where('bucket_id', '=', bucketId)
    .where('filename', '=', filename)
    .where('storage_key', '=', storageKey)
    .executeTakeFirst();
  return row?.parts ?? null;
}
