/**
 * Folded names for search (db/folded-names.ts): the folding itself, LIKE
 * escaping, and the migration that fills the column in for files that
 * existed before it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Migrator, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { escapeLike, foldName } from '../src/db/folded-names.js';
import { migrationProvider } from '../src/db/migrations.js';
import { openSqlite, type OpenSqlite } from '../src/db/sqlite.js';

describe('foldName', () => {
  it.each([
    ['Straße.TXT', 'strasse.txt'],
    ['STRASSE', 'strasse'],
    ['ÉTÉ', 'été'],
    ['e\u0301te\u0301', 'été'],
    ['ΟΔΟΣ.txt', 'οδοσ.txt'],
    ['οδος', 'οδοσ'],
    ['photos/2026/Cat.JPG', 'photos/2026/cat.jpg'],
  ])('%s → %s', (name, folded) => {
    expect(foldName(name)).toBe(folded);
  });

  it('escapes LIKE wildcards and the escape character', () => {
    expect(escapeLike('100%_a\\b')).toBe('100\\%\\_a\\\\b');
  });
});

describe('the 0013 migration', () => {
  let dir: string;
  let database: OpenSqlite | undefined;
  afterEach(async () => {
    await database?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('folds the names of files stored before it', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'pail-fold-'));
    database = openSqlite(path.join(dir, 'pail.db'));
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the schema as it was at 0012, before the column existed
    const db = database.db as unknown as Kysely<any>;
    const migrator = new Migrator({ db, provider: migrationProvider('sqlite') });
    expect((await migrator.migrateTo('0012_bucket_limits')).error).toBeUndefined();
    await db.insertInto('users').values({ email: 'a@example.com', password_hash: 'x', created_at: '2026-01-01T00:00:00.000Z' }).execute();
    await db.insertInto('buckets').values({ owner_id: 1, name: 'b', storage_name: 'b-1', created_at: '2026-01-01T00:00:00.000Z' }).execute();
    const names = ['Straße.txt', ...Array.from({ length: 1200 }, (_, i) => `Old/FILE-${i}.TXT`)];
    for (const [i, filename] of names.entries()) {
      const at = '2026-01-01T00:00:00.000Z';
      await db
        .insertInto('objects')
        .values({ bucket_id: 1, filename, storage_key: `k${i}`, size: 1, content_type: 'text/plain', etag: 'e', created_at: at, updated_at: at })
        .execute();
    }
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    const rows: { filename: string; name_folded: string | null }[] = await db.selectFrom('objects').select(['filename', 'name_folded']).execute();
    expect(rows).toHaveLength(names.length);
    for (const row of rows) expect(row.name_folded).toBe(foldName(row.filename));
  });
});
