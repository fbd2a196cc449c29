/**
 * What a write to a name does to the versions already there, by the bucket's
 * versioning (S3's rules), decided once for both dialects: each dialect
 * reads the name's current version and its noncurrent `null` version, asks
 * here, and applies the answer with its own statements.
 */
import type { BucketVersioning } from '../schema.js';
import type { StoredVersion } from '../repositories/objects.js';

/** The name's current version (its objects row), as a write finds it. */
export interface CurrentVersion extends StoredVersion {
  size: number;
  etag: string;
  version_id: string | null;
}

/** The name's noncurrent `null` version (a row of object_versions, maybe a delete marker), as a write finds it. */
export interface NoncurrentNull {
  id: number;
  storage_key: string | null;
  size: number;
  inline: number;
}

/** What happens to the versions a write (a new version or a delete marker) displaces. */
export interface Displacement {
  /** The current version becomes noncurrent (a row of object_versions, its bytes kept). */
  keepCurrent: boolean;
  /** The current version goes for good (its row; its bytes retired). */
  dropCurrent: boolean;
  /** The noncurrent `null` version's row to delete (suspended buckets: the new write is the `null` version). */
  dropNoncurrent: NoncurrentNull | null;
  /** The new version's id: the one offered in an enabled bucket, else null (S3's `null` version). */
  versionId: string | null;
  /** Bytes that stop being stored (the owner's usage and the bucket's total_bytes fall by them). */
  freedBytes: number;
  /** How noncurrent_bytes moves. */
  noncurrentDelta: number;
  /** The bytes to retire once committed: at most one version, since a name has one `null` version. */
  retired: StoredVersion | null;
}

/**
 * S3's rules: unversioned, the write replaces the current version; enabled,
 * it keeps it; suspended, the write is the `null` version, replacing any
 * other `null` version (current or not) and keeping a current one with an id.
 */
export function displace(
  versioning: BucketVersioning,
  current: CurrentVersion | undefined,
  noncurrentNull: NoncurrentNull | undefined,
  offeredVersionId: string,
): Displacement {
  const none: Displacement = {
    keepCurrent: false,
    dropCurrent: false,
    dropNoncurrent: null,
    versionId: null,
    freedBytes: 0,
    noncurrentDelta: 0,
    retired: null,
  };
  if (versioning === 'unversioned') {
    if (!current) return none;
    return { ...none, dropCurrent: true, freedBytes: current.size, retired: storedOf(current) };
  }
  if (versioning === 'enabled') {
    if (!current) return { ...none, versionId: offeredVersionId };
    return { ...none, keepCurrent: true, noncurrentDelta: current.size, versionId: offeredVersionId };
  }
  if (current && current.version_id === null) {
    return { ...none, dropCurrent: true, freedBytes: current.size, retired: storedOf(current) };
  }
  const kept = current ? { keepCurrent: true, noncurrentDelta: current.size } : {};
  if (!noncurrentNull) return { ...none, ...kept };
  const noncurrentDelta = (current?.size ?? 0) - noncurrentNull.size;
  const retired = noncurrentNull.storage_key === null ? null : { storage_key: noncurrentNull.storage_key, inline: noncurrentNull.inline };
  return { ...none, ...kept, noncurrentDelta, dropNoncurrent: noncurrentNull, freedBytes: noncurrentNull.size, retired };
}

const storedOf = (version: StoredVersion): StoredVersion => ({ storage_key: version.storage_key, inline: version.inline });

/** Whether a version id names the `null` version. */
export const isNullVersion = (versionId: string | null): boolean => versionId === null || versionId === 'null';
