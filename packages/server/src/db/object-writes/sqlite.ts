/**
 * Object writes on the embedded SQLite database. An upload's commit is a
 * handful of prepared statements in one synchronous function, run by the
 * group-commit writer (../sqlite-writer.ts): SQLite serialises all writes, so
 * no lock is needed, and plain statements cost a fraction of the same steps
 * through Kysely (docs/performance.md).
 */
import type SQLite from 'better-sqlite3';
import type { Holding } from '../repositories/holdings.js';
import type { BucketVersioning, Db } from '../schema.js';
import { foldName } from '../folded-names.js';
import { nameSortKey } from '../name-sort-keys.js';
import type { SqliteWriter } from '../sqlite-writer.js';
import { conditionRefusal, WriteRefused, type CommitInput, type Committed, type ObjectWrites } from './object-writes.js';
import {
  deleteVersionByIdWith,
  deleteVersionWith,
  editHeadersWith,
  editTagsWith,
  moveVersionWith,
  readInlineWith,
  removePurgedKeptWith,
  removePurgedWith,
} from './shared.js';
import { getByPosition, heldColumns, sqliteHoldingWrites } from './sqlite-holdings.js';
import { displace, type CurrentVersion, type NoncurrentNull } from './versioning.js';
import { KEPT_COLUMNS } from './version-writes.js';
import { INSERT_OUTBOX_SQL, outboxValues, withVersionMade } from '../repositories/webhook-outbox.js';

const STATEMENTS = {
  // The bucket's versioning, then the name's current version, if any (two lookups by key cost less than their join).
  versioning: 'select versioning from buckets where id = ?',
  old: 'select storage_key, size, inline, etag, version_id from objects where bucket_id = ? and filename = ?',
  noncurrentNull: 'select id, storage_key, size, inline from object_versions where bucket_id = ? and filename = ? and version_id is null',
  dropNoncurrent: 'delete from object_versions where id = ?',
  keepCurrent: `insert into object_versions (${KEPT_COLUMNS}, noncurrent_at, is_delete_marker) select ${KEPT_COLUMNS}, ?, 0 from objects where bucket_id = ? and filename = ?`,
  insertInline: 'insert into inline_blobs (storage_key, bytes) values (?, ?)',
  deleteInline: 'delete from inline_blobs where storage_key = ?',
  insertObject:
    'insert into objects (bucket_id, filename, storage_key, size, content_type, etag, inline, metadata, tags, checksums, upload_id, parts, created_at, updated_at, name_folded, name_sort, version_id) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  updateObject:
    'update objects set storage_key = ?, size = ?, content_type = ?, etag = ?, inline = ?, metadata = ?, tags = ?, checksums = ?, upload_id = ?, parts = ?, updated_at = ?, version_id = ? where bucket_id = ? and filename = ?',
  count:
    'update buckets set object_count = object_count + ?, total_bytes = total_bytes + ?, noncurrent_bytes = noncurrent_bytes + ? where id = ? and deleted_at is null',
  uploadLive: 'select 1 from multipart_uploads where id = ?',
  endParts: 'delete from multipart_parts where upload_id = ? returning storage_key',
  endUpload: 'delete from multipart_uploads where id = ?',
  endResumable: 'delete from resumable_uploads where id = ?',
  outbox: INSERT_OUTBOX_SQL,
  insertLock: 'insert into version_locks (storage_key, bucket_id, filename, mode, retain_until, legal_hold) values (?, ?, ?, ?, ?, ?)',
} as const;

type Prepared = { [K in keyof typeof STATEMENTS]: SQLite.Statement };

/** The usage moved, and what the cap counts read in the same statement: stored bytes before the move, and what is held beside. */
const usageMoved = (db: Db) => `update users set storage_used_bytes = storage_used_bytes + @delta where id = @user
  returning storage_used_bytes - @delta as used, ${heldColumns(db, ['reserved', 'parts', 'resumable'])}`;

