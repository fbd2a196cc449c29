/**
 * The writes of versioned buckets both dialects make the same way, through
 * Kysely, inside a transaction that holds the bucket (PostgreSQL's row lock;
 * SQLite serialises every write): displacing a name's versions as S3's rules
 * say (versioning.ts), delete markers, deleting one version for good, and
 * making the newest kept version current again.
 */
import { sql } from 'kysely';
import type { BucketVersioning, Db } from '../schema.js';
import { foldName } from '../folded-names.js';
import { nameSortKey } from '../name-sort-keys.js';
import type { RemovedVersion, StoredVersion } from '../repositories/objects.js';
import { deleteInlineBytes } from './inline-bytes.js';
import { displace, type CurrentVersion, type Displacement } from './versioning.js';

/** The columns a version keeps when it stops being current, the same in objects and object_versions. */
export const KEPT_COLUMNS =
  'bucket_id, filename, version_id, storage_key, size, content_type, etag, inline, metadata, checksums, tags, upload_id, parts, created_at, updated_at';

/** How a bucket's counts and its owner's usage move (summed over the steps of one write). */
export interface CountChange {
  count: number;
  total: number;
  noncurrent: number;
}

export const NO_CHANGE: CountChange = { count: 0, total: 0, noncurrent: 0 };

export const addChange = (a: CountChange, b: Partial<CountChange>): CountChange => ({
  count: a.count + (b.count ?? 0),
  total: a.total + (b.total ?? 0),
  noncurrent: a.noncurrent + (b.noncurrent ?? 0),
});

/** A bucket's versioning, read in the transaction (after its lock): undefined when the bucket is gone. */
export async function versioningOf(trx: Db, bucketId: number): Promise<BucketVersioning | undefined> {
  const row = await trx.selectFrom('buckets').select('versioning').where('id', '=', bucketId).where('deleted_at', 'is', null).executeTakeFirst();
  return row?.versioning;
}

export function currentVersionOf(trx: Db, bucketId: number, filename: string): Promise<CurrentVersion | undefined> {
  return trx
    .selectFrom('objects')
    .select(['storage_key', 'size', 'inline', 'etag', 'version_id'])
    .where('bucket_id', '=', bucketId)
    .where('filename', '=', filename)
    .executeTakeFirst();
}

/**
 * Displaces the versions at a name for a new version or a delete marker (its
 * bucket's rules, versioning.ts): the current row leaves objects (kept as a
 * noncurrent version, or dropped), a noncurrent `null` version may go.
 * Returns the decision, what the name held, and how the counts move.
 */
export async function displaceAt(
  trx: Db,
  at: { bucketId: number; filename: string; versioning: BucketVersioning; offeredVersionId: string; now: string },
): Promise<{ displaced: Displacement; current: CurrentVersion | undefined; change: CountChange }> {
  const current = await currentVersionOf(trx, at.bucketId, at.filename);
  const noncurrentNull =
    at.versioning === 'suspended'
      ? await trx
          .selectFrom('object_versions')
          .select(['id', 'storage_key', 'size', 'inline'])
          .where('bucket_id', '=', at.bucketId)
          .where('filename', '=', at.filename)
          .where('version_id', 'is', null)
          .executeTakeFirst()
      : undefined;
  const displaced = displace(at.versioning, current, noncurrentNull, at.offeredVersionId);
  if (displaced.dropNoncurrent) await trx.deleteFrom('object_versions').where('id', '=', displaced.dropNoncurrent.id).execute();
  if (displaced.keepCurrent) await keepCurrent(trx, at.bucketId, at.filename, at.now);
  if (current) await trx.deleteFrom('objects').where('bucket_id', '=', at.bucketId).where('filename', '=', at.filename).execute();
  if (displaced.retired?.inline) await deleteInlineBytes(trx, [displaced.retired.storage_key]);
  return {
    displaced,
    current,
    change: { count: current ? -1 : 0, total: -displaced.freedBytes, noncurrent: displaced.noncurrentDelta },
  };
}

/** Copies a name's current row into object_versions, noncurrent from `now` (the caller removes or rewrites the row). */
export async function keepCurrent(trx: Db, bucketId: number, filename: string, now: string): Promise<void> {
  await sql`insert into object_versions (${sql.raw(KEPT_COLUMNS)}, noncurrent_at, is_delete_marker)
    select ${sql.raw(KEPT_COLUMNS)}, ${now}, 0 from objects where bucket_id = ${bucketId} and filename = ${filename}`.execute(trx);
}

/** Adds a delete marker (size 0, no bytes) as a name's newest version. */
export async function insertMarker(trx: Db, marker: { bucketId: number; filename: string; versionId: string | null; deletedBy: string | null; now: string }) {
  await trx
    .insertInto('object_versions')
    .values({
      bucket_id: marker.bucketId,
      filename: marker.filename,
      version_id: marker.versionId,
      storage_key: null,
      size: 0,
      content_type: '',
      etag: '',
      inline: 0,
      metadata: null,
      checksums: null,
      tags: null,
      upload_id: null,
      parts: null,
      created_at: marker.now,
      updated_at: marker.now,
      noncurrent_at: marker.now,
      is_delete_marker: 1,
      deleted_by: marker.deletedBy,
    })
    .execute();
}

