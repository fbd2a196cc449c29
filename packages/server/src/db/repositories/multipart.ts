/**
 * S3 multipart uploads and their kept parts. A part is recorded only while
 * what its owner holds (stored bytes, uploads in flight, kept parts) stays
 * within the cap, checked under the owner's row lock as every reservation is
 * (upload-reservations.ts), so parts can never together pass the cap.
 * Writes that change an upload's parts lock the upload's row first (after
 * the owner's), in the order object commits take them
 * (object-writes/postgres.ts), so none of them deadlock.
 */
import type { Db, MultipartPartsTable, MultipartUploadsTable } from '../schema.js';
import { holding, type CapRule } from './holdings.js';
import { startingWith } from '../name-ranges.js';

export type MultipartUploadRow = MultipartUploadsTable;
export type MultipartPartRow = MultipartPartsTable;

export async function insertUpload(db: Db, row: MultipartUploadRow): Promise<void> {
  await db.insertInto('multipart_uploads').values(row).execute();
}

export function findUpload(db: Db, id: string, bucketId: number): Promise<MultipartUploadRow | undefined> {
  return db.selectFrom('multipart_uploads').selectAll().where('id', '=', id).where('bucket_id', '=', bucketId).executeTakeFirst();
}

export function findPart(db: Db, uploadId: string, partNumber: number): Promise<MultipartPartRow | undefined> {
  return db.selectFrom('multipart_parts').selectAll().where('upload_id', '=', uploadId).where('part_number', '=', partNumber).executeTakeFirst();
}

/** Up to `limit` parts in number order after `after`. */
export function listParts(db: Db, uploadId: string, after: number, limit: number): Promise<MultipartPartRow[]> {
  return db
    .selectFrom('multipart_parts')
    .selectAll()
    .where('upload_id', '=', uploadId)
    .where('part_number', '>', after)
    .orderBy('part_number')
    .limit(limit)
    .execute();
}

/** Up to `limit` unfinished uploads in (key, upload id) order, keys starting with `prefix`, after the markers (and from `from` on). */
export function listUploads(
  db: Db,
  bucketId: number,
  page: { prefix: string; keyMarker: string; uploadIdMarker: string; from?: string | undefined; limit: number },
): Promise<MultipartUploadRow[]> {
  let q = db.selectFrom('multipart_uploads').selectAll().where('bucket_id', '=', bucketId);
  q = q.$call(startingWith('filename', page.prefix));
  if (page.from !== undefined) q = q.where('filename', '>=', page.from);
  if (page.keyMarker !== '') {
    const { keyMarker, uploadIdMarker } = page;
    // S3: with an upload-id-marker, the marker key's later uploads follow; without, the listing resumes after the key.
    q = q.where((eb) =>
      uploadIdMarker === ''
        ? eb('filename', '>', keyMarker)
        : eb.or([eb('filename', '>', keyMarker), eb.and([eb('filename', '=', keyMarker), eb('id', '>', uploadIdMarker)])]),
    );
  }
  return q.orderBy('filename').orderBy('id').limit(page.limit).execute();
}

export type PartRecorded = { refusal: 'over-cap' | 'no-upload' } | { replaced: string | null };

export interface RecordPartInput {
  userId: number;
  quota: CapRule;
  reservationId: string;
  now: string;
  part: MultipartPartRow;
}

/**
 * Records a stored part (replacing any earlier one of that number) if it
 * fits the cap, and drops the reservation that held its bytes while they
 * streamed, in one transaction: the bytes move from in flight to kept
 * (object-writes/sqlite-holdings.ts does the same on SQLite).
 */
export function recordPart(db: Db, input: RecordPartInput): Promise<PartRecorded> {
  const { part } = input;
  return db.transaction().execute(async (trx): Promise<PartRecorded> => {
    const held = await holding(trx, input.userId, input.now, input.reservationId);
    if (!(await lockUpload(trx, part.upload_id))) return { refusal: 'no-upload' };
    const old = await findPart(trx, part.upload_id, part.part_number);
    // The part's reservation is left out of the holding: it becomes the part.
    const refusal = input.quota.partRefusal(held, part.size, old?.size ?? 0);
    if (refusal) return { refusal };
    if (old) await trx.deleteFrom('multipart_parts').where('upload_id', '=', part.upload_id).where('part_number', '=', part.part_number).execute();
    await trx.insertInto('multipart_parts').values(part).execute();
    await trx.deleteFrom('upload_reservations').where('id', '=', input.reservationId).execute();
    return { replaced: old?.storage_key ?? null };
  });
}

/** What an ended upload was, and its parts' storage keys, whose blobs are now to be deleted. */
export interface RemovedUpload {
  upload: Pick<MultipartUploadRow, 'owner_id' | 'bucket_id' | 'filename'>;
  partKeys: string[];
}

/** Ends an upload without an object (aborted, expired): its rows go. Null when it was already gone. */
export function removeUpload(db: Db, id: string): Promise<RemovedUpload | null> {
  return db.transaction().execute(async (trx) => {
    if (!(await lockUpload(trx, id))) return null;
    const parts = await trx.deleteFrom('multipart_parts').where('upload_id', '=', id).returning('storage_key').execute();
    const upload = await trx.deleteFrom('multipart_uploads').where('id', '=', id).returning(['owner_id', 'bucket_id', 'filename']).executeTakeFirst();
    return upload ? { upload, partKeys: parts.map((part) => part.storage_key) } : null;
  });
}

/** Locks an upload's row for the rest of the transaction (a no-op update, as the owner's row is locked); false when it has ended. */
async function lockUpload(trx: Db, id: string): Promise<boolean> {
  const row = await trx
    .updateTable('multipart_uploads')
    .set((eb) => ({ filename: eb.ref('filename') }))
    .where('id', '=', id)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Up to `limit` ids of uploads begun before `cutoff` (an ISO time), oldest first: the ones the expiry sweep removes. */
export async function uploadsBegunBefore(db: Db, cutoff: string, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('multipart_uploads').select('id').where('created_at', '<', cutoff).orderBy('created_at').limit(limit).execute();
  return rows.map((row) => row.id);
}

/** Which of these storage keys kept parts hold (garbage collection keeps them). */
export async function partKeys(db: Db, storageKeys: string[]): Promise<string[]> {
  if (storageKeys.length === 0) return [];
  const rows = await db.selectFrom('multipart_parts').select('storage_key').where('storage_key', 'in', storageKeys).execute();
  return rows.map((row) => row.storage_key);
}