export function sqliteObjectWrites(db: Db, sqlite: SQLite.Database, writer: SqliteWriter): ObjectWrites {
  // Prepared on first use: the tables exist only once migrations have run.
  let prepared: Prepared | null = null;
  const statements = () => {
    if (prepared) return prepared;
    prepared = Object.fromEntries(Object.entries(STATEMENTS).map(([name, text]) => [name, sqlite.prepare(text)])) as Prepared;
    prepared.versioning.pluck();
    return prepared;
  };
  let usage: ReturnType<typeof getByPosition> | null = null;
  const moveUsage = (params: { delta: number; user: number; now: string; except: string }) =>
    (usage ??= getByPosition(sqlite, usageMoved(db)))(params) as Holding | undefined;
  const holdings = sqliteHoldingWrites(db, sqlite, writer);

  function commit(input: CommitInput): Committed {
    const sql = statements();
    if (input.endsUpload !== undefined && sql.uploadLive.get(input.endsUpload) === undefined) throw new WriteRefused('no-upload');
    // Ended here first, so a terminated or expired upload refuses the commit before anything else changes.
    if (input.endsResumable !== undefined && sql.endResumable.run(input.endsResumable).changes === 0) throw new WriteRefused('no-resumable');
    const versioning = sql.versioning.get(input.bucketId) as BucketVersioning | undefined;
    if (versioning === undefined) throw new WriteRefused('no-bucket');
    const old = sql.old.get(input.bucketId, input.filename) as CurrentVersion | undefined;
    // Writes are serialised, so the condition holds for exactly the version this commit replaces.
    const refusal = conditionRefusal(input.condition, old);
    if (refusal) throw new WriteRefused(refusal);
    // What this write ends stops being held before the cap is asked (a refusal rolls it back): the
    // resumable upload (above) and the multipart upload's parts become the file (its reservation ended already).
    let endedParts: string[] = [];
    if (input.endsUpload !== undefined) {
      endedParts = (sql.endParts.all(input.endsUpload) as { storage_key: string }[]).map((part) => part.storage_key);
      sql.endUpload.run(input.endsUpload);
    }
    const noncurrentNull = versioning === 'suspended' ? (sql.noncurrentNull.get(input.bucketId, input.filename) as NoncurrentNull | undefined) : undefined;
    const displaced = displace(versioning, old, noncurrentNull, input.versionId);
    const delta = input.size - displaced.freedBytes;
    const now = new Date().toISOString();
    const held = moveUsage({ delta, user: input.ownerId, now, except: '' });
    // A refusal rolls back this write's savepoint, the usage moved above with it.
    if (!held) throw new WriteRefused('no-bucket');
    if (!input.quota.fits(held, delta)) throw new WriteRefused('over-cap');

    const inline = input.inlineBytes ? 1 : 0;
    const metadata = input.metadata ?? null;
    const tags = input.tags ?? null;
    const checksums = input.checksums ?? null;
    const uploadId = input.endsUpload ?? null;
    const parts = input.parts ?? null;
    if (input.inlineBytes) sql.insertInline.run(input.storageKey, input.inlineBytes);
    if (displaced.retired?.inline) sql.deleteInline.run(displaced.retired.storage_key);
    if (displaced.dropNoncurrent) sql.dropNoncurrent.run(displaced.dropNoncurrent.id);
    if (displaced.keepCurrent) sql.keepCurrent.run(now, input.bucketId, input.filename);
    if (old) {
      sql.updateObject.run(
        input.storageKey,
        input.size,
        input.contentType,
        input.contentHash,
        inline,
        metadata,
        tags,
        checksums,
        uploadId,
        parts,
        now,
        displaced.versionId,
        input.bucketId,
        input.filename,
      );
    } else {
      sql.insertObject.run(
        input.bucketId,
        input.filename,
        input.storageKey,
        input.size,
        input.contentType,
        input.contentHash,
        inline,
        metadata,
        tags,
        checksums,
        uploadId,
        parts,
        now,
        now,
        foldName(input.filename),
        nameSortKey(input.filename),
        displaced.versionId,
      );
    }
    if (sql.count.run(old ? 0 : 1, delta, displaced.noncurrentDelta, input.bucketId).changes === 0) throw new WriteRefused('no-bucket');
    // Issue 39: the webhook events of this commit, in its transaction.
    for (const event of withVersionMade(input.outbox, versioning, displaced.versionId) ?? []) sql.outbox.run(...outboxValues(event));
    const { lock } = input;
    if (lock) sql.insertLock.run(input.storageKey, input.bucketId, input.filename, lock.mode, lock.retainUntil, lock.legalHold ? 1 : 0);
    return { replaced: displaced.retired, overwrote: old !== undefined, versionId: displaced.versionId, versioning, endedParts };
  }

  // A commit with a reservation runs in a savepoint of its own, after the reservation is dropped.
  const commitInSavepoint = sqlite.transaction(commit);

  /**
   * A commit's reservation ends with it whatever its outcome (as in a
   * PostgreSQL batch), so a later write in the same group never counts the
   * reservation of one refused before it; a refusal rolls back only the rest.
   */
  function commitEndingReservation(input: CommitInput, reservationId: string): Committed | WriteRefused {
    holdings.dropReservation(reservationId);
    try {
      return commitInSavepoint(input);
    } catch (error) {
      if (error instanceof WriteRefused) return error;
      throw error;
    }
  }

  async function commitReserved(input: CommitInput, reservationId: string): Promise<Committed> {
    const outcome = await writer.write(() => commitEndingReservation(input, reservationId));
    if (outcome instanceof WriteRefused) throw outcome;
    return outcome;
  }

  return {
    // Small files hold no reservation: their commit is the group's savepoint alone.
    commitUpload: (input) => (input.reservationId === undefined ? writer.write(() => commit(input)) : commitReserved(input, input.reservationId)),
    // SQLite serialises all writes: no lock to take; the counts update checks the bucket is live.
    deleteVersion: deleteVersionWith(db, async () => {}),
    deleteVersionById: deleteVersionByIdWith(db, async () => {}),
    editHeaders: editHeadersWith(db),
    editTags: editTagsWith(db),
    moveVersion: moveVersionWith(db, async () => {}),
    removePurged: removePurgedWith(db),
    removePurgedKept: removePurgedKeptWith(db),
    readInline: readInlineWith(db),
    reserveUpload: holdings.reserveUpload,
    recordPart: holdings.recordPart,
  };
}
