/**
 * Object writes on PostgreSQL. Every write to a bucket's objects first locks
 * the bucket's row, then its owner's, then any multipart upload it completes
 * (the order repositories/multipart.ts keeps too), so they never deadlock. Uploads into
 * one bucket would then commit one at a time, each waiting for the previous
 * one's flush; instead the uploads that arrive while a bucket's commit runs
 * are committed together as its next batch, in one transaction with a fixed
 * number of statements (docs/performance.md).
 */
import type { Db } from '../schema.js';
import { lockRowValues } from '../repositories/version-locks.js';
import { foldName } from '../folded-names.js';
import { nameSortKey } from '../name-sort-keys.js';
import { KeyedBatcher, type Outcome } from '../keyed-batcher.js';
import { heldBesideOf, heldBesideRow, type Holding } from '../repositories/holdings.js';
import { recordPart } from '../repositories/multipart.js';
import { reserveUpload } from '../repositories/upload-reservations.js';
import type { BucketVersioning } from '../schema.js';
import { insertOutbox, withVersionMade } from '../repositories/webhook-outbox.js';
import { conditionRefusal, WriteRefused, type CommitInput, type Committed, type ObjectWrites } from './object-writes.js';
import {
  deleteInlineBytes,
  deleteVersionByIdWith,
  deleteVersionWith,
  editHeadersWith,
  editTagsWith,
  moveVersionWith,
  readInlineWith,
  removePurgedKeptWith,
  removePurgedWith,
} from './shared.js';
import { addChange, applyChange, displaceAt, NO_CHANGE } from './version-writes.js';
import { displace, type CurrentVersion, type NoncurrentNull } from './versioning.js';

const MAX_BATCH = 256;

export function postgresObjectWrites(db: Db): ObjectWrites {
  const batcher = new KeyedBatcher((bucketId: number, items: CommitInput[]) => commitBatch(db, bucketId, items), MAX_BATCH);
  return {
    commitUpload: (input) => batcher.run(input.bucketId, input),
    deleteVersion: deleteVersionWith(db, lockLiveBucket),
    deleteVersionById: deleteVersionByIdWith(db, lockLiveBucket),
    editHeaders: editHeadersWith(db),
    editTags: editTagsWith(db),
    moveVersion: moveVersionWith(db, lockLiveBucket),
    removePurged: removePurgedWith(db),
    removePurgedKept: removePurgedKeptWith(db),
    readInline: readInlineWith(db),
    reserveUpload: (input) => reserveUpload(db, input),
    recordPart: (input) => recordPart(db, input),
  };
}

/** Locks a live bucket's row for the rest of the transaction, or refuses with no-bucket. */
async function lockLiveBucket(trx: Db, bucketId: number): Promise<void> {
  const live = await trx.selectFrom('buckets').select('id').where('id', '=', bucketId).where('deleted_at', 'is', null).forUpdate().executeTakeFirst();
  if (!live) throw new WriteRefused('no-bucket');
}

/**
 * One bucket's batch: the locks once, then the uploads applied in order
 * against the locked usage (the cap refuses exactly those that would pass it,
 * as one at a time would), then every write in one statement.
 */
