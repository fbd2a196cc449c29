/**
 * Finding one version of a file by its id (domain/versions.ts has the rest of versioning): what every door
 * that takes a `versionId` reads first. Apart from versions.ts so that tags (object-tags.ts), which the upload
 * path needs, can find a version without importing the upload path back.
 */
import { findKeptVersion, keptAsObjectRow, newestKept } from '../db/repositories/object-versions.js';
import { findObjectRow } from '../db/repositories/objects.js';
import type { BucketRow, ObjectRow } from '../db/schema.js';
import { AppError, errors } from './errors.js';
import type { StoragePorts } from './ports.js';
import { isWellFormedVersionId, storedVersionId } from './version-ids.js';

/** What a version id names: a version to read, or a delete marker (S3: 405 on GET). */
export type FoundVersion = { object: ObjectRow; isLatest: boolean } | { deleteMarker: { versionId: string | null; lastModified: string } };

/** One version of a file by its id (as the client sent it, `null` included); null when the file has no such version. */
export async function findVersion(
  ports: Pick<StoragePorts, 'db'>,
  bucket: Pick<BucketRow, 'id'>,
  filename: string,
  rawVersionId: string,
): Promise<FoundVersion | null> {
  if (!isWellFormedVersionId(rawVersionId)) return null;
  const versionId = storedVersionId(rawVersionId);
  const current = await findObjectRow(ports.db, bucket.id, filename);
  if (current && (current.version_id ?? null) === versionId) return { object: current, isLatest: true };
  const kept = await findKeptVersion(ports.db, bucket.id, filename, versionId);
  if (!kept) return null;
  if (kept.is_delete_marker || kept.storage_key === null) return { deleteMarker: { versionId: kept.version_id, lastModified: kept.updated_at } };
  return { object: keptAsObjectRow({ ...kept, storage_key: kept.storage_key }), isLatest: false };
}

/**
 * A delete marker named where a version's content (its tags, its ACL) is asked for: a marker has none.
 * S3 answers 405 MethodNotAllowed (s3/errors.ts); the Pail API, not found.
 */
export class DeleteMarkerNamed extends AppError {
  constructor(
    readonly marker: { versionId: string | null; lastModified: string },
    byId: boolean,
  ) {
    super(byId ? 'VersionNotFound' : 'FileNotFound', byId ? 'The version named is a delete marker, which has no tags or ACL' : 'File not found');
  }
}

/**
 * The version a file's sub-resource (its tags, its ACL) is read or changed on: the one `rawVersionId` names, or
 * the current one. FileNotFound when there is no current version, VersionNotFound when there is no such version,
 * DeleteMarkerNamed when it is a delete marker (the current one included, when the file's latest version is one).
 */
export async function versionOrCurrent(
  ports: Pick<StoragePorts, 'db'>,
  bucket: Pick<BucketRow, 'id' | 'versioning'>,
  filename: string,
  rawVersionId: string | undefined,
): Promise<{ object: ObjectRow; isLatest: boolean }> {
  if (rawVersionId === undefined) {
    const current = await findObjectRow(ports.db, bucket.id, filename);
    if (current) return { object: current, isLatest: true };
    const newest = bucket.versioning === 'unversioned' ? undefined : await newestKept(ports.db, bucket.id, filename);
    if (newest?.is_delete_marker) throw new DeleteMarkerNamed({ versionId: newest.version_id, lastModified: newest.updated_at }, false);
    throw errors.fileNotFound();
  }
  if (!isWellFormedVersionId(rawVersionId)) throw errors.invalidVersionId();
  const found = await findVersion(ports, bucket, filename, rawVersionId);
  if (!found) throw errors.versionNotFound();
  if ('deleteMarker' in found) throw new DeleteMarkerNamed(found.deleteMarker, true);
  return found;
}
