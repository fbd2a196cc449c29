/** The writes both dialects make the same way, through Kysely. */
import type { BucketVersioning, Db } from '../schema.js';
import { deleteInlineBytes } from './inline-bytes.js';
import { foldName } from '../folded-names.js';
import { nameSortKey } from '../name-sort-keys.js';
import { OBJECT_COLUMNS, type RemovedVersion, type StoredVersion } from '../repositories/objects.js';
import { keptAsObjectRow } from '../repositories/object-versions.js';
import { insertOutbox, withVersionMade } from '../repositories/webhook-outbox.js';
import { findLocks, lockRowValues } from '../repositories/version-locks.js';
import { WriteRefused, type Deleted, type LockGuard, type MoveInput, type Moved, type ObjectWrites } from './object-writes.js';
import {
  addChange,
  applyChange,
  currentVersionOf,
  displaceAt,
  insertMarker,
  NO_CHANGE,
  removeVersionById,
  versioningOf,
  type CountChange,
} from './version-writes.js';

export { deleteInlineBytes };

/**
 * Deletes a file's current version. Unversioned buckets: its row goes, as it
 * always has. Versioned: a delete marker becomes the newest version, and the
 * current version is kept or dropped as S3's rules say (version-writes.ts).
 *
 * @param lockBucket locks the bucket's row first (PostgreSQL), in the order
 *   every write to a bucket's objects takes its locks, so they never deadlock.
 */
export function deleteVersionWith(db: Db, lockBucket: (trx: Db, bucketId: number) => Promise<void>): ObjectWrites['deleteVersion'] {
  return (bucket, filename, options) =>
    db.transaction().execute(async (trx): Promise<Deleted> => {
      await lockBucket(trx, bucket.id);
      const versioning = await versioningOf(trx, bucket.id);
      if (versioning === undefined) throw new WriteRefused('no-bucket');
      if (options.onlyStorageKey !== undefined) {
        // Under the bucket's lock: the current version cannot change before this transaction ends.
        const current = await trx
          .selectFrom('objects')
          .select('storage_key')
          .where('bucket_id', '=', bucket.id)
          .where('filename', '=', filename)
          .executeTakeFirst();
        if (current?.storage_key !== options.onlyStorageKey) throw new WriteRefused('no-file');
      }
      if (versioning === 'unversioned') {
        const old = await trx
          .deleteFrom('objects')
          .where('bucket_id', '=', bucket.id)
          .where('filename', '=', filename)
          .returning(['filename', 'storage_key', 'size', 'inline', 'etag'])
          .executeTakeFirst();
        if (!old) throw new WriteRefused('no-file');
        await askGuard(trx, old.storage_key, options.lockGuard);
        if (old.inline) await deleteInlineBytes(trx, [old.storage_key]);
        // A bucket deleted meanwhile already gave back its bytes: roll back rather than count them twice.
        if (!(await applyChange(trx, bucket, { count: -1, total: -old.size, noncurrent: 0 }))) throw new WriteRefused('no-bucket');
        // Issue 39: the webhook events of this change, in its transaction.
        await insertOutbox(trx, options.outbox);
        return { removed: old, retired: old, marker: null, versioning };
      }
      const now = new Date().toISOString();
      const at = { bucketId: bucket.id, filename, versioning, offeredVersionId: options.markerVersionId, now };
      const { displaced, current, change } = await displaceAt(trx, at);
      if (!current && !options.evenIfAbsent) throw new WriteRefused('no-file');
      // A suspended bucket's delete drops its `null` version (current or not) for good.
      if (displaced.retired) await askGuard(trx, displaced.retired.storage_key, options.lockGuard);
      await insertMarker(trx, { bucketId: bucket.id, filename, versionId: displaced.versionId, deletedBy: options.deletedBy, now });
      if (!(await applyChange(trx, bucket, change))) throw new WriteRefused('no-bucket');
      // The marker's id, as S3's DeleteMarkerCreated event shows it.
      await insertOutbox(trx, withVersionMade(options.outbox, versioning, displaced.versionId));
      return {
        removed: current ? { filename, ...current } : null,
        retired: displaced.retired,
        marker: { versionId: displaced.versionId },
        versioning,
      };
    });
}

/**
 * Asks a delete's lock guard (object-writes.ts) about a version it removes,
 * with the version's lock row read here, in the delete's transaction after
 * its bucket's lock: a lock set before the delete took that lock is seen; a
 * throw rolls the whole delete back.
 */
