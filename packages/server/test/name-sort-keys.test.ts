/**
 * Name sort keys (db/name-sort-keys.ts): natural and case-insensitive order
 * compared as bytes, a folder's key beginning its contents' keys, and the
 * migration that fills the column in for files that existed before it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Migrator, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrationProvider } from '../src/db/migrations.js';
import { nameSortKey } from '../src/db/name-sort-keys.js';
import { openSqlite, type OpenSqlite } from '../src/db/sqlite.js';

/** As both databases compare the keys: by their UTF-8 bytes. */
const byKey = (a: string, b: string) => Buffer.compare(Buffer.from(nameSortKey(a)), Buffer.from(nameSortKey(b)));

describe('nameSortKey', () => {
  it('orders names naturally, ignoring case, the name as written breaking ties', () => {
    const sorted = [
      'file10',
      'b',
      'File1',
      'file2',
      'A',
      'a',
      'file02',
      'x' + '9'.repeat(120),
      'x' + '1' + '0'.repeat(120),
      'Straße',
      'strasse1',
      'img0',
      'img',
    ];
    expect([...sorted].sort(byKey)).toEqual([
      'A',
      'a',
      'b',
      'File1',
      'file02',
      'file2',
      'file10',
      'img',
      'img0',
      'Straße',
      'strasse1',
      'x' + '9'.repeat(120),
      'x1' + '0'.repeat(120),
    ]);
  });

  it('gives no two names one key, and a folder a key that begins its contents keys', () => {
    expect(nameSortKey('Report')).not.toBe(nameSortKey('report'));
    expect(nameSortKey('a2')).not.toBe(nameSortKey('a02'));
    for (const inside of ['x', 'deep/er.txt', '10/']) expect(nameSortKey(`photos/2026/${inside}`).startsWith(nameSortKey('photos/2026/'))).toBe(true);
    // A file sorts before a longer name that starts with its name.
    expect(byKey('a', 'a/b')).toBeLessThan(0);
    expect(byKey('a/b', 'a-b')).toBeLessThan(0);
  });
});

describe('the 0018 migration', () => {
  let dir: string;
  let database: OpenSqlite | undefined;
  afterEach(async () => {
    await database?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('keys the names of files stored before it', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'pail-sortkey-'));
    database = openSqlite(path.join(dir, 'pail.db'));
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the schema as it was at 0017, before the column existed
    const db = database.db as unknown as Kysely<any>;
    const migrator = new Migrator({ db, provider: migrationProvider('sqlite') });
    expect((await migrator.migrateTo('0017_public_access_blocks')).error).toBeUndefined();
    await db.insertInto('users').values({ email: 'a@example.com', password_hash: 'x', created_at: '2026-01-01T00:00:00.000Z' }).execute();
    await db.insertInto('buckets').values({ owner_id: 1, name: 'b', storage_name: 'b-1', created_at: '2026-01-01T00:00:00.000Z' }).execute();
    const names = Array.from({ length: 1100 }, (_, i) => `Old/FILE-${i}.TXT`);
    for (const [i, filename] of names.entries()) {
      const at = '2026-01-01T00:00:00.000Z';
      await db
        .insertInto('objects')
        .values({
          bucket_id: 1,
          filename,
          storage_key: `k${i}`,
          size: 1,
          content_type: 'text/plain',
          etag: 'e',
          created_at: at,
          updated_at: at,
          name_folded: filename.toLowerCase(),
        })
        .execute();
    }
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    const rows: { filename: string }[] = await db.selectFrom('objects').select('filename').orderBy('name_sort').limit(4).execute();
    expect(rows.map((row) => row.filename)).toEqual(['Old/FILE-0.TXT', 'Old/FILE-1.TXT', 'Old/FILE-2.TXT', 'Old/FILE-3.TXT']);
    expect(await db.selectFrom('objects').select('filename').where('name_sort', 'is', null).execute()).toEqual([]);
  });
});
