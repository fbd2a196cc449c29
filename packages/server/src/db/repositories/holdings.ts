/**
 * What a user holds against the storage cap: stored bytes, uploads in flight
 * (upload-reservations.ts), the kept parts of unfinished multipart uploads
 * (multipart.ts) and the declared lengths of resumable uploads in progress
 * (resumable-uploads.ts). Read under the user's row lock, so every check that adds to
 * it (a reservation, a part) sees the others' effect.
 */
import type { Db } from '../database.js';

export interface Holding {
  used: number;
  /** Live reservations' bytes and the kept parts of unfinished multipart uploads (multipart.ts). */
  reserved: number;
  count: number;
}

/** What the user holds against the cap, locking the user's row; `except` leaves out one reservation (the one being turned into a part). */
export async function holding(trx: Db, userId: number, now: string, except?: string): Promise<Holding> {
  // Writing the user's row first locks it (PostgreSQL) or the database (SQLite) for the rest of the transaction.
  const user = await trx
    .updateTable('users')
    .set((eb) => ({ plan: eb.ref('plan') }))
    .where('id', '=', userId)
    .returning('storage_used_bytes')
    .executeTakeFirstOrThrow();
  const live = await trx
    .selectFrom('upload_reservations')
    .select((eb) => [eb.fn.countAll<number | string>().as('count'), eb.fn.coalesce(eb.fn.sum<number | string>('bytes'), eb.lit(0)).as('bytes')])
    .where('user_id', '=', userId)
    .where('expires_at', '>', now)
    .$if(except !== undefined, (q) => q.where('id', '!=', except!))
    .executeTakeFirstOrThrow();
  const parts = await keptPartBytes(trx, userId);
  const resumable = await resumableLengths(trx, userId);
  return { used: user.storage_used_bytes, reserved: Number(live.bytes) + parts + resumable, count: Number(live.count) };
}

/** The declared lengths of the user's resumable uploads in progress (each held from its creation to its end). */
async function resumableLengths(trx: Db, userId: number): Promise<number> {
  const row = await trx
    .selectFrom('resumable_uploads')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('length'), eb.lit(0)).as('bytes'))
    .where('owner_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.bytes);
}

/** Every byte of the user's kept parts (counted against the cap while they are kept). */
export async function keptPartBytes(trx: Db, userId: number): Promise<number> {
  const row = await trx
    .selectFrom('multipart_parts')
    .innerJoin('multipart_uploads', 'multipart_uploads.id', 'multipart_parts.upload_id')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('multipart_parts.size'), eb.lit(0)).as('bytes'))
    .where('multipart_uploads.owner_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.bytes);
}