async function askGuard(trx: Db, storageKey: string, lockGuard: LockGuard | undefined): Promise<void> {
  if (lockGuard !== undefined) lockGuard((await findLocks(trx, [storageKey])).get(storageKey));
}

/** Deletes one version for good by its id (null: the `null` version); refused with no-version when the name has none such. */
export function deleteVersionByIdWith(db: Db, lockBucket: (trx: Db, bucketId: number) => Promise<void>): ObjectWrites['deleteVersionById'] {
  return (bucket, filename, versionId, lockGuard, options = {}) =>
    db.transaction().execute(async (trx) => {
      await lockBucket(trx, bucket.id);
      if ((await versioningOf(trx, bucket.id)) === undefined) throw new WriteRefused('no-bucket');
      const outcome = await removeVersionById(trx, bucket, filename, versionId, options.noncurrentOnly === true);
      if (!outcome) throw new WriteRefused('no-version');
      if (outcome.removed.retired) await askGuard(trx, outcome.removed.retired.storage_key, lockGuard);
      if (!(await applyChange(trx, bucket, outcome.change))) throw new WriteRefused('no-bucket');
      // Issue 39: the webhook events of this change, in its transaction.
      await insertOutbox(trx, options.outbox);
      return outcome.removed;
    });
}

/** The columns an in-place edit of a file's row may change: never its bytes, name or key. */
type RowEdit = { content_type?: string; metadata?: string | null; updated_at?: string; tags?: string | null };

/**
 * Rewrites a file's row in place, for the version named (its storage key) in a live bucket (a bucket being deleted
 * takes its files with it); null when that version is no longer there. One statement and no count changes, so no
 * transaction.
 */
async function editVersion(db: Db, input: { bucketId: number; filename: string; storageKey: string }, set: RowEdit) {
  const row = await db
    .updateTable('objects')
    .set(set)
    .where('bucket_id', '=', input.bucketId)
    .where('filename', '=', input.filename)
    .where('storage_key', '=', input.storageKey)
    .where((eb) => eb.exists(eb.selectFrom('buckets').select('id').where('id', '=', input.bucketId).where('deleted_at', 'is', null)))
    .returning(OBJECT_COLUMNS)
    .executeTakeFirst();
  return row ?? null;
}

/** A file's type, stored headers and user metadata; updated_at moves. */
export function editHeadersWith(db: Db): ObjectWrites['editHeaders'] {
  return (input) => editVersion(db, input, { content_type: input.contentType, metadata: input.metadata, updated_at: input.updatedAt });
}

/** A file's tags; S3 keeps Last-Modified as it was. `orKept`: the version may be a kept one, edited in its row there. */
export function editTagsWith(db: Db): ObjectWrites['editTags'] {
  return async (input) => (await editVersion(db, input, { tags: input.tags })) ?? (input.orKept ? editKeptTags(db, input) : null);
}

/**
 * A kept version's tags, by its storage key (unique: blob keys are never reused), in a live bucket; null when it is
 * gone. A version leaves objects for object_versions in one transaction, so it is in one of the two when this runs.
 */
async function editKeptTags(db: Db, input: { bucketId: number; filename: string; storageKey: string; tags: string | null }) {
  const row = await db
    .updateTable('object_versions')
    .set({ tags: input.tags })
    .where('bucket_id', '=', input.bucketId)
    .where('filename', '=', input.filename)
    .where('storage_key', '=', input.storageKey)
    .where((eb) => eb.exists(eb.selectFrom('buckets').select('id').where('id', '=', input.bucketId).where('deleted_at', 'is', null)))
    .returningAll()
    .executeTakeFirst();
  return row?.storage_key ? keptAsObjectRow({ ...row, storage_key: row.storage_key }) : null;
}

/**
 * @param lockBucket as deleteVersionWith's; a move between two buckets locks
 *   both, the lower id first, so two moves the other way round never deadlock.
 */
