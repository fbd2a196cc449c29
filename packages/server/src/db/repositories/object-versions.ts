/**
 * Queries that read a file's versions: its current one in objects, the
 * others (noncurrent versions and delete markers) in object_versions, newest
 * first by id (migration 0020). Writes are in ../object-writes/.
 */
import { sql } from 'kysely';
import type { Db, ObjectRow, ObjectVersionRow } from '../schema.js';
import { startingWith } from '../name-ranges.js';

/** A version of a file, current or not, as listings show it. */
export interface VersionEntry {
  filename: string;
  /** Null: the `null` version. */
  version_id: string | null;
  is_latest: boolean;
  is_delete_marker: boolean;
  size: number;
  etag: string;
  /** When this version was written (S3's LastModified). */
  last_modified: string;
  /** A delete marker's maker (principal kind:id), else null. */
  deleted_by: string | null;
  /** Orders a name's versions: higher is newer; the current version's is CURRENT_ORDER. */
  order: number;
}

/** Above every id: the current version sorts first among a name's versions. */
export const CURRENT_ORDER = 9_000_000_000_000_000;

/** A file's versions, newest first: `limit` of them, older than the one at `afterOrder` (VersionEntry.order) when given. */
export async function listFileVersions(
  db: Db,
  bucketId: number,
  filename: string,
  page: { afterOrder?: number | undefined; limit: number },
): Promise<VersionEntry[]> {
  const after = page.afterOrder === undefined ? {} : { afterName: filename, afterOrder: page.afterOrder };
  return listVersionPage(db, bucketId, { prefix: filename, exactName: filename, limit: page.limit, ...after });
}

/**
 * A page of versions in S3's order (names ascending, each name's newest
 * first), starting after (`afterName`, `afterOrder`): the current versions
 * of objects and the kept ones of object_versions, merged by one query.
 */
export async function listVersionPage(
  db: Db,
  bucketId: number,
  page: { prefix: string; exactName?: string; afterName?: string; afterOrder?: number; fromName?: string; limit: number },
): Promise<VersionEntry[]> {
  const current = db
    .selectFrom('objects')
    .select([
      'filename',
      'version_id',
      sql<number>`1`.as('is_latest'),
      sql<number>`0`.as('is_delete_marker'),
      'size',
      'etag',
      'updated_at as last_modified',
      sql<string | null>`null`.as('deleted_by'),
      sql<number>`${sql.lit(CURRENT_ORDER)}`.as('ord'),
    ])
    .where('bucket_id', '=', bucketId);
  const kept = db
    .selectFrom('object_versions as v')
    .select([
      'v.filename',
      'v.version_id',
      // The newest kept version is the latest only when the name has no current one (then it is a delete marker).
      sql<number>`case when v.id = (select max(w.id) from object_versions w where w.bucket_id = v.bucket_id and w.filename = v.filename)
        and not exists (select 1 from objects o where o.bucket_id = v.bucket_id and o.filename = v.filename) then 1 else 0 end`.as('is_latest'),
      'v.is_delete_marker',
      'v.size',
      'v.etag',
      'v.updated_at as last_modified',
      'v.deleted_by',
      'v.id as ord',
    ])
    .where('v.bucket_id', '=', bucketId);
  let q = db.selectFrom(current.unionAll(kept).as('all_versions')).selectAll();
  if (page.exactName !== undefined) q = q.where('filename', '=', page.exactName);
  else q = q.$call(startingWith('filename', page.prefix));
  if (page.fromName !== undefined) q = q.where('filename', '>=', page.fromName);
  if (page.afterName !== undefined) {
    const { afterName, afterOrder } = page;
    q =
      afterOrder === undefined
        ? q.where('filename', '>', afterName)
        : q.where((eb) => eb.or([eb('filename', '>', afterName), eb.and([eb('filename', '=', afterName), eb('ord', '<', afterOrder)])]));
  }
  const rows = await q.orderBy('filename').orderBy('ord', 'desc').limit(page.limit).execute();
  return rows.map((row) => ({
    filename: row.filename,
    version_id: row.version_id,
    is_latest: Number(row.is_latest) === 1,
    is_delete_marker: Number(row.is_delete_marker) === 1,
    size: Number(row.size),
    etag: row.etag,
    last_modified: row.last_modified,
    deleted_by: row.deleted_by,
    order: Number(row.ord),
  }));
}

/** Where a version id sits among its name's versions (VersionEntry.order); undefined when the name has no such version. */
export async function versionOrder(db: Db, bucketId: number, filename: string, versionId: string | null): Promise<number | undefined> {
  const current = await db.selectFrom('objects').select('version_id').where('bucket_id', '=', bucketId).where('filename', '=', filename).executeTakeFirst();
  if (current && current.version_id === versionId) return CURRENT_ORDER;
  const row = await keptVersionQuery(db, bucketId, filename, versionId).select('id').executeTakeFirst();
  return row?.id;
}

