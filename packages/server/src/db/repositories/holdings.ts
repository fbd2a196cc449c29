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
import { sql, type Expression, type QueryCreator } from 'kysely';
import type { Database, Db } from '../schema.js';

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

/** The cap's decisions (domain/quota.ts), which db/ asks with the holding it read under the owner's lock. */
export interface CapRule {
  /** May a write that adds `bytes` go ahead beside what is held? */
  fits(holding: Holding, bytes: number): boolean;
  /** Why a new upload in flight may not hold `bytes` (too many in flight, then the cap), or null when it may. */
  reservationRefusal(held: HoldingAndUploads, wanted: { bytes: number; maxUploads: number }): 'too-many' | 'over-cap' | null;
  /** Why a part of `size` bytes may not be kept in place of one of `replacedSize` (0: none), or null when it may. */
  partRefusal(held: Holding, size: number, replacedSize: number): 'over-cap' | null;
}

/** Whose holding, and when, as SQL expressions: values, or a prepared statement's parameters (object-writes/sqlite-holdings.ts). */
export interface HeldFor {
  user: Expression<number>;
  now: Expression<string>;
  /** A reservation left out ('' leaves none out): the one a write turns into what it records. */
  except: Expression<string>;
}

/**
 * What the cap counts beside stored bytes, each as a one-value query: the one
 * definition that both dialects' cap checks read, and the unfinished-uploads
 * list totals (unfinished-uploads.ts).
 */
export const heldTerms = {
  /** How many uploads are in flight (live reservations), which MAX_UPLOADS_PER_USER limits. */
  count: (db: QueryCreator<Database>, p: HeldFor) => liveReservations(db, p).select((eb) => eb.fn.countAll<number | string>().as('value')),
  /** Bytes held by uploads in flight (live reservations). */
  reserved: (db: QueryCreator<Database>, p: HeldFor) =>
    liveReservations(db, p).select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('bytes'), eb.lit(0)).as('value')),
  /** Bytes of kept parts of unfinished multipart uploads. */
  parts: (db: QueryCreator<Database>, p: Pick<HeldFor, 'user'>) =>
    db
      .selectFrom('multipart_parts')
      .innerJoin('multipart_uploads', 'multipart_uploads.id', 'multipart_parts.upload_id')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('multipart_parts.size'), eb.lit(0)).as('value'))
      .where('multipart_uploads.owner_id', '=', p.user),
  /** Declared lengths of resumable uploads in progress. */
  resumable: (db: QueryCreator<Database>, p: Pick<HeldFor, 'user'>) =>
    db
      .selectFrom('resumable_uploads')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('length'), eb.lit(0)).as('value'))
      .where('owner_id', '=', p.user),
};

/** A reservation is live until its lease ends (a crashed upload's lapses). */
function liveReservations(db: QueryCreator<Database>, p: HeldFor) {
  return db.selectFrom('upload_reservations').where('user_id', '=', p.user).where('expires_at', '>', p.now).where('id', '!=', p.except);
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
  return heldBesideOf(await heldBesideRow(trx, userId, now, except).executeTakeFirstOrThrow());
}

/** heldBeside()'s one row, as a query that a statement can also join (object-writes/postgres.ts reads it with the batch's files). */
export function heldBesideRow(db: QueryCreator<Database>, userId: number, now: string, except = '') {
  const p: HeldFor = { user: sql.val(userId), now: sql.val(now), except: sql.val(except) };
  return db.selectNoFrom([
    heldTerms.count(db, p).as('count'),
    heldTerms.reserved(db, p).as('reserved'),
    heldTerms.parts(db, p).as('parts'),
    heldTerms.resumable(db, p).as('resumable'),
  ]);
}

// (Kysely types a scalar subquery as nullable; these never are: a count, and sums under coalesce.)
type HeldBesideRow = Record<'count' | 'reserved' | 'parts' | 'resumable', number | string | bigint | null>;

/** heldBesideRow()'s values as numbers (PostgreSQL answers sums and counts as strings). */
export function heldBesideOf(row: HeldBesideRow): Omit<HoldingAndUploads, 'used'> {
  return { count: Number(row.count), reserved: Number(row.reserved), parts: Number(row.parts), resumable: Number(row.resumable) };
}