export function moveVersionWith(db: Db, lockBucket: (trx: Db, bucketId: number) => Promise<void>): ObjectWrites['moveVersion'] {
  return (input) =>
    db.transaction().execute(async (trx) => {
      const { from, to } = input;
      for (const bucketId of [...new Set([from.bucketId, to.bucketId])].sort((a, b) => a - b)) await lockBucket(trx, bucketId);
      const source = await trx
        .selectFrom('objects')
        .select('size')
        .where('bucket_id', '=', from.bucketId)
        .where('filename', '=', from.filename)
        .where('storage_key', '=', from.storageKey)
        .executeTakeFirst();
      if (!source) throw new WriteRefused('no-file');
      // The version leaves its name: object lock's say, under the bucket's lock.
      await askGuard(trx, from.storageKey, input.lockGuard);
      const fromVersioning = await versioningOf(trx, from.bucketId);
      const toVersioning = from.bucketId === to.bucketId ? fromVersioning : await versioningOf(trx, to.bucketId);
      if (fromVersioning === undefined || toVersioning === undefined) throw new WriteRefused('no-bucket');
      if (fromVersioning !== 'unversioned' || toVersioning !== 'unversioned') {
        const { moved, made, marker } = await moveVersioned(trx, input, source.size, fromVersioning, toVersioning);
        await lockMoved(trx, input);
        // Each event with the version it is about: the marker left at the old name, the version made at the new one.
        const outbox = input.outbox?.flatMap((event) =>
          event.event === 'object.removed' ? withVersionMade([event], fromVersioning, marker) : withVersionMade([event], toVersioning, made),
        );
        await insertOutbox(trx, outbox);
        return moved;
      }
      const replaced = await takeTarget(trx, input);
      const row = await repoint(trx, input, null);
      // What each bucket gains and loses (within one bucket, only an overwritten version leaves); each
      // update also finds its bucket still live, as SQLite takes no lock that would.
      const changes =
        from.bucketId === to.bucketId
          ? [{ bucketId: to.bucketId, count: replaced ? -1 : 0, bytes: -(replaced?.size ?? 0) }]
          : [
              { bucketId: from.bucketId, count: -1, bytes: -row.size },
              { bucketId: to.bucketId, count: replaced ? 0 : 1, bytes: row.size - (replaced?.size ?? 0) },
            ];
      for (const change of changes) {
        const counted = await trx
          .updateTable('buckets')
          .set((eb) => ({ object_count: eb('object_count', '+', change.count), total_bytes: eb('total_bytes', '+', change.bytes) }))
          .where('id', '=', change.bucketId)
          .where('deleted_at', 'is', null)
          .executeTakeFirst();
        if (Number(counted.numUpdatedRows) === 0) throw new WriteRefused('no-bucket');
      }
      if (replaced && replaced.size !== 0) {
        await trx
          .updateTable('users')
          .set((eb) => ({ storage_used_bytes: eb('storage_used_bytes', '-', replaced.size) }))
          .where('id', '=', input.ownerId)
          .execute();
      }
      await lockMoved(trx, input);
      // Issue 39: the webhook events of this change, in its transaction.
      await insertOutbox(trx, input.outbox);
      return { row, replaced, retired: replaced ? [replaced] : [] } satisfies Moved;
    });
}

/**
 * The moved version's lock under its new name (MoveInput.lock). A lock row is keyed by the bytes' key, which a move
 * keeps: one its old name left (an ended retention: a running one refused the move) is replaced.
 */
async function lockMoved(trx: Db, input: MoveInput): Promise<void> {
  if (input.lock === undefined) return;
  const values = lockRowValues(input.to.bucketId, input.to.filename, input.from.storageKey, input.lock);
  const { storage_key: _key, ...update } = values;
  await trx
    .insertInto('version_locks')
    .values(values)
    .onConflict((conflict) => conflict.column('storage_key').doUpdateSet(update))
    .execute();
}

/** The file's row under its new name (and bucket), with the version id it takes there. */
function repoint(trx: Db, input: MoveInput, versionId: string | null | undefined) {
  const { from, to } = input;
  return trx
    .updateTable('objects')
    .set({
      bucket_id: to.bucketId,
      filename: to.filename,
      name_folded: foldName(to.filename),
      name_sort: nameSortKey(to.filename),
      ...(input.contentType !== undefined ? { content_type: input.contentType } : {}),
      ...(versionId !== undefined ? { version_id: versionId } : {}),
    })
    .where('bucket_id', '=', from.bucketId)
    .where('filename', '=', from.filename)
    .returning(OBJECT_COLUMNS)
    .executeTakeFirstOrThrow();
}

/**
 * A move where either bucket is versioned, as a Drive user expects of a
 * rename: the file's bytes go with it (never shared by two rows, so no
 * deletion can pull them from under another version); a version it
 * overwrites is kept or dropped as a new upload's would be; the old name
 * keeps its history under a delete marker, so it can be restored.
 */
