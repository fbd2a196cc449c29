/**
 * On SQLite, reservations and kept parts are checked against the cap by
 * prepared statements (db/object-writes/sqlite-holdings.ts); PostgreSQL
 * keeps the Kysely versions (repositories/upload-reservations.ts,
 * repositories/multipart.ts). Both are run here on the same holdings of a
 * real SQLite file and must answer alike, to the byte.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/database.js';
import { recordPart, type RecordPartInput } from '../src/db/repositories/multipart.js';
import { reserveUpload, type ReservationInput } from '../src/db/repositories/upload-reservations.js';
import { openSqlite, type OpenSqlite } from '../src/db/sqlite.js';
import { Quota } from '../src/domain/quota.js';

const NOW = '2026-11-27T12:00:00.000Z';
const LATER = '2026-11-27T12:02:00.000Z';
const EARLIER = '2026-11-27T11:00:00.000Z';
const CAP = 1000;
const capped = (cap: number) => new Quota('free', cap);

describe('what a user holds against the cap: the SQLite statements and the Kysely versions agree', () => {
  let dir: string;
  let database: OpenSqlite;
  let userId: number;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'pail-holdings-'));
    database = openSqlite(path.join(dir, 'pail.db'));
    await migrateToLatest(database.db, database.dialect);
    const { db } = database;
    const addUser = async (email: string, stored: number) =>
      Number(
        (
          await db
            .insertInto('users')
            .values({ email, password_hash: 'x', plan: 'free', created_at: NOW, storage_used_bytes: stored })
            .returning('id')
            .executeTakeFirstOrThrow()
        ).id,
      );
    userId = await addUser('h@example.com', 100);
    const otherId = await addUser('o@example.com', 300);
    const bucketId = Number(
      (
        await db
          .insertInto('buckets')
          .values({ owner_id: userId, name: 'held', storage_name: 'held-1', public: 0, created_at: NOW })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id,
    );
    /** A multipart upload of `owner` with one kept part of `size` bytes, and a resumable upload of `length`. */
    const addUploads = async (owner: number, id: string, size: number, length: number) => {
      await db
        .insertInto('multipart_uploads')
        .values({
          id,
          owner_id: owner,
          bucket_id: bucketId,
          filename: `${id}.bin`,
          content_type: 'application/octet-stream',
          metadata: null,
          created_at: NOW,
          checksum_algorithm: null,
          checksum_type: null,
        })
        .execute();
      await db
        .insertInto('multipart_parts')
        .values({ upload_id: id, part_number: 1, storage_key: `held-1/${id}-1`, size, md5: 'm', created_at: NOW, checksum: null })
        .execute();
      await db
        .insertInto('resumable_uploads')
        .values({
          id: `${id}-tus`,
          owner_id: owner,
          bucket_id: bucketId,
          filename: `${id}-t.bin`,
          content_type: 'application/octet-stream',
          length,
          received: 0,
          metadata: null,
          created_at: NOW,
          updated_at: NOW,
        })
        .execute();
    };
    // Held: 100 stored + 200 reserved + 150 in kept parts + 50 of a resumable upload = 500. The lapsed reservation does not count.
    await db
      .insertInto('upload_reservations')
      .values([
        { id: 'live', user_id: userId, bytes: 200, expires_at: LATER },
        { id: 'lapsed', user_id: userId, bytes: 400, expires_at: EARLIER },
      ])
      .execute();
    await addUploads(userId, 'up', 150, 50);
    // Another user's holdings, which must count for nobody else.
    await db.insertInto('upload_reservations').values({ id: 'others', user_id: otherId, bytes: 300, expires_at: LATER }).execute();
    await addUploads(otherId, 'others-up', 300, 300);
  });

  afterEach(async () => {
    await database.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Each implementation in turn on the same state: the writes it made are undone before the next one runs. */
  async function both<T>(run: (implementation: 'sqlite' | 'kysely') => Promise<T>): Promise<{ sqlite: T; kysely: T }> {
    const state = async () => ({
      reservations: await database.db.selectFrom('upload_reservations').selectAll().orderBy('id').execute(),
      parts: await database.db.selectFrom('multipart_parts').selectAll().orderBy('upload_id').orderBy('part_number').execute(),
    });
    const before = await state();
    const sqlite = await run('sqlite');
    const afterSqlite = await state();
    await database.db.deleteFrom('upload_reservations').execute();
    await database.db.deleteFrom('multipart_parts').execute();
    if (before.reservations.length > 0) await database.db.insertInto('upload_reservations').values(before.reservations).execute();
    if (before.parts.length > 0) await database.db.insertInto('multipart_parts').values(before.parts).execute();
    const kysely = await run('kysely');
    expect(await state()).toEqual(afterSqlite);
    return { sqlite, kysely };
  }

  const reserve = (input: Partial<ReservationInput>) => (implementation: 'sqlite' | 'kysely') => {
    const full = { id: 'new', userId, bytes: 0, quota: capped(CAP), maxUploads: 10, now: NOW, expiresAt: LATER, ...input };
    return implementation === 'sqlite' ? database.writes.reserveUpload(full) : reserveUpload(database.db, full);
  };

  it('a reservation fits to the last byte of the cap and not one byte more; lapsed ones do not count', async () => {
    expect(await both(reserve({ bytes: 500 }))).toEqual({ sqlite: null, kysely: null });
    expect(await both(reserve({ bytes: 501 }))).toEqual({ sqlite: 'over-cap', kysely: 'over-cap' });
    // The cap counts every holding: 100 + 200 + 150 + 50.
    expect(await both(reserve({ bytes: 1, quota: capped(500) }))).toEqual({ sqlite: 'over-cap', kysely: 'over-cap' });
  });

  it('one upload too many is refused before the cap is looked at', async () => {
    expect(await both(reserve({ bytes: 1, maxUploads: 1 }))).toEqual({ sqlite: 'too-many', kysely: 'too-many' });
    expect(await both(reserve({ bytes: 1, maxUploads: 2 }))).toEqual({ sqlite: null, kysely: null });
    // Over both: the count is what is answered.
    expect(await both(reserve({ bytes: 10_000, maxUploads: 1 }))).toEqual({ sqlite: 'too-many', kysely: 'too-many' });
  });

  const record = (input: { uploadId?: string; partNumber?: number; size: number; cap?: number }) => (implementation: 'sqlite' | 'kysely') => {
    const full: RecordPartInput = {
      userId,
      quota: capped(input.cap ?? CAP),
      // The live reservation is the one holding this part's bytes: it is left out of the sum and dropped.
      reservationId: 'live',
      now: NOW,
      part: {
        upload_id: input.uploadId ?? 'up',
        part_number: input.partNumber ?? 2,
        storage_key: 'held-1/new',
        size: input.size,
        md5: 'n',
        created_at: NOW,
        checksum: null,
      },
    };
    return implementation === 'sqlite' ? database.writes.recordPart(full) : recordPart(database.db, full);
  };

  it('a part is kept if it fits with its reservation left out, and its reservation goes', async () => {
    // 100 + 150 + 50 held besides the live reservation: 700 more fit, 701 do not.
    expect(await both(record({ size: 700 }))).toEqual({ sqlite: { replaced: null }, kysely: { replaced: null } });
    expect(await both(record({ size: 701 }))).toEqual({ sqlite: { refusal: 'over-cap' }, kysely: { refusal: 'over-cap' } });
  });

  it('a part sent again replaces the earlier one, whose bytes no longer count', async () => {
    // Part 1 holds 150: replacing it with 850 makes 100 + 850 + 50 = 1000.
    expect(await both(record({ partNumber: 1, size: 850 }))).toEqual({ sqlite: { replaced: 'held-1/up-1' }, kysely: { replaced: 'held-1/up-1' } });
    expect(await both(record({ partNumber: 1, size: 851 }))).toEqual({ sqlite: { refusal: 'over-cap' }, kysely: { refusal: 'over-cap' } });
  });

  it('a part of an upload that has ended is refused, whatever its size', async () => {
    expect(await both(record({ uploadId: 'gone', size: 1 }))).toEqual({ sqlite: { refusal: 'no-upload' }, kysely: { refusal: 'no-upload' } });
    expect(await both(record({ uploadId: 'gone', size: 10_000 }))).toEqual({ sqlite: { refusal: 'no-upload' }, kysely: { refusal: 'no-upload' } });
  });
});
