/**
 * Bytes held by uploads in flight. A reservation is made or grown only while
 * everything the owner holds stays within the cap (holdings.ts), checked
 * under the owner's row lock (the same lock every write to a user's
 * usage takes), so racing uploads can never together hold more than fits.
 */
import type { Db } from '../schema.js';
import { holding, type CapRule } from './holdings.js';

export type ReservationRefusal = 'over-cap' | 'too-many';

export interface ReservationInput {
  id: string;
  userId: number;
  bytes: number;
  quota: CapRule;
  maxUploads: number;
  now: string;
  expiresAt: string;
}

/** Holds `bytes` for a new upload, or says why not (object-writes/sqlite-holdings.ts does the same on SQLite). */
export function reserveUpload(db: Db, input: ReservationInput): Promise<ReservationRefusal | null> {
  return db.transaction().execute(async (trx) => {
    const refusal = input.quota.reservationRefusal(await holding(trx, input.userId, input.now), input);
    if (refusal) return refusal;
    await trx.insertInto('upload_reservations').values({ id: input.id, user_id: input.userId, bytes: input.bytes, expires_at: input.expiresAt }).execute();
    return null;
  });
}

/** Grows a reservation by `bytes` (a body of unknown length, as it streams), and keeps it alive. False when it does not fit. */
export function growReservation(
  db: Db,
  input: { id: string; userId: number; bytes: number; quota: CapRule; now: string; expiresAt: string },
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const held = await holding(trx, input.userId, input.now);
    if (!input.quota.fits(held, input.bytes)) return false;
    await trx
      .updateTable('upload_reservations')
      .set((eb) => ({ bytes: eb('bytes', '+', input.bytes), expires_at: input.expiresAt }))
      .where('id', '=', input.id)
      .execute();
    return true;
  });
}

/** Keeps a reservation alive while its upload runs. */
export async function renewReservation(db: Db, id: string, expiresAt: string): Promise<void> {
  await db.updateTable('upload_reservations').set({ expires_at: expiresAt }).where('id', '=', id).execute();
}

export async function releaseReservation(db: Db, id: string): Promise<void> {
  await db.deleteFrom('upload_reservations').where('id', '=', id).execute();
}

/** Reservations whose upload ended without giving them back (a crash): gone. */
export async function dropLapsedReservations(db: Db, now: string): Promise<void> {
  await db.deleteFrom('upload_reservations').where('expires_at', '<=', now).execute();
}
