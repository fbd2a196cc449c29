/**
 * Versioned buckets (issue 37; decisions.md "Versions and the trash"): a
 * bucket's versioning, a file's versions, reading, restoring and deleting
 * one for good, and the trash. Every door calls these; lifecycle rules
 * expire versions through deleteFileVersion, the one way a version goes.
 */
import type { FileVersion, TrashEntry as TrashEntryView, UploadResult } from '@pail/shared';
import { Readable } from 'node:stream';
import { BlobNotFoundError } from '../blob/blob-store.js';
import { WriteRefused } from '../db/object-writes/object-writes.js';
import type { VersionRemoved } from '../db/object-writes/version-writes.js';
import {
  listFileVersions as listVersionRows,
  listTrash,
  newestKept,
  versionOrder,
  type TrashEntry,
  type VersionEntry,
} from '../db/repositories/object-versions.js';
import { findBucketAndObject, type BucketRef, type ReadableObject } from '../db/repositories/objects.js';
import type { AccountRow, BucketRow, BucketVersioning, ObjectRow } from '../db/schema.js';
import { authorize } from './authorize.js';
import { errors } from './errors.js';
import { objectBody, retireVersions } from './object-bytes.js';
import { removalGuard } from './object-lock.js';
import { pageLimit } from './page-limits.js';
import { uploadObject } from './uploads.js';
import { isWellFormedVersionId, shownVersionId, storedVersionId } from './version-ids.js';
import { findVersion, type FoundVersion } from './version-lookup.js';
import { outboxFor, removedChange } from './webhook-events.js';

export { isWellFormedVersionId, newVersionId, principalTag, shownVersionId, storedVersionId } from './version-ids.js';
export { DeleteMarkerNamed, findVersion, versionOrCurrent, type FoundVersion } from './version-lookup.js';
import type { StoragePorts } from './ports.js';
import type { Principal } from './principal.js';

export type { BucketRef, TrashEntry, VersionEntry };

/** A page of a file's versions: older than `after` (a version id, the last of the previous page), at most `limit` (1 to 1000, default 1000). */
export interface VersionsPage {
  after?: string | undefined;
  limit?: string | undefined;
}

export const VERSIONS_PAGE_MAX = 1000;

/**
 * A file's versions, newest first, a page at a time; FileNotFound when it has
 * none at all, VersionNotFound when `after` is none of its versions (removed
 * meanwhile: the listing starts again from the newest).
 */
export async function fileVersions(
  ports: Pick<StoragePorts, 'db'>,
  bucket: Pick<BucketRow, 'id'>,
  filename: string,
  page: VersionsPage = {},
): Promise<VersionEntry[]> {
  const limit = pageLimit(page.limit, VERSIONS_PAGE_MAX);
  let afterOrder: number | undefined;
  if (page.after !== undefined) {
    if (!isWellFormedVersionId(page.after)) throw errors.invalidVersionId();
    afterOrder = await versionOrder(ports.db, bucket.id, filename, storedVersionId(page.after));
    if (afterOrder === undefined) throw errors.versionNotFound();
  }
  const versions = await listVersionRows(ports.db, bucket.id, filename, { afterOrder, limit });
  if (versions.length === 0 && afterOrder === undefined) throw errors.fileNotFound();
  return versions;
}

/** latestDeleteMarker for a bucket by reference (a door that found no current version and has no bucket row in hand). */
export async function latestDeleteMarkerAt(ports: Pick<StoragePorts, 'db'>, bucketRef: BucketRef, filename: string) {
  const bucket = (await findBucketAndObject(ports.db, bucketRef, filename))?.bucket;
  return bucket ? latestDeleteMarker(ports, bucket, filename) : null;
}

