/**
 * Files in buckets. A large file's bytes go to a new, unique blob key first;
 * then one transaction records the row, moves the bucket's counts and the
 * owner's usage (checked against the plan's cap in the same conditional
 * update) and retires the replaced version. A small file's bytes are written
 * in that same transaction (blob/inline-blobs.ts). A crash anywhere leaves the
 * old version or the new one, and at worst an unreferenced blob in the store
 * that garbage collection removes later.
 */
import { filenameProblem, type BucketObject, type UploadResult } from '@pail/shared';
import { randomUUID } from 'node:crypto';
import type { LRUCache } from 'lru-cache';
import type { Readable } from 'node:stream';
import { BlobTooLargeError, type BlobStore } from '../blob/blob-store.js';
import { contentHashOf } from '../blob/content-hash.js';
import { deleteInlineBlobs, readInlineBlob, takeSmallBody } from '../blob/inline-blobs.js';
import type { Db } from '../db/database.js';
import type { Dialect } from '../db/migrations.js';
import type { BucketRow, ObjectRow, UserRow } from '../db/schema.js';
import type { SqliteWriter } from '../db/sqlite-writer.js';
import type { BucketIdentity } from './buckets.js';
import { errors } from './errors.js';
import type { MetadataCache } from './metadata-cache.js';
import { commitUpload, lockLiveBucket, type RetiredVersion, type StoredBytes } from './object-commits.js';
import type { ObjectCache } from './object-cache.js';
import { planOf, type PlanLimits } from './users.js';

export interface ObjectPorts {
  db: Db;
  dialect: Dialect;
  /** The embedded SQLite backend's grouped writes (db/sqlite-writer.ts); null on PostgreSQL. */
  writer: SqliteWriter | null;
  blobs: BlobStore;
  cache: ObjectCache;
  /** Buckets' fixed identities for uploads (buckets.ts: ownBucketForUpload). */
  bucketIdentities: LRUCache<string, BucketIdentity>;
  /** Object lookups kept in memory; null on PostgreSQL without Redis (see metadata-cache.ts). */
  lookups: MetadataCache<ReadableObject> | null;
  plans: PlanLimits;
  maxFileBytes: number;
  /** Files up to this size keep their bytes in the database; 0: every file goes to the blob store. */
  inlineMaxBytes: number;
  /** `<public_url>/storage`: the host part of every object's `url`. */
  storageHost: string;
}

export const MAX_PAGE_SIZE = 1000;
/** Uploads of a declared size up to this go straight to the store; the commit checks the cap. */
const PRECHECK_ABOVE_BYTES = 1024 * 1024;

export function parseFilename(raw: string): string {
  const problem = filenameProblem(raw);
  if (problem) throw errors.validation(problem);
  return raw;
}

export function objectUrl(storageHost: string, storageName: string, filename: string): string {
  return `${storageHost}/${storageName}/${encodeURIComponent(filename)}`;
}

export function objectView(storageHost: string, bucket: Pick<BucketRow, 'id' | 'storage_name'>, row: ObjectRow): BucketObject {
  return {
    id: `${bucket.id}/${row.filename}`,
    bucket_id: bucket.id,
    storage_name: row.storage_key,
    filename: row.filename,
    size: row.size,
    content_type: row.content_type,
    url: objectUrl(storageHost, bucket.storage_name, row.filename),
    created_at: row.created_at,
  };
}

export interface UploadInput {
  owner: UserRow;
  bucket: BucketIdentity;
  filename: string;
  body: Readable;
  contentType: string;
  /** From Content-Length when the client sent one: lets hopeless uploads fail before any byte is stored. */
  declaredSize?: number;
  /** The body is the raw request: its chunks are this upload's alone (PutOptions.releaseChunks). */
  rawRequestBody?: boolean;
}