/**
 * When a name has no current version and its newest kept one is not a delete
 * marker (its newer versions were deleted for good), that version becomes
 * current again, as S3 has it. Returns how the counts move.
 */
export async function promoteNewest(trx: Db, bucketId: number, filename: string): Promise<CountChange> {
  const newest = await trx
    .selectFrom('object_versions')
    .selectAll()
    .where('bucket_id', '=', bucketId)
    .where('filename', '=', filename)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!newest || newest.is_delete_marker || newest.storage_key === null) return NO_CHANGE;
  await trx
    .insertInto('objects')
    .values({
      bucket_id: bucketId,
      filename,
      storage_key: newest.storage_key,
      size: newest.size,
      content_type: newest.content_type,
      etag: newest.etag,
      inline: newest.inline,
      metadata: newest.metadata,
      checksums: newest.checksums,
      tags: newest.tags,
      upload_id: newest.upload_id,
      parts: newest.parts,
      created_at: newest.created_at,
      updated_at: newest.updated_at,
      version_id: newest.version_id,
      name_folded: foldName(filename),
      name_sort: nameSortKey(filename),
    })
    .execute();
  await trx.deleteFrom('object_versions').where('id', '=', newest.id).execute();
  return { count: 1, total: 0, noncurrent: -newest.size };
}

/** Moves a live bucket's counts and its owner's usage (by the change's total); false when the bucket is gone. */
export async function applyChange(trx: Db, bucket: { id: number; owner_id: number }, change: CountChange): Promise<boolean> {
  const counted = await trx
    .updateTable('buckets')
    .set((eb) => ({
      object_count: eb('object_count', '+', change.count),
      total_bytes: eb('total_bytes', '+', change.total),
      noncurrent_bytes: eb('noncurrent_bytes', '+', change.noncurrent),
    }))
    .where('id', '=', bucket.id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (Number(counted.numUpdatedRows) === 0) return false;
  if (change.total !== 0) {
    await trx
      .updateTable('users')
      .set((eb) => ({ storage_used_bytes: eb('storage_used_bytes', '+', change.total) }))
      .where('id', '=', bucket.owner_id)
      .execute();
  }
  return true;
}

/** A version removed for good by its id: what it was, and its bytes to retire (none for a delete marker). */
export interface VersionRemoved {
  filename: string;
  versionId: string | null;
  isDeleteMarker: boolean;
  /** It was the current version (its name then shows the next newest, if any). */
  wasCurrent: boolean;
  retired: RemovedVersion | null;
}

/**
 * Removes one version of a name for good (`versionId` null: the `null`
 * version); undefined when the name has no such version (or, `noncurrentOnly`,
 * when it is the current one). If it was the
 * current one, or the newest delete marker, the next newest becomes current
 * when it is not a marker.
 */
export async function removeVersionById(
  trx: Db,
  bucket: { id: number; owner_id: number },
  filename: string,
  versionId: string | null,
  noncurrentOnly = false,
): Promise<{ removed: VersionRemoved; change: CountChange } | undefined> {
  const current = await currentVersionOf(trx, bucket.id, filename);
  let change: CountChange;
  let removed: VersionRemoved;
  if (current && current.version_id === versionId) {
    if (noncurrentOnly) return undefined;
    await trx.deleteFrom('objects').where('bucket_id', '=', bucket.id).where('filename', '=', filename).execute();
    change = { count: -1, total: -current.size, noncurrent: 0 };
    removed = { filename, versionId, isDeleteMarker: false, wasCurrent: true, retired: { filename, ...current } };
  } else {
    let find = trx.deleteFrom('object_versions').where('bucket_id', '=', bucket.id).where('filename', '=', filename);
    find = versionId === null ? find.where('version_id', 'is', null) : find.where('version_id', '=', versionId);
    const row = await find.returning(['storage_key', 'size', 'inline', 'etag', 'is_delete_marker']).executeTakeFirst();
    if (!row) return undefined;
    change = { count: 0, total: -row.size, noncurrent: -row.size };
    const retired = row.storage_key === null ? null : { filename, storage_key: row.storage_key, size: row.size, inline: row.inline, etag: row.etag };
    removed = { filename, versionId, isDeleteMarker: row.is_delete_marker === 1, wasCurrent: false, retired };
  }
  if (removed.retired?.inline) await deleteInlineBytes(trx, [removed.retired.storage_key]);
  if (removed.wasCurrent || !current) change = addChange(change, await promoteNewest(trx, bucket.id, filename));
  return { removed, change };
}

export type { StoredVersion };
