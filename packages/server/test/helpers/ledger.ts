/**
 * The books a test closes after clients did their worst: every count equals
 * what a listing shows (kept versions included), and every byte in the blob
 * store belongs to a file, a kept version or a kept part (none uncounted,
 * none missing). Read through the running
 * server's own database handle and blob store, on either backend.
 */
import type { Kysely } from 'kysely';
import { expect } from 'vitest';
import type { BlobStore } from '../../src/blob/blob-store.js';
import { STAGING_PREFIX } from '../../src/blob/staging.js';
import type { Database } from '../../src/db/schema.js';
import type { TestServer } from './server.js';

/** What the books are read from: a server's database and blob store (its own handles, or ones opened beside a child process). */
export interface BookSource {
  db: Kysely<Database>;
  blobs: BlobStore;
}

const sourceOf = (from: TestServer | BookSource): BookSource => ('app' in from ? { db: from.app.pail.db, blobs: from.app.pail.storage.blobs } : from);

export interface Books {
  usedBytes: number;
  listedBytes: number;
  /** Each bucket's counts beside what its rows hold: `listedBytes` counts every version kept, `keptBytes` the noncurrent ones. */
  bucketCounts: { id: number; object_count: number; listed: number; total_bytes: number; listedBytes: number; noncurrent_bytes: number; keptBytes: number }[];
  /** Blob keys no live row names. */
  uncounted: string[];
  /** Keys rows name that the blob store lacks. */
  missing: string[];
  /** Bytes held by unfinished uploads and reservations. */
  heldBytes: number;
  /** The same, by what holds them: uploads in flight, resumable uploads, kept multipart parts. */
  held: { reserved: number; resumable: number; parts: number };
}

export async function readBooks(from: TestServer | BookSource, ownerId: number): Promise<Books> {
  const source = sourceOf(from);
  const db = source.db;
  const user = await db.selectFrom('users').select('storage_used_bytes').where('id', '=', ownerId).executeTakeFirstOrThrow();
  const buckets = await db
    .selectFrom('buckets')
    .select(['id', 'object_count', 'total_bytes', 'noncurrent_bytes'])
    .where('owner_id', '=', ownerId)
    .where('deleted_at', 'is', null)
    .execute();
  const bucketCounts = [];
  let listedBytes = 0;
  for (const bucket of buckets) {
    const rows = await db.selectFrom('objects').select(['size']).where('bucket_id', '=', bucket.id).execute();
    // A versioned bucket's kept versions count against its total and its owner's usage as the current ones do.
    const kept = await db.selectFrom('object_versions').select(['size']).where('bucket_id', '=', bucket.id).execute();
    const keptBytes = kept.reduce((sum, row) => sum + Number(row.size), 0);
    const bytes = rows.reduce((sum, row) => sum + Number(row.size), 0) + keptBytes;
    listedBytes += bytes;
    bucketCounts.push({
      id: bucket.id,
      object_count: Number(bucket.object_count),
      listed: rows.length,
      total_bytes: Number(bucket.total_bytes),
      listedBytes: bytes,
      noncurrent_bytes: Number(bucket.noncurrent_bytes),
      keptBytes,
    });
  }
  const sum = async (query: { executeTakeFirst(): Promise<{ n: number | string | null } | undefined> }) => Number((await query.executeTakeFirst())?.n ?? 0);
  const reserved = await sum(
    db
      .selectFrom('upload_reservations')
      .select((eb) => eb.fn.sum<number>('bytes').as('n'))
      .where('user_id', '=', ownerId),
  );
  const resumable = await sum(
    db
      .selectFrom('resumable_uploads')
      .select((eb) => eb.fn.sum<number>('length').as('n'))
      .where('owner_id', '=', ownerId),
  );
  const parts = await sum(
    db
      .selectFrom('multipart_parts')
      .innerJoin('multipart_uploads', 'multipart_uploads.id', 'multipart_parts.upload_id')
      .select((eb) => eb.fn.sum<number>('multipart_parts.size').as('n'))
      .where('multipart_uploads.owner_id', '=', ownerId),
  );
  const { uncounted, missing } = await blobAccounts(
    source,
    buckets.map((bucket) => bucket.id),
  );
  return {
    usedBytes: Number(user.storage_used_bytes),
    listedBytes,
    bucketCounts,
    uncounted,
    missing,
    heldBytes: reserved + resumable + parts,
    held: { reserved, resumable, parts },
  };
}