export async function uploadObject(ports: ObjectPorts, input: UploadInput): Promise<UploadResult> {
  const { owner, bucket, filename } = input;
  const plan = planOf(owner);
  const cap = ports.plans[plan].storageBytes;
  if (input.declaredSize !== undefined && input.declaredSize > ports.maxFileBytes) {
    throw errors.fileTooLarge(ports.maxFileBytes);
  }
  // Room left under the cap, counting the replaced file's bytes as freed. Only a
  // guide to stop a doomed large upload early; the commit below is the real
  // check, so small uploads of a known size skip the two lookups.
  let maxBytes = ports.maxFileBytes;
  if (input.declaredSize === undefined || input.declaredSize > PRECHECK_ABOVE_BYTES) {
    const existing = await findObjectRow(ports.db, bucket.id, filename);
    const usage = await ports.db.selectFrom('users').select('storage_used_bytes').where('id', '=', owner.id).executeTakeFirst();
    const headroom = Math.max(0, cap - (usage?.storage_used_bytes ?? 0) + (existing?.size ?? 0));
    if (input.declaredSize !== undefined && input.declaredSize > headroom) throw errors.storageLimit(plan, cap);
    maxBytes = Math.min(maxBytes, headroom);
  }

  const tooLarge = () => (maxBytes === ports.maxFileBytes ? errors.fileTooLarge(ports.maxFileBytes) : errors.storageLimit(plan, cap));
  const storageKey = `${bucket.storage_name}/${timeOrderedUuid()}`;
  // A body that may be small is read that far first; a longer one carries on to the store.
  const body =
    input.declaredSize !== undefined && input.declaredSize > ports.inlineMaxBytes
      ? { stream: input.body }
      : await takeSmallBody(input.body, Math.min(ports.inlineMaxBytes, maxBytes));
  let stored: StoredBytes;
  if ('small' in body) {
    if (body.small.length > maxBytes) throw tooLarge();
    stored = { size: body.small.length, contentHash: await contentHashOf(body.small), inlineBytes: body.small };
  } else {
    try {
      stored = await ports.blobs.put(storageKey, body.stream, { maxBytes, contentType: input.contentType, releaseChunks: input.rawRequestBody === true });
    } catch (error) {
      throw error instanceof BlobTooLargeError ? tooLarge() : error;
    }
  }

  try {
    const replaced = await commitUpload(ports, { ownerId: owner.id, cap, plan, bucketId: bucket.id, filename, storageKey, contentType: input.contentType, ...stored });
    await ports.lookups?.invalidate();
    if (replaced) await retireBlobs(ports, [replaced]);
    return { filename, size: stored.size, updated: replaced !== null };
  } catch (error) {
    if (!stored.inlineBytes) await ports.blobs.delete([storageKey]).catch(() => {});
    throw error;
  }
}

export function findObjectRow(db: Db, bucketId: number, filename: string): Promise<ObjectRow | undefined> {
  return db.selectFrom('objects').selectAll().where('bucket_id', '=', bucketId).where('filename', '=', filename).executeTakeFirst();
}

export interface ListQuery {
  prefix?: string;
  limit?: string;
  cursor?: string;
}

export async function listObjects(
  ports: Pick<ObjectPorts, 'db' | 'storageHost'>,
  bucket: BucketRow,
  query: ListQuery,
): Promise<{ objects: BucketObject[]; nextCursor: string | null }> {
  const limit = parseLimit(query.limit);
  const after = query.cursor === undefined || query.cursor === '' ? undefined : decodeCursor(query.cursor);
  const prefix = query.prefix ?? '';
  let q = ports.db.selectFrom('objects').selectAll().where('bucket_id', '=', bucket.id);
  if (prefix !== '') {
    // A range the index can use: every string that starts with `prefix` sorts in [prefix, prefix + U+10FFFF).
    q = q.where('filename', '>=', prefix).where('filename', '<', `${prefix}\u{10FFFF}`);
  }
  if (after !== undefined) q = q.where('filename', '>', after);
  const rows = await q.orderBy('filename').limit(limit + 1).execute();
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    objects: page.map((row) => objectView(ports.storageHost, bucket, row)),
    nextCursor: rows.length > limit && last ? encodeCursor(last.filename) : null,
  };
}

function parseLimit(raw: string | undefined): number {
  if (raw === undefined || raw === '') return MAX_PAGE_SIZE;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_PAGE_SIZE) {
    throw errors.validation(`limit must be a whole number from 1 to ${MAX_PAGE_SIZE}`);
  }
  return Number(raw);
}

const encodeCursor = (filename: string): string => Buffer.from(filename, 'utf8').toString('base64url');

function decodeCursor(cursor: string): string {
  const filename = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[A-Za-z0-9_-]+$/.test(cursor) || filename === '' || encodeCursor(filename) !== cursor) {
    throw errors.validation('cursor is not valid; pass next_cursor from the previous page');
  }
  return filename;
}