/** The delete marker a name's latest version is, when the name has no current version (S3: 404 with x-amz-delete-marker). */
export async function latestDeleteMarker(ports: Pick<StoragePorts, 'db'>, bucket: Pick<BucketRow, 'id'> & { versioning: BucketVersioning }, filename: string) {
  if (bucket.versioning === 'unversioned') return null;
  const newest = await newestKept(ports.db, bucket.id, filename);
  return newest?.is_delete_marker ? { versionId: newest.version_id } : null;
}

/**
 * Deletes one version of a file for good (or a delete marker): its bytes
 * are retired, counts and usage move, and if it was the latest the next
 * newest shows (S3's DeleteObject with a versionId). `cause` says who asks
 * (a request, or lifecycle's expiry). NoSuchVersion (FileNotFound) when there is none such.
 * A locked version stays (object-lock.ts, 403 ObjectLocked saying until when);
 * `bypassGovernance`: the caller may and asks to bypass GOVERNANCE retention.
 * `noncurrentOnly`: NoSuchVersion when the version is current by then (lifecycle's noncurrent expiry).
 */
export async function deleteFileVersion(
  ports: StoragePorts,
  bucket: Pick<BucketRow, 'id' | 'owner_id' | 'storage_name' | 'object_lock'>,
  filename: string,
  rawVersionId: string,
  operation?: string,
  options: { bypassGovernance?: boolean; noncurrentOnly?: boolean } = {},
): Promise<VersionRemoved> {
  if (!isWellFormedVersionId(rawVersionId)) throw errors.invalidVersionId();
  // Only a bucket with object lock holds locked versions; the delete asks in its own transaction (no lock set meanwhile slips past).
  // Asked of every bucket, in the delete's transaction: the row here (perhaps a cached one) may not yet say that lock
  // was turned on, and a version locked since would go. Without a lock row it lets the delete go.
  const lockGuard = removalGuard(ports.clock, options.bypassGovernance === true);
  let removed: VersionRemoved;
  try {
    // Issue 39: a version (or marker) gone for good is S3's ObjectRemoved:Delete, written in the delete's transaction.
    const outbox = await outboxFor(ports, bucket.id, [removedChange(filename, `user:${bucket.owner_id}`, { operation, versionId: rawVersionId })]);
    removed = await ports.writes.deleteVersionById(bucket, filename, storedVersionId(rawVersionId), lockGuard, {
      noncurrentOnly: options.noncurrentOnly === true,
      outbox,
    });
  } catch (error) {
    if (error instanceof WriteRefused) throw error.refusal === 'no-version' ? errors.versionNotFound() : errors.bucketNotFound();
    throw error;
  }
  if (removed.wasCurrent && removed.retired) {
    await ports.events.announce({
      type: 'object-removed',
      ownerId: bucket.owner_id,
      bucketId: bucket.id,
      bucketStorageName: bucket.storage_name,
      filename,
      storageKey: removed.retired.storage_key,
      size: removed.retired.size,
      etag: removed.retired.etag,
      cause: 'deleted',
      operation: operation ?? null,
    });
  } else {
    // A version that became current again, or a marker gone: the name's cached lookups are stale either way.
    await ports.caches.changed('objects');
  }
  if (removed.retired) await retireVersions(ports, [removed.retired]);
  return removed;
}

/** The trash: files whose latest version is a delete marker, with who deleted them when. */
export async function trash(
  ports: Pick<StoragePorts, 'db'>,
  bucket: Pick<BucketRow, 'id'>,
  query: { prefix?: string; after?: string; limit?: string },
): Promise<TrashEntry[]> {
  const limit = pageLimit(query.limit, 1000);
  return listTrash(ports.db, bucket.id, { prefix: query.prefix ?? '', ...(query.after ? { after: query.after } : {}), limit });
}

/** A version as the Pail API shows it. */
export function versionView(entry: VersionEntry): FileVersion {
  return {
    version_id: shownVersionId(entry.version_id),
    size: entry.size,
    etag: entry.etag,
    created_at: entry.last_modified,
    is_latest: entry.is_latest,
    is_delete_marker: entry.is_delete_marker,
    deleted_by: entry.is_delete_marker ? entry.deleted_by : null,
    deleted_at: entry.is_delete_marker ? entry.last_modified : null,
  };
}

