/** Migration 0018: the file browser's name order, natural and case-insensitive. */
import { type Kysely, type Migration } from 'kysely';
import { nameSortKey } from '../name-sort-keys.js';
import { columns, type Dialect } from './columns.js';

/**
 * Each file's name sort key (db/name-sort-keys.ts), stored beside its name by
 * every object write and filled in here for the files that exist, compared
 * as bytes; indexed per bucket, so a page sorted by name, and the walk over
 * a folder's subfolders in that order, read a page's rows, not a folder's.
 */
export function nameSortKeys(dialect: Dialect): Migration {
  const c = columns(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('objects').addColumn('name_sort', c.binaryText).execute();
      for (;;) {
        const rows: { bucket_id: number; filename: string }[] = await db
          .selectFrom('objects')
          .select(['bucket_id', 'filename'])
          .where('name_sort', 'is', null)
          .limit(500)
          .execute();
        if (rows.length === 0) break;
        for (const row of rows) {
          await db
            .updateTable('objects')
            .set({ name_sort: nameSortKey(row.filename) })
            .where('bucket_id', '=', row.bucket_id)
            .where('filename', '=', row.filename)
            .execute();
        }
      }
      await db.schema.createIndex('objects_bucket_name_sort').on('objects').columns(['bucket_id', 'name_sort']).execute();
    },
  };
}