async function moveVersioned(
  trx: Db,
  input: MoveInput,
  size: number,
  fromVersioning: BucketVersioning,
  toVersioning: BucketVersioning,
): Promise<{ moved: Moved; made: string | null; marker: string | null }> {
  const { from, to } = input;
  const now = new Date().toISOString();
  const target = await currentVersionOf(trx, to.bucketId, to.filename);
  if (target && !input.overwrite) throw new WriteRefused('exists');
  const retired: StoredVersion[] = [];
  const changes = new Map<number, CountChange>([
    [from.bucketId, NO_CHANGE],
    [to.bucketId, NO_CHANGE],
  ]);
  const add = (bucketId: number, change: Partial<CountChange>) => changes.set(bucketId, addChange(changes.get(bucketId)!, change));
  const atTarget = await displaceAt(trx, { bucketId: to.bucketId, filename: to.filename, versioning: toVersioning, offeredVersionId: input.versionId, now });
  add(to.bucketId, atTarget.change);
  if (atTarget.displaced.retired) retired.push(atTarget.displaced.retired);
  const made = toVersioning === 'enabled' ? input.versionId : null;
  const row = await repoint(trx, input, made);
  let marker: string | null = null;
  add(from.bucketId, { count: -1, total: -size });
  add(to.bucketId, { count: 1, total: size });
  if (fromVersioning !== 'unversioned') {
    const atSource = await displaceAt(trx, {
      bucketId: from.bucketId,
      filename: from.filename,
      versioning: fromVersioning,
      offeredVersionId: input.markerVersionId,
      now,
    });
    add(from.bucketId, atSource.change);
    if (atSource.displaced.retired) retired.push(atSource.displaced.retired);
    marker = atSource.displaced.versionId;
    await insertMarker(trx, { bucketId: from.bucketId, filename: from.filename, versionId: marker, deletedBy: input.movedBy, now });
  }
  for (const [bucketId, change] of changes) {
    if (!(await applyChange(trx, { id: bucketId, owner_id: input.ownerId }, change))) throw new WriteRefused('no-bucket');
  }
  return { moved: { row, replaced: target ? { storage_key: target.storage_key, inline: target.inline } : null, retired }, made, marker };
}

/** The version at a move's new name: refused unless the move overwrites, else its row (and inline bytes) removed. */
async function takeTarget(trx: Db, input: MoveInput): Promise<RemovedVersion | null> {
  const target = trx.deleteFrom('objects').where('bucket_id', '=', input.to.bucketId).where('filename', '=', input.to.filename);
  if (!input.overwrite) {
    const present = await trx
      .selectFrom('objects')
      .select('filename')
      .where('bucket_id', '=', input.to.bucketId)
      .where('filename', '=', input.to.filename)
      .executeTakeFirst();
    if (present) throw new WriteRefused('exists');
    return null;
  }
  const old = await target.returning(['filename', 'storage_key', 'size', 'inline', 'etag']).executeTakeFirst();
  if (old?.inline) await deleteInlineBytes(trx, [old.storage_key]);
  return old ?? null;
}

export function removePurgedWith(db: Db): ObjectWrites['removePurged'] {
  return async (bucketId, versions) => {
    if (versions.length === 0) return [];
    return db.transaction().execute(async (trx) => {
      await deleteInlineBytes(
        trx,
        versions.filter((version) => version.inline).map((version) => version.storage_key),
      );
      return trx
        .deleteFrom('objects')
        .where('bucket_id', '=', bucketId)
        .where(
          'storage_key',
          'in',
          versions.map((version) => version.storage_key),
        )
        .returning(['filename', 'storage_key', 'size', 'inline', 'etag'])
        .execute();
    });
  };
}

export function removePurgedKeptWith(db: Db): ObjectWrites['removePurgedKept'] {
  return async (bucketId, versions) => {
    if (versions.length === 0) return;
    await db.transaction().execute(async (trx) => {
      await deleteInlineBytes(
        trx,
        versions.flatMap((version) => (version.inline && version.storage_key !== null ? [version.storage_key] : [])),
      );
      await trx
        .deleteFrom('object_versions')
        .where('bucket_id', '=', bucketId)
        .where(
          'id',
          'in',
          versions.map((version) => version.id),
        )
        .execute();
    });
  };
}

export function readInlineWith(db: Db): ObjectWrites['readInline'] {
  return async (storageKey) => {
    const row = await db.selectFrom('inline_blobs').select('bytes').where('storage_key', '=', storageKey).executeTakeFirst();
    // PostgreSQL's bytea and SQLite's blob both arrive as Buffers.
    return row?.bytes;
  };
}

export type { RemovedVersion, StoredVersion };