export async function deleteObject(ports: ObjectPorts, bucket: BucketRow, filename: string): Promise<void> {
  const removed = await ports.db.transaction().execute(async (trx) => {
    // Same lock order as commitUpload (bucket row, then object row), so a
    // delete racing an overwrite of one file waits instead of deadlocking.
    await lockLiveBucket(trx, ports.dialect, bucket.id);
    const old = await trx
      .deleteFrom('objects')
      .where('bucket_id', '=', bucket.id)
      .where('filename', '=', filename)
      .returning(['storage_key', 'size', 'inline'])
      .executeTakeFirst();
    if (!old) throw errors.fileNotFound();
    if (old.inline) await deleteInlineBlobs(trx, [old.storage_key]);
    const counted = await trx
      .updateTable('buckets')
      .set((eb) => ({ object_count: eb('object_count', '-', 1), total_bytes: eb('total_bytes', '-', old.size) }))
      .where('id', '=', bucket.id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    // A bucket deleted meanwhile already gave back its bytes: roll back rather than count them twice.
    if (Number(counted.numUpdatedRows) === 0) throw errors.bucketNotFound();
    await trx
      .updateTable('users')
      .set((eb) => ({ storage_used_bytes: eb('storage_used_bytes', '-', old.size) }))
      .where('id', '=', bucket.owner_id)
      .execute();
    return old;
  });
  await ports.lookups?.invalidate();
  await retireBlobs(ports, [removed]);
}

/**
 * Forgets retired versions' cached bytes and removes those in the blob store
 * (inline bytes already left in the transaction that retired them). Best
 * effort: a blob that survives this (crash, store outage) is found by garbage
 * collection.
 */
export async function retireBlobs(ports: Pick<ObjectPorts, 'blobs' | 'cache'>, versions: RetiredVersion[]): Promise<void> {
  ports.cache.delete(versions.map((version) => version.storage_key));
  const inStore = versions.filter((version) => !version.inline).map((version) => version.storage_key);
  if (inStore.length > 0) await ports.blobs.delete(inStore).catch(() => {});
}

/** A small file's whole content: from the memory cache, else from the database or the blob store. */
export async function readSmallObject(ports: Pick<ObjectPorts, 'db' | 'blobs' | 'cache'>, object: ObjectRow): Promise<Buffer> {
  const cached = ports.cache.get(object.storage_key);
  if (cached) return cached;
  const bytes = object.inline ? await readInlineBlob(ports.db, object.storage_key) : await ports.blobs.read(object.storage_key);
  ports.cache.set(object.storage_key, bytes);
  return bytes;
}

export interface ReadableObject {
  bucket: Pick<BucketRow, 'id' | 'owner_id' | 'public' | 'storage_name'>;
  object: ObjectRow;
}

/**
 * A file the caller may read: in its own bucket, or in any public bucket.
 * Other owners' private buckets are "Bucket not found", as if absent (and
 * 401 for a caller with no credentials at all). One
 * query, because this is the hottest path of the service.
 */
export async function findReadable(
  ports: Pick<ObjectPorts, 'db' | 'lookups'>,
  bucketRef: { id: number } | { storageName: string },
  filename: string,
  callerId: number | null,
): Promise<ReadableObject> {
  const cacheKey = 'id' in bucketRef ? `i${bucketRef.id}/${filename}` : `s${bucketRef.storageName}/${filename}`;
  const cached = ports.lookups?.get(cacheKey);
  const found = cached ?? (await lookUpReadable(ports, cacheKey, bucketRef, filename));
  if (!found || (found.bucket.public !== 1 && found.bucket.owner_id !== callerId)) {
    // Without credentials the answer is "show a key" whether the bucket is private or absent, which leaks nothing.
    throw callerId === null ? errors.unauthorized() : errors.bucketNotFound();
  }
  if (found.object === null) throw errors.fileNotFound();
  return found as ReadableObject;
}

async function lookUpReadable(
  ports: Pick<ObjectPorts, 'db' | 'lookups'>,
  cacheKey: string,
  bucketRef: { id: number } | { storageName: string },
  filename: string,
): Promise<{ bucket: ReadableObject['bucket']; object: ObjectRow | null } | null> {
  const mark = ports.lookups?.mark() ?? 0;
  const row = await ports.db
    .selectFrom('buckets')
    .leftJoin('objects', (join) => join.onRef('objects.bucket_id', '=', 'buckets.id').on('objects.filename', '=', filename))
    .select([
      'buckets.id as bucket_id',
      'buckets.owner_id',
      'buckets.public',
      'buckets.storage_name',
      'objects.storage_key',
      'objects.size',
      'objects.content_type',
      'objects.etag',
      'objects.created_at',
      'objects.updated_at',
      'objects.inline',
    ])
    .$if('id' in bucketRef, (q) => q.where('buckets.id', '=', (bucketRef as { id: number }).id))
    .$if('storageName' in bucketRef, (q) => q.where('buckets.storage_name', '=', (bucketRef as { storageName: string }).storageName))
    .where('buckets.deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) return null;
  const bucket = { id: row.bucket_id, owner_id: row.owner_id, public: row.public, storage_name: row.storage_name };
  if (row.storage_key === null) return { bucket, object: null };
  const found: ReadableObject = {
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
    },
  };
  ports.lookups?.set(cacheKey, found, mark);
  return found;
}

/**
 * A UUIDv7 (RFC 9562): the time in milliseconds, then random bits. Storage
 * keys are made of these so that new keys land at the end of the storage-key
 * indexes instead of on a random page of each. Measured with W4's 4 KiB
 * uploads into a database already holding 100,000 files: 19 KB written per
 * upload instead of 30, and ~25% less CPU. Built from Node's randomUUID
 * (version 4, drawn from a cache of random bytes) because the uuid package's
 * v7 asks for fresh random bytes on every call: 2% of an upload's CPU.
 */
function timeOrderedUuid(): string {
  const time = Date.now().toString(16).padStart(12, '0');
  // randomUUID(): xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx; keep its random bits after the version digit.
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${randomUUID().slice(15)}`;
}
