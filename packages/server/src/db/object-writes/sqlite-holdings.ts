/**
 * The writes that add to what a user holds against the cap (a reservation, a
 * kept part) on the embedded SQLite database: the same checks as
 * repositories/upload-reservations.ts and repositories/multipart.ts, as a
 * few prepared statements in one synchronous transaction. SQLite serialises
 * writes, so no row lock is needed, and every part request makes two of
 * these, where Kysely's building of the same statements cost about as much
 * as the rest of the request's database work (bench/README.md, round 5).
 */
import type SQLite from 'better-sqlite3';
import type { HoldingAndUploads } from '../repositories/holdings.js';
import type { PartRecorded, RecordPartInput } from '../repositories/multipart.js';
import type { ReservationInput, ReservationRefusal } from '../repositories/upload-reservations.js';
import type { SqliteWriter } from '../sqlite-writer.js';
import type { ObjectWrites } from './object-writes.js';

/**
 * What holdings.ts's heldBeside() reads, as result columns of a statement
 * with @user and @now: live reservations (but @except: '' leaves none out),
 * kept parts, resumable lengths.
 */
export const HELD_BESIDE_COLUMNS = `(select coalesce(sum(bytes), 0) from upload_reservations where user_id = @user and expires_at > @now and id != @except) as reserved,
      (select coalesce(sum(p.size), 0) from multipart_parts p join multipart_uploads u on u.id = p.upload_id where u.owner_id = @user) as parts,
      (select coalesce(sum(length), 0) from resumable_uploads where owner_id = @user) as resumable`;

const STATEMENTS = {
  // What holdings.ts's holding() reads: stored bytes, how many live reservations, and what is held beside.
  holding: `select
      (select storage_used_bytes from users where id = @user) as used,
      (select count(*) from upload_reservations where user_id = @user and expires_at > @now and id != @except) as count,
      ${HELD_BESIDE_COLUMNS}`,
  reserve: 'insert into upload_reservations (id, user_id, bytes, expires_at) values (?, ?, ?, ?)',
  uploadLive: 'select 1 from multipart_uploads where id = ?',
  oldPart: 'select storage_key, size from multipart_parts where upload_id = ? and part_number = ?',
  deletePart: 'delete from multipart_parts where upload_id = ? and part_number = ?',
  insertPart:
    'insert into multipart_parts (upload_id, part_number, storage_key, size, md5, created_at, checksum) values (@upload_id, @part_number, @storage_key, @size, @md5, @created_at, @checksum)',
  dropReservation: 'delete from upload_reservations where id = ?',
} as const;

type Prepared = { [K in keyof typeof STATEMENTS]: SQLite.Statement };

export interface SqliteHoldings extends Pick<ObjectWrites, 'reserveUpload' | 'recordPart'> {
  /** Drops a reservation inside a write (its bytes become the part or file the write records). */
  dropReservation(id: string): void;
}

export function sqliteHoldingWrites(sqlite: SQLite.Database, writer: SqliteWriter): SqliteHoldings {
  // Prepared on first use: the tables exist only once migrations have run.
  let prepared: Prepared | null = null;
  const statements = () => (prepared ??= Object.fromEntries(Object.entries(STATEMENTS).map(([name, text]) => [name, sqlite.prepare(text)])) as Prepared);

  // Inside a write the writer runs: SQLite serialises writes, so no lock is needed.
  function holding(userId: number, now: string, except = ''): HoldingAndUploads {
    const row = statements().holding.get({ user: userId, now, except }) as Omit<HoldingAndUploads, 'used'> & { used: number | null };
    if (row.used === null) throw new Error(`no user ${userId}`);
    return { ...row, used: row.used };
  }

  function reserve(input: ReservationInput): ReservationRefusal | null {
    const held = holding(input.userId, input.now);
    if (held.count >= input.maxUploads) return 'too-many';
    if (!input.quota.fits(held, input.bytes)) return 'over-cap';
    statements().reserve.run(input.id, input.userId, input.bytes, input.expiresAt);
    return null;
  }

  function record(input: RecordPartInput): PartRecorded {
    const sql = statements();
    const { part } = input;
    const held = holding(input.userId, input.now, input.reservationId);
    if (sql.uploadLive.get(part.upload_id) === undefined) return { refusal: 'no-upload' };
    const old = sql.oldPart.get(part.upload_id, part.part_number) as { storage_key: string; size: number } | undefined;
    if (!input.quota.fits(held, part.size - (old?.size ?? 0))) return { refusal: 'over-cap' };
    if (old) sql.deletePart.run(part.upload_id, part.part_number);
    sql.insertPart.run(part);
    sql.dropReservation.run(input.reservationId);
    return { replaced: old?.storage_key ?? null };
  }

  // Not flushed here: the request's answer waits for the flush (request-hooks.ts), and a
  // caller that deletes bytes on the strength of one waits for it first (StoragePorts.durable).
  return {
    reserveUpload: (input) => writer.writeNow(() => reserve(input)),
    recordPart: (input) => writer.writeNow(() => record(input)),
    dropReservation: (id) => void statements().dropReservation.run(id),
  };
}
