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
import { sql } from 'kysely';
import type { Db } from '../schema.js';
import { heldTerms, type HoldingAndUploads } from '../repositories/holdings.js';
import type { PartRecorded, RecordPartInput } from '../repositories/multipart.js';
import type { ReservationInput, ReservationRefusal } from '../repositories/upload-reservations.js';
import type { SqliteWriter } from '../sqlite-writer.js';
import type { ObjectWrites } from './object-writes.js';

/**
 * holdings.ts's heldTerms (what the cap counts, defined once) as result
 * columns of a prepared statement with @user, @now and @except ('' leaves no
 * reservation out), compiled to SQLite's text when first prepared.
 */
export function heldColumns(db: Db, terms: readonly (keyof typeof heldTerms)[]): string {
  const p = { user: sql.raw<number>('@user'), now: sql.raw<string>('@now'), except: sql.raw<string>('@except') };
  return terms
    .map((term) => {
      const compiled = heldTerms[term](db, p).compile();
      if (compiled.parameters.length > 0) throw new Error(`held term ${term} compiled with positional parameters`);
      return `(${compiled.sql}) as ${term}`;
    })
    .join(', ');
}

/**
 * A query written with @name parameters, prepared with each one replaced by `?` and its values bound by
 * position: better-sqlite3 binds an object's named values at about twice the cost, on every commit.
 */
export function getByPosition(sqlite: SQLite.Database, text: string): (params: Record<string, unknown>) => unknown {
  const names: string[] = [];
  const statement = sqlite.prepare(
    text.replace(/@(\w+)/g, (_, name: string) => {
      names.push(name);
      return '?';
    }),
  );
  return (params) => statement.get(...names.map((name) => params[name]));
}

const STATEMENTS = {
  // What holdings.ts's holding() reads: stored bytes, how many live reservations, and what is held beside.
  reserve: 'insert into upload_reservations (id, user_id, bytes, expires_at) values (?, ?, ?, ?)',
  uploadLive: 'select 1 from multipart_uploads where id = ?',
  oldPart: 'select storage_key, size from multipart_parts where upload_id = ? and part_number = ?',
  deletePart: 'delete from multipart_parts where upload_id = ? and part_number = ?',
  insertPart:
    'insert into multipart_parts (upload_id, part_number, storage_key, size, md5, created_at, checksum) values (@upload_id, @part_number, @storage_key, @size, @md5, @created_at, @checksum)',
  dropReservation: 'delete from upload_reservations where id = ?',
} as const;

type Prepared = { [K in keyof typeof STATEMENTS]: SQLite.Statement };

/** What holdings.ts's holding() reads: stored bytes, how many live reservations, and what is held beside. */
const holdingQuery = (db: Db) =>
  `select (select storage_used_bytes from users where id = @user) as used, ${heldColumns(db, ['count', 'reserved', 'parts', 'resumable'])}`;

export interface SqliteHoldings extends Pick<ObjectWrites, 'reserveUpload' | 'recordPart'> {
  /** Drops a reservation inside a write (its bytes become the part or file the write records). */
  dropReservation(id: string): void;
}

export function sqliteHoldingWrites(db: Db, sqlite: SQLite.Database, writer: SqliteWriter): SqliteHoldings {
  // Prepared on first use: the tables exist only once migrations have run.
  let prepared: Prepared | null = null;
  const statements = () => (prepared ??= Object.fromEntries(Object.entries(STATEMENTS).map(([name, text]) => [name, sqlite.prepare(text)])) as Prepared);

  let holdingRead: ReturnType<typeof getByPosition> | null = null;

  // Inside a write the writer runs: SQLite serialises writes, so no lock is needed.
  function holding(userId: number, now: string, except = ''): HoldingAndUploads {
    const row = (holdingRead ??= getByPosition(sqlite, holdingQuery(db)))({ user: userId, now, except }) as Omit<HoldingAndUploads, 'used'> & {
      used: number | null;
    };
    if (row.used === null) throw new Error(`no user ${userId}`);
    return { ...row, used: row.used };
  }

  function reserve(input: ReservationInput): ReservationRefusal | null {
    const refusal = input.quota.reservationRefusal(holding(input.userId, input.now), input);
    if (refusal) return refusal;
    statements().reserve.run(input.id, input.userId, input.bytes, input.expiresAt);
    return null;
  }

  function record(input: RecordPartInput): PartRecorded {
    const sql = statements();
    const { part } = input;
    const held = holding(input.userId, input.now, input.reservationId);
    if (sql.uploadLive.get(part.upload_id) === undefined) return { refusal: 'no-upload' };
    const old = sql.oldPart.get(part.upload_id, part.part_number) as { storage_key: string; size: number } | undefined;
    const refusal = input.quota.partRefusal(held, part.size, old?.size ?? 0);
    if (refusal) return { refusal };
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
