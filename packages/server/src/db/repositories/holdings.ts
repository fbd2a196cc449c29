/**
 * What a user holds against the storage cap: stored bytes, uploads in flight
 * (upload-reservations.ts), the kept parts of unfinished multipart uploads
 * (multipart.ts) and the declared lengths of resumable uploads in progress
 * (resumable-uploads.ts). Read under the user's row lock, so every write that
 * adds to it (a reservation, a part, a file) sees the others' effect. Whether
 * a write fits is the domain's one rule (domain/quota.ts), passed in as a
 * CapRule; db/ reads the holding it decides on and applies the answer in the
 * same transaction.
 */
import { sql } from 'kysely';
import type { Db } from '../database.js';

export interface Holding {
  /** Stored bytes (the user's storage_used_bytes). */
  used: number;
  /** Live reservations of uploads in flight. */
  reserved: number;
  /** Kept parts of unfinished multipart uploads. */
  parts: number;
  /** Declared lengths of resumable uploads in progress. */
  resumable: number;
}

/** A holding, and how many uploads are in flight (live reservations), which MAX_UPLOADS_PER_USER limits. */
export interface HoldingAndUploads extends Holding {
  count: number;
}

/** The cap decision (domain/quota.ts): may a write that adds `bytes` go ahead beside what is held? */
export interface CapRule {
  fits(holding: Holding, bytes: number): boolean;
}

/** What the user holds against the cap, locking the user's row; `except` leaves out one reservation (the one being turned into a part). */
export async function holding(trx: Db, userId: number, now: string, except?: string): Promise<HoldingAndUploads> {
  // Writing the user's row first locks it (PostgreSQL) or the database (SQLite) for the rest of the transaction.
  const user = await trx
    .updateTable('users')
    .set((eb) => ({ plan: eb.ref('plan') }))
    .where('id', '=', userId)
    .returning('storage_used_bytes')
    .executeTakeFirstOrThrow();
  return { used: user.storage_used_bytes, ...(await heldBeside(trx, userId, now, except)) };
}

/**
 * Everything but the stored bytes, in one statement; the caller holds the
 * user's row lock (taken in an earlier statement, so this one's snapshot
 * sees every write that held it before).
 */
export async function heldBeside(trx: Db, userId: number, now: string, except = ''): Promise<Omit<HoldingAndUploads, 'used'>> {
  const row = await sql<{ count: number | string; reserved: number | string; parts: number | string; resumable: number | string }>`select
      (select count(*) from upload_reservations where user_id = ${userId} and expires_at > ${now} and id != ${except}) as count,
      (select coalesce(sum(bytes), 0) from upload_reservations where user_id = ${userId} and expires_at > ${now} and id != ${except}) as reserved,
      (select coalesce(sum(p.size), 0) from multipart_parts p join multipart_uploads u on u.id = p.upload_id where u.owner_id = ${userId}) as parts,
      (select coalesce(sum(length), 0) from resumable_uploads where owner_id = ${userId}) as resumable`.execute(trx);
  const held = row.rows[0]!;
  return { count: Number(held.count), reserved: Number(held.reserved), parts: Number(held.parts), resumable: Number(held.resumable) };
}