function keptVersionQuery(db: Db, bucketId: number, filename: string, versionId: string | null) {
  const q = db.selectFrom('object_versions').where('bucket_id', '=', bucketId).where('filename', '=', filename);
  return versionId === null ? q.where('version_id', 'is', null) : q.where('version_id', '=', versionId);
}

/** A kept (noncurrent) version or delete marker by its id (null: the `null` version). */
export function findKeptVersion(db: Db, bucketId: number, filename: string, versionId: string | null): Promise<ObjectVersionRow | undefined> {
  return keptVersionQuery(db, bucketId, filename, versionId).selectAll().executeTakeFirst();
}

/** A kept version as an ObjectRow, to be read like a current one (its bytes, headers, tags). */
export function keptAsObjectRow(row: ObjectVersionRow & { storage_key: string }): ObjectRow {
  return {
    bucket_id: row.bucket_id,
    filename: row.filename,
    storage_key: row.storage_key,
    size: row.size,
    content_type: row.content_type,
    etag: row.etag,
    created_at: row.created_at,
    updated_at: row.updated_at,
    inline: row.inline,
    metadata: row.metadata,
    checksums: row.checksums,
    tags: row.tags,
    version_id: row.version_id,
  };
}

/** The newest kept version of a name: a delete marker when the name has no current version (the invariant of version-writes.ts). */
export function newestKept(db: Db, bucketId: number, filename: string): Promise<ObjectVersionRow | undefined> {
  return db
    .selectFrom('object_versions')
    .selectAll()
    .where('bucket_id', '=', bucketId)
    .where('filename', '=', filename)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** A deleted file of the trash: a name whose newest version is a delete marker, and who deleted it when. */
export interface TrashEntry {
  filename: string;
  deleted_at: string;
  deleted_by: string | null;
  /** The delete marker's version id (null: the `null` version). */
  marker_version_id: string | null;
  /** Whether a version before the marker is left for a restore to bring back. */
  restorable: boolean;
  /** That version's id (null: the `null` version, or none when `restorable` is false). */
  restorable_version_id: string | null;
  size: number;
}

/** A page of the trash, by name, after `after`. */
export async function listTrash(db: Db, bucketId: number, page: { prefix: string; after?: string; limit: number }): Promise<TrashEntry[]> {
  let q = db
    .selectFrom('object_versions as v')
    .select([
      'v.filename',
      'v.updated_at as deleted_at',
      'v.deleted_by',
      'v.version_id as marker_version_id',
      (eb) =>
        eb
          .selectFrom('object_versions as p')
          .select('p.version_id')
          .whereRef('p.bucket_id', '=', 'v.bucket_id')
          .whereRef('p.filename', '=', 'v.filename')
          .where('p.is_delete_marker', '=', 0)
          .orderBy('p.id', 'desc')
          .limit(1)
          .as('restorable_version_id'),
      (eb) =>
        eb
          .selectFrom('object_versions as p')
          .select('p.size')
          .whereRef('p.bucket_id', '=', 'v.bucket_id')
          .whereRef('p.filename', '=', 'v.filename')
          .where('p.is_delete_marker', '=', 0)
          .orderBy('p.id', 'desc')
          .limit(1)
          .as('size'),
    ])
    .where('v.bucket_id', '=', bucketId)
    .where('v.is_delete_marker', '=', 1)
    .where((eb) =>
      eb(
        'v.id',
        '=',
        eb
          .selectFrom('object_versions as w')
          .select((w) => w.fn.max('w.id').as('m'))
          .whereRef('w.bucket_id', '=', 'v.bucket_id')
          .whereRef('w.filename', '=', 'v.filename'),
      ),
    )
    .where((eb) =>
      eb.not(
        eb.exists(eb.selectFrom('objects as o').select('o.bucket_id').whereRef('o.bucket_id', '=', 'v.bucket_id').whereRef('o.filename', '=', 'v.filename')),
      ),
    );
  q = q.$call(startingWith('v.filename', page.prefix));
  if (page.after !== undefined) q = q.where('v.filename', '>', page.after);
  const rows = await q.orderBy('v.filename').limit(page.limit).execute();
  // A size is never null in a row, so a null size says there is no version to restore; a null version id alone may be the null version's.
  return rows.map((row) => ({ ...row, size: Number(row.size ?? 0), restorable: row.size !== null, restorable_version_id: row.restorable_version_id ?? null }));
}

/** The next kept versions of a deleted bucket to remove (after its current ones). */
export function keptVersionsToPurge(db: Db, bucketId: number, limit: number): Promise<Pick<ObjectVersionRow, 'id' | 'storage_key' | 'inline'>[]> {
  return db.selectFrom('object_versions').select(['id', 'storage_key', 'inline']).where('bucket_id', '=', bucketId).orderBy('id').limit(limit).execute();
}
