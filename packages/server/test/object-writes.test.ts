/**
 * The ObjectWrites port's cap decision, one behaviour suite run on the
 * database of the project (SQLite embedded, PostgreSQL scaled): a commit asks
 * the one cap rule (domain/quota.ts) with everything the owner holds (stored
 * bytes, uploads in flight, kept parts, resumable uploads) but what the
 * commit itself ends, to the byte; a refused commit's reservation ends with
 * it, so a later commit of the same batch does not count it; commits racing
 * into one cap never pass it together; a write that adds nothing is never refused.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { migrateToLatest, openDatabase } from '../src/db/database.js';
import type { OpenDatabase } from '../src/db/open-database.js';
import { WriteRefused, type CommitInput } from '../src/db/object-writes/object-writes.js';
import { Quota } from '../src/domain/quota.js';
import { newVersionId } from '../src/domain/version-ids.js';
import { backendEnv, type BackendEnv } from './helpers/backends.js';

const NOW = new Date().toISOString();
const LATER = new Date(Date.now() + 3_600_000).toISOString();
const CAP = 1000;

describe('ObjectWrites: a commit asks the cap with everything held', () => {
  let dir: string;
  let backend: BackendEnv;
  let database: OpenDatabase;
  let userId: number;
  let bucketId: number;
  let files = 0;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'pail-object-writes-'));
    backend = await backendEnv();
    const config = loadConfig({ ...backend.env, DATA_DIR: dir });
    database = openDatabase(config.database);
    await migrateToLatest(database.db, database.dialect);
    const { db } = database;
    // Held: 100 stored + 200 reserved + 150 in a kept part + 50 of a resumable upload = 500.
    userId = Number(
      (
        await db
          .insertInto('users')
          .values({ email: 'w@example.com', password_hash: 'x', plan: 'free', created_at: NOW, storage_used_bytes: 100 })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id,
    );
    bucketId = Number(
      (
        await db
          .insertInto('buckets')
          .values({ owner_id: userId, name: 'writes', storage_name: 'writes-1', public: 0, created_at: NOW })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id,
    );
    await db.insertInto('upload_reservations').values({ id: 'flight', user_id: userId, bytes: 200, expires_at: LATER }).execute();
    await db
      .insertInto('multipart_uploads')
      .values({
        id: 'up',
        owner_id: userId,
        bucket_id: bucketId,
        filename: 'up.bin',
        content_type: 'application/octet-stream',
        metadata: null,
        created_at: NOW,
        checksum_algorithm: null,
        checksum_type: null,
      })
      .execute();
    await db
      .insertInto('multipart_parts')
      .values({ upload_id: 'up', part_number: 1, storage_key: 'writes-1/up-1', size: 150, md5: 'm', created_at: NOW, checksum: null })
      .execute();
    await db
      .insertInto('resumable_uploads')
      .values({
        id: 'tus',
        owner_id: userId,
        bucket_id: bucketId,
        filename: 'tus.bin',
        content_type: 'application/octet-stream',
        length: 50,
        received: 0,
        metadata: null,
        created_at: NOW,
        updated_at: NOW,
      })
      .execute();
  });

  afterEach(async () => {
    await database.close();
    await backend.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  /** A file of `size` bytes (kept inline: the bytes are written with the row). */
  const commit = (filename: string, size: number, more: Partial<CommitInput> = {}) =>
    database.writes.commitUpload({
      ownerId: userId,
      quota: new Quota('free', CAP),
      bucketId,
      filename,
      storageKey: `writes-1/${++files}`,
      contentType: 'application/octet-stream',
      size,
      contentHash: `h${files}`,
      inlineBytes: Buffer.alloc(size),
      versionId: newVersionId(),
      ...more,
    });

  /** 'committed', or why the commit was refused. */
  async function refusal(promise: Promise<unknown>): Promise<string> {
    try {
      await promise;
      return 'committed';
    } catch (error) {
      if (error instanceof WriteRefused) return error.refusal;
      throw error;
    }
  }

  const used = async () =>
    Number((await database.db.selectFrom('users').select('storage_used_bytes').where('id', '=', userId).executeTakeFirstOrThrow()).storage_used_bytes);

  it('a small file fits to the last byte beside everything held, and not one byte more', async () => {
    expect(await refusal(commit('a.bin', 501))).toBe('over-cap');
    expect(await used()).toBe(100);
    expect(await refusal(commit('a.bin', 500))).toBe('committed');
    expect(await used()).toBe(600);
    expect(await refusal(commit('b.bin', 1))).toBe('over-cap');
  });

  it("the commit's own reservation becomes the file: it is left out, and gone afterwards", async () => {
    expect(await refusal(commit('a.bin', 700))).toBe('over-cap');
    expect(await refusal(commit('a.bin', 700, { reservationId: 'flight' }))).toBe('committed');
    expect(await database.db.selectFrom('upload_reservations').select('id').execute()).toEqual([]);
    expect(await used()).toBe(800);
  });

  it('completing a multipart or resumable upload: its kept bytes become the file', async () => {
    // 100 + 200 + 50 beside the upload's 150: 650 fit.
    const completed = await commit('up.bin', 650, { endsUpload: 'up' });
    expect(completed.endedParts).toEqual(['writes-1/up-1']);
    // 100 + 650 + 200 beside the resumable upload's 50: 50 fit, 51 do not.
    expect(await refusal(commit('tus.bin', 51, { endsResumable: 'tus' }))).toBe('over-cap');
    expect(await refusal(commit('tus.bin', 50, { endsResumable: 'tus' }))).toBe('committed');
    expect(await used()).toBe(800);
  });

  it('a smaller replacement is never refused, even over a lowered cap', async () => {
    await commit('a.bin', 400);
    const lowered = new Quota('free', 10);
    expect(await refusal(commit('a.bin', 300, { quota: lowered }))).toBe('committed');
    expect(await refusal(commit('a.bin', 301, { quota: lowered }))).toBe('over-cap');
    expect(await used()).toBe(400);
  });

  // One batch: commits asked in the same turn of the event loop are committed together (a group on SQLite, a batch on PostgreSQL).
  it.each([
    ['over-cap', { size: 701 }],
    ['precondition-failed', { size: 10, condition: { absent: true } }],
    ['no-upload', { size: 10, endsUpload: 'gone' }],
  ] as const)('a commit refused %s ends its reservation: a later one in the same batch does not count it', async (why, { size, ...more }) => {
    await commit('a.bin', 0);
    // The refused commit's 200 reserved bytes end with it, so the next fits beside 100 + 150 + 50 to the byte.
    const outcomes = await Promise.all([refusal(commit('a.bin', size, { reservationId: 'flight', ...more })), refusal(commit('b.bin', 700))]);
    expect(outcomes).toEqual([why, 'committed']);
    expect(await database.db.selectFrom('upload_reservations').select('id').execute()).toEqual([]);
    expect(await used()).toBe(800);
  });

  it('commits racing into the cap: exactly those that fit', async () => {
    const outcomes = await Promise.all(Array.from({ length: 10 }, (_, i) => refusal(commit(`race-${i}.bin`, 100))));
    expect(outcomes.filter((outcome) => outcome === 'committed')).toHaveLength(5);
    expect(outcomes.filter((outcome) => outcome === 'over-cap')).toHaveLength(5);
    expect(await used()).toBe(600);
  });
});