/** The owner's buckets' blob keys against the keys their rows name (files stored outside the database, and kept parts). */
async function blobAccounts(source: BookSource, bucketIds: number[]): Promise<{ uncounted: string[]; missing: string[] }> {
  if (bucketIds.length === 0) return { uncounted: [], missing: [] };
  const db = source.db;
  const storageNames = (await db.selectFrom('buckets').select('storage_name').where('id', 'in', bucketIds).execute()).map((row) => row.storage_name);
  const named = new Set<string>();
  for (const row of await db.selectFrom('objects').select('storage_key').where('bucket_id', 'in', bucketIds).where('inline', '=', 0).execute())
    named.add(row.storage_key);
  for (const row of await db
    .selectFrom('object_versions')
    .select('storage_key')
    .where('bucket_id', 'in', bucketIds)
    .where('inline', '=', 0)
    .where('storage_key', 'is not', null)
    .execute())
    named.add(row.storage_key!);
  for (const row of await db
    .selectFrom('multipart_parts')
    .innerJoin('multipart_uploads', 'multipart_uploads.id', 'multipart_parts.upload_id')
    .select('multipart_parts.storage_key')
    .where('multipart_uploads.bucket_id', 'in', bucketIds)
    .execute())
    named.add(row.storage_key);
  const blobs = source.blobs;
  const stored = new Set<string>();
  for (const name of storageNames) {
    for await (const { key } of blobs.list(`${name}/`)) if (!key.startsWith(STAGING_PREFIX)) stored.add(key);
  }
  return {
    uncounted: [...stored].filter((key) => !named.has(key)),
    missing: [...named].filter((key) => !stored.has(key)),
  };
}

/**
 * Expects the books to close: usage equals the listed files' bytes, each
 * bucket's count and total equal its listing, every blob is named by a row and
 * every named blob exists, and (unless told otherwise) nothing is still held.
 * Blobs a change removed are deleted just after it is answered: a short wait.
 */
export async function expectBooksClose(server: TestServer | BookSource, ownerId: number, options: { held?: number } = {}): Promise<Books> {
  let books = await readBooks(server, ownerId);
  for (const deadline = Date.now() + 10_000; !balanced(books, options) && Date.now() < deadline;) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    books = await readBooks(server, ownerId);
  }
  expect(books.usedBytes, 'storage_used_bytes equals the listed files').toBe(books.listedBytes);
  for (const bucket of books.bucketCounts) {
    expect({ bucket: bucket.id, count: bucket.object_count, bytes: bucket.total_bytes, noncurrent: bucket.noncurrent_bytes }).toEqual({
      bucket: bucket.id,
      count: bucket.listed,
      bytes: bucket.listedBytes,
      noncurrent: bucket.keptBytes,
    });
  }
  expect(books.uncounted, 'blobs no row names').toEqual([]);
  expect(books.missing, 'rows whose blob is missing').toEqual([]);
  if (options.held !== undefined) expect(books.heldBytes, `bytes held by unfinished uploads (${JSON.stringify(books.held)})`).toBe(options.held);
  return books;
}

function balanced(books: Books, options: { held?: number }): boolean {
  return (
    books.usedBytes === books.listedBytes &&
    books.bucketCounts.every(
      (bucket) => bucket.object_count === bucket.listed && bucket.total_bytes === bucket.listedBytes && bucket.noncurrent_bytes === bucket.keptBytes,
    ) &&
    books.uncounted.length === 0 &&
    books.missing.length === 0 &&
    (options.held === undefined || books.heldBytes === options.held)
  );
}