/** The trash entry as the Pail API shows it. */
export const trashView = ({ restorable, ...entry }: TrashEntry): TrashEntryView => ({
  ...entry,
  marker_version_id: shownVersionId(entry.marker_version_id),
  // A file last written before versioning was enabled comes back from its null version (`null`, as S3 names it).
  restorable_version_id: restorable ? shownVersionId(entry.restorable_version_id) : null,
});

/**
 * One version of a file the principal may read (authorize.ts, as for the
 * current version): the bucket and the version, or the delete marker the id
 * names (S3: 405). NoSuchVersion (VersionNotFound) when there is none such.
 */
export async function findReadableVersion(
  ports: Pick<StoragePorts, 'db'>,
  bucketRef: BucketRef,
  filename: string,
  principal: Principal,
  rawVersionId: string,
): Promise<{ bucket: ReadableObject['bucket'] } & FoundVersion> {
  const found = await findBucketAndObject(ports.db, bucketRef, filename);
  authorize(principal, 'readObject', found?.bucket ?? null);
  if (!isWellFormedVersionId(rawVersionId)) throw errors.invalidVersionId();
  const version = await findVersion(ports, found!.bucket, filename, rawVersionId);
  if (!version) throw errors.versionNotFound();
  // Old versions and delete markers are the owner's: a public bucket lets anyone read its current files, not what its
  // owner replaced or deleted (as S3's GetObject granted without GetObjectVersion).
  const owners = principal.user !== null && principal.user.id === found!.bucket.owner_id;
  if (!owners && !('object' in version && version.isLatest)) throw errors.versionNotFound();
  return { bucket: found!.bucket, ...version };
}

/** The operation name of a restore when its door names none (the Pail API's, api/versions.ts). */
const RESTORE_OPERATION = 'restoreVersion';

/**
 * Restores a version: a copy of it becomes the file's current version (a
 * new version; the others stay), through the same upload path as any write
 * (the cap, the counts, the commit), announced as object.restored from
 * every door; `operation` names the door (the CLI's 'cli').
 */
export async function restoreVersion(
  ports: StoragePorts,
  owner: AccountRow,
  bucket: BucketRow,
  filename: string,
  rawVersionId: string,
  operation?: string,
): Promise<UploadResult> {
  if (!isWellFormedVersionId(rawVersionId)) throw errors.invalidVersionId();
  const version = await findVersion(ports, bucket, filename, rawVersionId);
  if (!version) throw errors.versionNotFound();
  if ('deleteMarker' in version) throw errors.validation('That version is a delete marker: restore the version before it');
  const { object } = version;
  let body: Readable | undefined;
  try {
    const bytes = await objectBody(ports, object, null);
    body = Buffer.isBuffer(bytes) ? Readable.from([bytes]) : bytes;
    return await copyOfVersion(ports, owner, bucket, filename, object, body, operation);
  } catch (error) {
    body?.destroy();
    // The version was deleted for good while it was being read (its bytes retired): it is gone, as if it had gone first.
    throw error instanceof BlobNotFoundError ? errors.versionNotFound() : error;
  }
}

function copyOfVersion(
  ports: StoragePorts,
  owner: AccountRow,
  bucket: BucketRow,
  filename: string,
  object: ObjectRow,
  body: Readable,
  operation: string | undefined,
): Promise<UploadResult> {
  return uploadObject(ports, {
    owner,
    bucket,
    filename,
    body,
    contentType: object.content_type,
    declaredSize: object.size,
    ...(object.metadata !== null ? { metadata: JSON.parse(object.metadata) as Record<string, string> } : {}),
    ...(object.tags !== null ? { tags: object.tags } : {}),
    operation: operation ?? RESTORE_OPERATION,
    restored: true,
  });
}
