/**
 * Resumable (tus) uploads in progress. Creating one holds its declared length
 * against the owner's cap, checked under the owner's row lock as every
 * reservation is (holdings.ts counts live uploads' lengths), so racing uploads
 * never together pass the cap; the object's commit ends it in its own
 * transaction (object-writes: endsResumable), so its bytes count once.
 */
import type { Selectable } from 'kysely';
import type { Db, ResumableUploadsTable } from '../schema.js';
import { holding, type CapRule } from './holdings.js';

/** An upload as the domain sees it (the writer's lease is resumable-writers.ts's alone). */
export type ResumableUploadRow = Omit<Selectable<ResumableUploadsTable>, 'writer' | 'writer_until' | 'writer_wanted'>;

/** Records a new upload if its length fits the cap beside everything else the owner holds; false when it does not. */
export function insertResumableUpload(db: Db, row: ResumableUploadRow, quota: CapRule): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const held = await holding(trx, row.owner_id, row.created_at);
    if (!quota.fits(held, row.length)) return false;
    await trx.insertInto('resumable_uploads').values(row).execute();
    return true;
  });
}

export function findResumableUpload(db: Db, id: string): Promise<ResumableUploadRow | undefined> {
  return db.selectFrom('resumable_uploads').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Moves an upload's offset from `from` to `to` (and its type, once its first
 * bytes were read); false when another request moved it first or it ended.
 */
export async function advanceResumableUpload(db: Db, id: string, change: { from: number; to: number; contentType?: string; at: string }): Promise<boolean> {
  const result = await db
    .updateTable('resumable_uploads')
    .set({ received: change.to, updated_at: change.at, ...(change.contentType !== undefined ? { content_type: change.contentType } : {}) })
    .where('id', '=', id)
    .where('received', '=', change.from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Ends an upload without a file (terminated, expired, refused): what it was, or undefined when it had already ended. */
export function removeResumableUpload(db: Db, id: string): Promise<Pick<ResumableUploadRow, 'owner_id' | 'bucket_id' | 'filename'> | undefined> {
  return db.deleteFrom('resumable_uploads').where('id', '=', id).returning(['owner_id', 'bucket_id', 'filename']).executeTakeFirst();
}

/** Up to `limit` ids of uploads that received nothing since `cutoff` (an ISO time), oldest first. */
export async function resumableUploadsIdleSince(db: Db, cutoff: string, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('resumable_uploads').select('id').where('updated_at', '<', cutoff).orderBy('updated_at').limit(limit).execute();
  return rows.map((row) => row.id);
}

/**
 * The writer's lease (domain/resumable-writers.ts): `writer` takes the upload
 * when nobody holds it or the holder's lease ran out by `now`. 'held' when
 * another holds it; 'gone' when the upload ended.
 */
export async function claimResumableWriter(db: Db, id: string, writer: string, until: number, now: number): Promise<'claimed' | 'held' | 'gone'> {
  const result = await db
    .updateTable('resumable_uploads')
    .set({ writer, writer_until: until, writer_wanted: 0 })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('writer', 'is', null), eb('writer_until', '<', now)]))
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) > 0) return 'claimed';
  const row = await db.selectFrom('resumable_uploads').select('id').where('id', '=', id).executeTakeFirst();
  return row ? 'held' : 'gone';
}

/** Asks whoever holds the upload's lease to stop (a newer request wants it). */
export async function askResumableWriter(db: Db, id: string): Promise<void> {
  await db.updateTable('resumable_uploads').set({ writer_wanted: 1 }).where('id', '=', id).where('writer', 'is not', null).execute();
}

/** Extends `writer`'s lease; `held` false when it lost it (or the upload ended), `wanted` when a newer request asked it to stop. */
export async function renewResumableWriter(db: Db, id: string, writer: string, until: number): Promise<{ held: boolean; wanted: boolean }> {
  const row = await db
    .updateTable('resumable_uploads')
    .set({ writer_until: until })
    .where('id', '=', id)
    .where('writer', '=', writer)
    .returning('writer_wanted')
    .executeTakeFirst();
  return { held: row !== undefined, wanted: row !== undefined && Number(row.writer_wanted) !== 0 };
}

/** Gives up `writer`'s lease (nothing when it no longer holds it). */
export async function releaseResumableWriter(db: Db, id: string, writer: string): Promise<void> {
  await db
    .updateTable('resumable_uploads')
    .set({ writer: null, writer_until: null, writer_wanted: 0 })
    .where('id', '=', id)
    .where('writer', '=', writer)
    .execute();
}