async function commitBatch(db: Db, bucketId: number, items: CommitInput[]): Promise<Outcome<Committed>[]> {
  return db.transaction().execute(async (trx) => {
    // Both rows in one round trip: PostgreSQL locks a join's rows in the order
    // of its FROM list, so bucket then owner, as every write does.
    const locked = await trx
      .selectFrom('buckets')
      .innerJoin('users', 'users.id', 'buckets.owner_id')
      .select(['buckets.owner_id', 'buckets.versioning', 'users.storage_used_bytes'])
      .where('buckets.id', '=', bucketId)
      .where('buckets.deleted_at', 'is', null)
      .forUpdate()
      .executeTakeFirst();
    if (!locked) return items.map(() => ({ ok: false as const, error: new WriteRefused('no-bucket') }));
    // Each upload the batch completes, with the bytes it holds until it ends (kept parts, a resumable length).
    const liveUploads = await lockUploads(trx, items);
    const liveResumables = await lockResumables(trx, items);
    const names = [...new Set(items.map((item) => item.filename))];
    const now = new Date().toISOString();
    // Under the locks, in one statement (whose snapshot sees every write that held them before): what the owner
    // holds beside its stored bytes (one row), joined to the current versions of the batch's names (none: that row alone).
    const rows = await trx
      .selectFrom(heldBesideRow(trx, locked.owner_id, now).as('held'))
      .leftJoin('objects', (join) => join.on('objects.bucket_id', '=', bucketId).on('objects.filename', 'in', names))
      .selectAll('held')
      .select(['objects.filename', 'objects.storage_key', 'objects.size', 'objects.inline', 'objects.etag', 'objects.version_id'])
      .execute();
    const existing = rows.flatMap((row) =>
      row.filename === null
        ? []
        : [{ filename: row.filename, storage_key: row.storage_key!, size: row.size!, inline: row.inline!, etag: row.etag!, version_id: row.version_id }],
    );
    const { versioning } = locked;
    // A suspended bucket's writes replace the names' noncurrent `null` versions too (versioning.ts).
    const noncurrentNulls = versioning === 'suspended' ? await noncurrentNullsOf(trx, bucketId, names) : new Map<string, NoncurrentNull>();
    let held: Holding = { used: locked.storage_used_bytes, ...heldBesideOf(rows[0]!) };
    // The reservations of this batch's files, which end with it.
    const reserved = await dropReservations(trx, items, now);

    // The current version of each name as the batch goes: committed, or earlier in this batch.
    const current = new Map<string, CurrentVersion & { committed: boolean }>(existing.map((row) => [row.filename, { ...row, committed: true }]));
    const latest = new Map<string, CommitInput>();
    let countDelta = 0;
    let bytesDelta = 0;
    const retiredInline: string[] = [];
    const outcomes = items.map((item): Outcome<Committed> => {
      // This commit's reservation ends with the batch whatever its outcome (dropped above): from here on it is not held.
      const own = item.reservationId === undefined ? 0 : (reserved.get(item.reservationId) ?? 0);
      if (item.reservationId !== undefined) reserved.delete(item.reservationId);
      held = { ...held, reserved: held.reserved - own };
      // Ended once: a second completion of the same upload in this batch finds it gone.
      const parts = item.endsUpload === undefined ? 0 : liveUploads.get(item.endsUpload);
      if (parts === undefined) return { ok: false, error: new WriteRefused('no-upload') };
      const resumable = item.endsResumable === undefined ? 0 : liveResumables.get(item.endsResumable);
      if (resumable === undefined) return { ok: false, error: new WriteRefused('no-resumable') };
      const old = current.get(item.filename);
      // Under the bucket's lock, and against earlier uploads of this batch: the condition holds for the version replaced.
      const refusal = conditionRefusal(item.condition, old);
      const displaced = displace(versioning, old, noncurrentNulls.get(item.filename), item.versionId);
      const delta = item.size - displaced.freedBytes;
      // Everything held but what this commit ends (its reservation, left out above; the upload it completes), which becomes the file.
      const beside = { ...held, parts: held.parts - parts, resumable: held.resumable - resumable };
      const refused = refusal ?? (item.quota.fits(beside, delta) ? null : 'over-cap');
      if (refused) return { ok: false, error: new WriteRefused(refused) };
      if (item.endsUpload !== undefined) liveUploads.delete(item.endsUpload);
      if (item.endsResumable !== undefined) liveResumables.delete(item.endsResumable);
      held = { ...beside, used: beside.used + delta };
      bytesDelta += delta;
      if (!old) countDelta += 1;
      // A committed inline version's bytes leave with this transaction; one from earlier in the batch was never written.
      if (old?.committed && old.inline) retiredInline.push(old.storage_key);
      noncurrentNulls.delete(item.filename);
      const versionId = displaced.versionId;
      current.set(item.filename, {
        storage_key: item.storageKey,
        size: item.size,
        inline: item.inlineBytes ? 1 : 0,
        etag: item.contentHash,
        version_id: versionId,
        committed: false,
      });
      latest.set(item.filename, item);
      const replaced = old ? { storage_key: old.storage_key, inline: old.inline } : null;
      return { ok: true, value: { replaced, overwrote: old !== undefined, versionId, versioning, endedParts: [] } };
    });
    if (latest.size === 0) return outcomes;
    await endUploads(trx, items, outcomes);
    await endResumables(trx, items, outcomes);
    // Each new version's lock, in the transaction that makes it: a version never exists unlocked. (One replaced
    // within the batch leaves a row that holds nothing: version-locks.ts counts only versions that exist.)
    const withLocks = items.filter((item, index) => item.lock !== undefined && outcomes[index]!.ok);
    if (withLocks.length > 0) {
      await trx
        .insertInto('version_locks')
        .values(withLocks.map((item) => lockRowValues(bucketId, item.filename, item.storageKey, item.lock!)))
        .execute();
    }
    if (versioning !== 'unversioned') {
      await commitVersioned(trx, { id: bucketId, owner_id: locked.owner_id }, versioning, items, outcomes, now);
      await insertOutbox(trx, committedOutbox(items, outcomes));
      return outcomes;
    }

    const versions = [...latest.values()];
    await deleteInlineBytes(trx, retiredInline);
    // The rest in one statement: the rows, the new small files' bytes, the
    // owner's usage and the bucket's counts as data-modifying CTEs (each runs
    // exactly once, and every row they touch is a different one).
    const writes = trx
      .with('owner_usage', (q) => q.updateTable('users').set({ storage_used_bytes: held.used }).where('id', '=', locked.owner_id).returning('id'))
      .with('bucket_counts', (q) =>
        q
          .updateTable('buckets')
          .set((eb) => ({ object_count: eb('object_count', '+', countDelta), total_bytes: eb('total_bytes', '+', bytesDelta) }))
          .where('id', '=', bucketId)
          .returning('id'),
      );
    const inline = versions.filter((item) => item.inlineBytes);
    // (Typed as `writes`, which Kysely cannot unify with it on its own; the statement below never refers to this CTE.)
    const source =
      inline.length > 0
        ? (writes.with('new_inline_blobs', (q) =>
            q
              .insertInto('inline_blobs')
              .values(inline.map((item) => ({ storage_key: item.storageKey, bytes: item.inlineBytes! })))
              .returning('storage_key'),
          ) as unknown as typeof writes)
        : writes;
    await source
      .insertInto('objects')
      .values(versions.map((item) => objectValues(bucketId, item, now)))
      .onConflict((conflict) =>
        conflict.columns(['bucket_id', 'filename']).doUpdateSet((eb) => ({
          storage_key: eb.ref('excluded.storage_key'),
          size: eb.ref('excluded.size'),
          content_type: eb.ref('excluded.content_type'),
          etag: eb.ref('excluded.etag'),
          inline: eb.ref('excluded.inline'),
          metadata: eb.ref('excluded.metadata'),
          tags: eb.ref('excluded.tags'),
          checksums: eb.ref('excluded.checksums'),
          upload_id: eb.ref('excluded.upload_id'),
          parts: eb.ref('excluded.parts'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute();
    // Issue 39: the webhook events of the batch's committed items, in its transaction and its order.
    await insertOutbox(trx, committedOutbox(items, outcomes));
    return outcomes;
  });
}

/** Issue 39: the webhook events of a batch's committed items, written in its transaction and its order. */
function committedOutbox(items: CommitInput[], outcomes: Outcome<Committed>[]) {
  return items.flatMap((item, index) => {
    const outcome = outcomes[index]!;
    return outcome.ok ? (withVersionMade(item.outbox, outcome.value.versioning, outcome.value.versionId) ?? []) : [];
  });
}

/** The noncurrent `null` versions of these names (suspended buckets). */
async function noncurrentNullsOf(trx: Db, bucketId: number, names: string[]): Promise<Map<string, NoncurrentNull>> {
  const rows = await trx
    .selectFrom('object_versions')
    .select(['id', 'filename', 'storage_key', 'size', 'inline'])
    .where('bucket_id', '=', bucketId)
    .where('filename', 'in', names)
    .where('version_id', 'is', null)
    .execute();
  return new Map(rows.map((row) => [row.filename, row]));
}

/**
 * A versioned bucket's batch, once the cap has admitted its commits: each
 * applied in turn (the versions it displaces, then its row), so every
 * intermediate version of a name is kept as one at a time would keep it;
 * then the counts and the usage as the steps moved them. Each commit's
 * retired version is the one these steps dropped.
 */
async function commitVersioned(
  trx: Db,
  bucket: { id: number; owner_id: number },
  versioning: BucketVersioning,
  items: CommitInput[],
  outcomes: Outcome<Committed>[],
  now: string,
): Promise<void> {
  let change = NO_CHANGE;
  for (const [index, item] of items.entries()) {
    const outcome = outcomes[index]!;
    if (!outcome.ok) continue;
    const at = await displaceAt(trx, { bucketId: bucket.id, filename: item.filename, versioning, offeredVersionId: item.versionId, now });
    change = addChange(change, { ...at.change, count: at.change.count + 1, total: at.change.total + item.size });
    outcome.value.replaced = at.displaced.retired;
    if (item.inlineBytes) await trx.insertInto('inline_blobs').values({ storage_key: item.storageKey, bytes: item.inlineBytes }).execute();
    await trx
      .insertInto('objects')
      .values({
        ...objectValues(bucket.id, item, now),
        created_at: at.current ? ((await createdAtOf(trx, bucket.id, item.filename)) ?? now) : now,
        version_id: at.displaced.versionId,
      })
      .execute();
  }
  if (!(await applyChange(trx, bucket, change))) throw new WriteRefused('no-bucket');
}

/** When a name's file was first made (a new version keeps it, as an overwrite in place does): its newest kept version's. */
async function createdAtOf(trx: Db, bucketId: number, filename: string): Promise<string | undefined> {
  const row = await trx
    .selectFrom('object_versions')
    .select('created_at')
    .where('bucket_id', '=', bucketId)
    .where('filename', '=', filename)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.created_at;
}

/** Locks the rows of the multipart uploads the batch completes; returns those that have not ended, with their kept parts' bytes. */
async function lockUploads(trx: Db, items: CommitInput[]): Promise<Map<string, number>> {
  const ids = items.flatMap((item) => (item.endsUpload !== undefined ? [item.endsUpload] : []));
  if (ids.length === 0) return new Map();
  // An update locks the rows as the part writes and aborts do (repositories/multipart.ts).
  const rows = await trx
    .updateTable('multipart_uploads')
    .set((eb) => ({ filename: eb.ref('filename') }))
    .where('id', 'in', ids)
    .returning('id')
    .execute();
  const live = new Map(rows.map((row) => [row.id, 0]));
  if (live.size === 0) return live;
  const parts = await trx
    .selectFrom('multipart_parts')
    .select((eb) => ['upload_id', eb.fn.sum<number | string>('size').as('bytes')])
    .where('upload_id', 'in', [...live.keys()])
    .groupBy('upload_id')
    .execute();
  for (const part of parts) live.set(part.upload_id, Number(part.bytes));
  return live;
}

/** Drops the reservations that held the batch's files while they streamed; returns the bytes each live one held. */
async function dropReservations(trx: Db, items: CommitInput[], now: string): Promise<Map<string, number>> {
  const ids = items.flatMap((item) => (item.reservationId !== undefined ? [item.reservationId] : []));
  if (ids.length === 0) return new Map();
  const rows = await trx.deleteFrom('upload_reservations').where('id', 'in', ids).returning(['id', 'bytes', 'expires_at']).execute();
  return new Map(rows.filter((row) => row.expires_at > now).map((row) => [row.id, Number(row.bytes)]));
}

/** Ends the uploads that committed items complete: their part rows and theirs go, and each item learns its parts' storage keys. */
async function endUploads(trx: Db, items: CommitInput[], outcomes: Outcome<Committed>[]): Promise<void> {
  const ending = new Map<string, Committed>();
  items.forEach((item, index) => {
    const outcome = outcomes[index]!;
    if (item.endsUpload !== undefined && outcome.ok) ending.set(item.endsUpload, outcome.value);
  });
  if (ending.size === 0) return;
  const ids = [...ending.keys()];
  const parts = await trx.deleteFrom('multipart_parts').where('upload_id', 'in', ids).returning(['upload_id', 'storage_key']).execute();
  for (const part of parts) ending.get(part.upload_id)!.endedParts.push(part.storage_key);
  await trx.deleteFrom('multipart_uploads').where('id', 'in', ids).execute();
}

/** Locks the rows of the resumable uploads the batch completes; returns those that have not ended, with their lengths. */
async function lockResumables(trx: Db, items: CommitInput[]): Promise<Map<string, number>> {
  const ids = items.flatMap((item) => (item.endsResumable !== undefined ? [item.endsResumable] : []));
  if (ids.length === 0) return new Map();
  const rows = await trx.selectFrom('resumable_uploads').select(['id', 'length']).where('id', 'in', ids).forUpdate().execute();
  return new Map(rows.map((row) => [row.id, Number(row.length)]));
}

/** Ends the resumable uploads that committed items complete. */
async function endResumables(trx: Db, items: CommitInput[], outcomes: Outcome<Committed>[]): Promise<void> {
  const ids = items.flatMap((item, index) => (item.endsResumable !== undefined && outcomes[index]!.ok ? [item.endsResumable] : []));
  if (ids.length > 0) await trx.deleteFrom('resumable_uploads').where('id', 'in', ids).execute();
}

/** A committed upload's row in `objects` (written now), as both the batch and a versioned write insert it. */
function objectValues(bucketId: number, item: CommitInput, now: string) {
  return {
    bucket_id: bucketId,
    filename: item.filename,
    storage_key: item.storageKey,
    size: item.size,
    content_type: item.contentType,
    etag: item.contentHash,
    inline: item.inlineBytes ? 1 : 0,
    metadata: item.metadata ?? null,
    tags: item.tags ?? null,
    checksums: item.checksums ?? null,
    upload_id: item.endsUpload ?? null,
    parts: item.parts ?? null,
    created_at: now,
    updated_at: now,
    name_folded: foldName(item.filename),
    name_sort: nameSortKey(item.filename),
  };
}
