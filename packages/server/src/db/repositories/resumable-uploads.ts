/**
 * Resumable (tus) uploads in progress. Creating one holds its declared length
 * against the owner's cap, checked under the owner's row lock as every
 * reservation is (holdings.ts counts live uploads' lengths), so racing uploads
 * never together pass the cap; the object's commit ends it in its own
 * transaction (object-writes: endsResumable), so its bytes count once.
 */
import type { Db } from '../database.js';
import type { ResumableUploadsTable } from '../schema.js';
import { holding } from './holdings.js';

export type ResumableUploadRow = ResumableUploadsTable;

/** Records a new upload if its length fits the cap beside everything else the owner holds; false when it does not. */
export function insertResumableUpload(db: Db, row: ResumableUploadRow, cap: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const held = await holding(trx, row.owner_id, row.created_at);
    if (held.used + held.reserved + row.length > cap) return false;
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

/** Ends an upload without a file (terminated, expired, refused); false when it had already ended. */
export async function removeResumableUpload(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('resumable_uploads').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Up to `limit` ids of uploads that received nothing since `cutoff` (an ISO time), oldest first. */
export async function resumableUploadsIdleSince(db: Db, cutoff: string, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('resumable_uploads').select('id').where('updated_at', '<', cutoff).orderBy('updated_at').limit(limit).execute();
  return rows.map((row) => row.id);
}
