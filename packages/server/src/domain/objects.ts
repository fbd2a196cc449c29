/** Files in buckets: their names, their views, listing, finding one to read, deleting. */
import { outboxFor, removedChange } from './webhook-events.js';
import { filenameProblem, type BucketObject } from '@pail/shared';
import { WriteRefused } from '../db/object-writes/object-writes.js';
import { findBucketAndObject, findObjectRow, listListedRows, type BucketRef, type ListedRow, type ReadableObject } from '../db/repositories/objects.js';
import type { BucketRow, BucketVersioning, ObjectRow } from '../db/schema.js';
import { errors } from './errors.js';
import { authorize } from './authorize.js';
import { retireVersions } from './object-bytes.js';
import { removalGuard } from './object-lock.js';
import type { StoragePorts } from './ports.js';
import type { Principal } from './principal.js';
import { listSorted, parseSortAndSearch } from './sorted-listing.js';
import { newVersionId, principalTag, shownVersionId } from './version-ids.js';
import { pastPrefix } from '../db/name-ranges.js';
import { pageLimit } from './page-limits.js';

export type { ReadableObject };

export const MAX_PAGE_SIZE = 1000;

/** A multipart part's filename is a base name, as browsers send it: a path in it is reduced to its last segment. */
export const baseName = (raw: string): string => raw.slice(Math.max(raw.lastIndexOf('/'), raw.lastIndexOf('\\')) + 1);

export function parseFilename(raw: string): string {
  const problem = filenameProblem(raw);
  if (problem) throw errors.validation(problem);
  return raw;
}

/**
 * A filename as it appears in a url path: each segment percent-encoded, the
 * slashes kept. Encoded whole, then the slashes put back: a `%2F` in the
 * result can only come from a `/` (a `%` in the name becomes `%25`), and a
 * listing makes 1000 of these, so one pass instead of a split and join.
 */
export const filenamePath = (filename: string): string => encodeURIComponent(filename).replaceAll('%2F', '/');

