/** Files in buckets: their names, their views, listing, finding one to read, deleting. */
import { filenameProblem, type BucketObject } from '@pail/shared';
import { WriteRefused } from '../db/object-writes/object-writes.js';
import { findBucketAndObject, listObjectRows, type BucketRef, type ReadableObject } from '../db/repositories/objects.js';
import type { BucketRow, ObjectRow } from '../db/schema.js';
import { errors } from './errors.js';
import { retireVersions } from './object-bytes.js';
import type { StoragePorts } from './ports.js';

export type { ReadableObject };

export const MAX_PAGE_SIZE = 1000;

export function parseFilename(raw: string): string {
  const problem = filenameProblem(raw);
  if (problem) throw errors.validation(problem);
  return raw;
}

export function objectView(storageHost: string, bucket: Pick<BucketRow, 'id' | 'storage_name'>, row: ObjectRow): BucketObject {
  return {
    id: `${bucket.id}/${row.filename}`,
    bucket_id: bucket.id,
    storage_name: row.storage_key,
    filename: row.filename,
    size: row.size,
    content_type: row.content_type,
    url: `${storageHost}/${bucket.storage_name}/${encodeURIComponent(row.filename)}`,
    created_at: row.created_at,
  };
}

export interface ListQuery {
  prefix?: string;
  limit?: string;
  cursor?: string;
}

export async function listObjects(
  ports: Pick<StoragePorts, 'db' | 'storageHost'>,
  bucket: BucketRow,
  query: ListQuery,
): Promise<{ objects: BucketObject[]; nextCursor: string | null }> {
  const limit = parseLimit(query.limit);
  const after = query.cursor === undefined || query.cursor === '' ? undefined : decodeCursor(query.cursor);
  const rows = await listObjectRows(ports.db, bucket.id, { prefix: query.prefix ?? '', after, limit: limit + 1 });
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

export async function deleteObject(ports: StoragePorts, bucket: BucketRow, filename: string): Promise<void> {
  let removed;
  try {
    removed = await ports.writes.deleteVersion(bucket, filename);
  } catch (error) {
    if (error instanceof WriteRefused) throw error.refusal === 'no-file' ? errors.fileNotFound() : errors.bucketNotFound();
    throw error;
  }
  await ports.caches.changed('objects');
  await retireVersions(ports, [removed]);
}

/**
 * A file the caller may read: in its own bucket, or in any public bucket.
 * Other owners' private buckets are "Bucket not found", as if absent (and 401
 * for a caller with no credentials at all). One query, or none when cached:
 * this is the hottest path of the service.
 */
export async function findReadable(
  ports: Pick<StoragePorts, 'db' | 'caches'>,
  bucketRef: BucketRef,
  filename: string,
  callerId: number | null,
): Promise<ReadableObject> {
  const cache = ports.caches.objects;
  const cacheKey = 'id' in bucketRef ? `i${bucketRef.id}/${filename}` : `s${bucketRef.storageName}/${filename}`;
  let found: { bucket: ReadableObject['bucket']; object: ObjectRow | null } | null | undefined = cache?.get(cacheKey);
  if (!found) {
    const mark = cache?.mark() ?? 0;
    found = await findBucketAndObject(ports.db, bucketRef, filename);
    if (found?.object) cache?.set(cacheKey, found as ReadableObject, mark);
  }
  if (!found || (found.bucket.public !== 1 && found.bucket.owner_id !== callerId)) {
    // Without credentials the answer is "show a key" whether the bucket is private or absent, which leaks nothing.
    throw callerId === null ? errors.unauthorized() : errors.bucketNotFound();
  }
  if (found.object === null) throw errors.fileNotFound();
  return found as ReadableObject;
}