export function objectView(storageHost: string, bucket: Pick<BucketRow, 'id' | 'storage_name'>, row: ListedRow): BucketObject {
  return {
    id: `${bucket.id}/${row.filename}`,
    bucket_id: bucket.id,
    storage_name: row.storage_key,
    filename: row.filename,
    size: row.size,
    content_type: row.content_type,
    url: `${storageHost}/${bucket.storage_name}/${filenamePath(row.filename)}`,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export interface ListQuery {
  prefix?: string;
  limit?: string;
  cursor?: string;
  delimiter?: string;
  /** Start after this name (S3's start-after); a cursor, when given, wins. */
  after?: string;
  /** The dashboard's listing (sorted-listing.ts); absent: names ascending. */
  search?: string;
  sort?: string;
  order?: string;
}

export interface ListPage {
  objects: BucketObject[];
  /** With `delimiter=/`: the folders directly under the prefix, each ending in `/`. */
  folders: string[];
  nextCursor: string | null;
}

/**
 * A page of a bucket's files, ascending by name (byte order), or as
 * `search`, `sort` and `order` ask (sorted-listing.ts). With
 * `delimiter=/` the names under a deeper folder are folded into that folder,
 * which takes one place on the page where its first name would have been, as
 * S3's common prefixes do; the cursor then continues after the whole folder.
 */
export async function listObjects(ports: Pick<StoragePorts, 'db' | 'storageHost'>, bucket: BucketRow, query: ListQuery): Promise<ListPage> {
  // The Pail API's folders are made by `/` alone (decisions.md); S3 listings take any delimiter.
  if (query.delimiter !== undefined && query.delimiter !== '' && query.delimiter !== '/') {
    throw errors.validation('delimiter must be "/" (the only delimiter supported)');
  }
  const sorted = parseSortAndSearch(query);
  const page = sorted
    ? await listSorted(ports.db, bucket, {
        ...sorted,
        prefix: query.prefix ?? '',
        limit: parseLimit(query.limit),
        folders: query.delimiter === '/',
        cursor: query.cursor === undefined || query.cursor === '' ? undefined : query.cursor,
      })
    : await listObjectRowsPage(ports, bucket, query);
  return { objects: page.rows.map((row) => objectView(ports.storageHost, bucket, row)), folders: page.folders, nextCursor: page.nextCursor };
}

/**
 * The same page with the rows themselves (what a listing shows of each,
 * ListedRow), for views that need more than objectView shows (S3's ETag). Any non-empty delimiter
 * folds, as S3's does; `/` makes Pail's folders.
 */
export async function listObjectRowsPage(
  ports: Pick<StoragePorts, 'db'>,
  bucket: BucketRow,
  query: ListQuery,
): Promise<{ rows: ListedRow[]; folders: string[]; nextCursor: string | null }> {
  const limit = parseLimit(query.limit);
  const prefix = query.prefix ?? '';
  const delimiter = query.delimiter || undefined;
  const cursor = query.cursor === undefined || query.cursor === '' ? query.after || undefined : decodeCursor(query.cursor);
  // A folder's cursor continues after every name in it.
  let start: { from?: string | null; after?: string | undefined } =
    cursor !== undefined && delimiter !== undefined && cursor.endsWith(delimiter) ? { from: pastPrefix(cursor) } : { after: cursor };
  const entries: ({ row: ListedRow } | { folder: string })[] = [];
  let skipping: string | undefined;
  // from null: no name comes after the folded prefix.
  while (entries.length <= limit && start.from !== null) {
    const rows = await listListedRows(ports.db, bucket.id, { prefix, from: start.from ?? undefined, after: start.after, limit: limit + 1 });
    for (const row of rows) {
      if (skipping !== undefined && row.filename.startsWith(skipping)) continue;
      skipping = undefined;
      const rest = row.filename.slice(prefix.length);
      const at = delimiter === undefined ? -1 : rest.indexOf(delimiter);
      if (at === -1) {
        // The marker of the very folder being listed is that folder, not a file in it.
        if (!(delimiter !== undefined && rest === '' && prefix.endsWith(delimiter))) entries.push({ row });
      } else {
        skipping = prefix + rest.slice(0, at + delimiter!.length);
        entries.push({ folder: skipping });
      }
      if (entries.length > limit) break;
    }
    const last = rows[rows.length - 1];
    if (rows.length <= limit || last === undefined) break;
    start = skipping !== undefined ? { from: pastPrefix(skipping) } : { after: last.filename };
  }
  const page = entries.slice(0, limit);
  const lastEntry = page[page.length - 1];
  return {
    rows: page.flatMap((e) => ('row' in e ? [e.row] : [])),
    folders: page.flatMap((e) => ('folder' in e ? [e.folder] : [])),
    nextCursor: entries.length > limit && lastEntry ? encodeCursor('row' in lastEntry ? lastEntry.row.filename : lastEntry.folder) : null,
  };
}

const parseLimit = (raw: string | undefined): number => pageLimit(raw, MAX_PAGE_SIZE);

const encodeCursor = (filename: string): string => Buffer.from(filename, 'utf8').toString('base64url');

function decodeCursor(cursor: string): string {
  const filename = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[A-Za-z0-9_-]+$/.test(cursor) || filename === '' || encodeCursor(filename) !== cursor) {
    throw errors.validation('cursor is not valid; pass next_cursor from the previous page');
  }
  return filename;
}

/** A file of a bucket the caller was already authorized for (an action other than reading it); FileNotFound when there is none. */
export async function requireObject(ports: Pick<StoragePorts, 'db'>, bucket: Pick<BucketRow, 'id'>, filename: string): Promise<ObjectRow> {
  const object = await findObjectRow(ports.db, bucket.id, filename);
  if (!object) throw errors.fileNotFound();
  return object;
}

/** What a delete did: in a versioned bucket, the delete marker it added (S3 answers its version id). */
export interface DeleteOutcome {
  versioning: BucketVersioning;
  /** The delete marker's version id (`null` for the null version); null when no marker was added (unversioned). */
  markerVersionId: string | null;
}

/**
 * Deletes a file; `operation` is the door's name for the request, for
 * whoever hears of it (object-events.ts). In a versioned bucket it adds a
 * delete marker and keeps the file restorable (decisions.md); `by` is kept
 * on the marker for the trash. `evenIfAbsent`: S3 adds a marker even when
 * the name holds no file; otherwise FileNotFound. `onlyStorageKey`: only
 * while that version is still the current one (a lifecycle rule weighed it;
 * a newer write stays), otherwise FileNotFound. A delete that would remove
 * a locked version (anywhere but a versioned bucket, where it adds a marker)
 * is refused (object-lock.ts); `bypassGovernance`: the caller may and asks to
 * bypass GOVERNANCE retention.
 */
export async function deleteObject(
  ports: StoragePorts,
  bucket: BucketRow,
  filename: string,
  operation?: string,
  options: { by?: Principal | null; evenIfAbsent?: boolean; onlyStorageKey?: string; bypassGovernance?: boolean } = {},
): Promise<DeleteOutcome> {
  // A name every upload refuses (a control character, `a//b`, `..`) is no file's: never a delete marker under it.
  if (filenameProblem(filename) !== null) throw errors.fileNotFound();
  let deleted;
  // Only a bucket made with object lock holds locked versions (others skip the lookup); the delete asks about
  // a version it would remove for good (none where versioning is enabled) in its own transaction.
  const lockGuard = bucket.object_lock === 1 ? removalGuard(ports.clock, options.bypassGovernance === true) : undefined;
  try {
    // Issue 39: the webhook events of the delete, written in its transaction.
    // Outside an unversioned bucket a delete adds a marker: S3 names that event DeleteMarkerCreated.
    const outbox = await outboxFor(ports, bucket.id, [
      removedChange(filename, `user:${bucket.owner_id}`, { marker: bucket.versioning !== 'unversioned', operation }),
    ]);
    deleted = await ports.writes.deleteVersion(bucket, filename, {
      markerVersionId: newVersionId(),
      deletedBy: principalTag(options.by),
      ...(options.evenIfAbsent ? { evenIfAbsent: true } : {}),
      outbox,
      ...(options.onlyStorageKey !== undefined ? { onlyStorageKey: options.onlyStorageKey } : {}),
      ...(lockGuard !== undefined ? { lockGuard } : {}),
    });
  } catch (error) {
    if (error instanceof WriteRefused) throw error.refusal === 'no-file' ? errors.fileNotFound() : errors.bucketNotFound();
    throw error;
  }
  const { removed } = deleted;
  if (removed) {
    await ports.events.announce({
      type: 'object-removed',
      ownerId: bucket.owner_id,
      bucketId: bucket.id,
      bucketStorageName: bucket.storage_name,
      filename,
      storageKey: removed.storage_key,
      size: removed.size,
      etag: removed.etag,
      cause: 'deleted',
      operation: operation ?? null,
    });
  } else {
    // A delete marker over no file changes only what a versioned read of the name finds.
    await ports.caches.changed('objects');
  }
  if (deleted.retired) await retireVersions(ports, [deleted.retired]);
  return {
    versioning: deleted.versioning,
    markerVersionId: deleted.marker ? shownVersionId(deleted.marker.versionId) : null,
  };
}

/** One key per (bucket, file); a name as a client sent it may hold a '/', so its length comes first. */
function cacheKeyOf(bucketRef: BucketRef, filename: string): string {
  if ('id' in bucketRef) return `i${bucketRef.id}/${filename}`;
  if ('storageName' in bucketRef) return `s${bucketRef.storageName}/${filename}`;
  const { ownerId, name } = bucketRef.ownerName;
  return `n${ownerId}/${name.length}/${name}/${filename}`;
}

/**
 * A file the principal may read: in its own bucket, or in any public bucket
 * (authorize.ts says which, and what a refusal looks like). One query, or
 * none when cached: this is the hottest path of the service.
 */
export async function findReadable(
  ports: Pick<StoragePorts, 'db' | 'caches'>,
  bucketRef: BucketRef,
  filename: string,
  principal: Principal,
): Promise<ReadableObject> {
  const cache = ports.caches.objects;
  const cacheKey = cacheKeyOf(bucketRef, filename);
  let found: { bucket: ReadableObject['bucket']; object: ObjectRow | null } | null | undefined = cache?.get(cacheKey);
  if (!found) {
    const mark = cache?.mark() ?? 0;
    found = await findBucketAndObject(ports.db, bucketRef, filename);
    // A bucket found by its storage name (not its name) is not kept under a name: a bucket created later with that name
    // comes first. A bucket whose storage name is its own name was found by its name, and is kept.
    const byStorageName = 'ownerName' in bucketRef && found !== null && found.bucket.name !== bucketRef.ownerName.name;
    if (found?.object && !byStorageName) cache?.set(cacheKey, found as ReadableObject, mark);
  }
  authorize(principal, 'readObject', found?.bucket ?? null);
  // authorize() refused a bucket that is not there.
  if (found!.object === null) throw errors.fileNotFound();
  return found as ReadableObject;
}
