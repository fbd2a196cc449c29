/**
 * Listings other than the default one (names ascending, byte order): sorted
 * by a column either way, or searched. They page with a keyset over (sort
 * column, filename), so a page never repeats or skips a file however many
 * there are. By name they follow `name_sort` (db/name-sort-keys.ts: natural,
 * case-insensitive, one key per name), which an index serves. No index
 * serves the other orders: each page reads the rows under the prefix (the
 * primary key's range) and sorts them, which keeps uploads from paying for
 * three more indexes (docs/performance.md, "Sorted and searched listings").
 */
import { sql, type SelectQueryBuilder } from 'kysely';
import { escapeLike } from '../folded-names.js';
import { nameSortKey } from '../name-sort-keys.js';
import type { Database, Db, ObjectRow } from '../schema.js';
import { OBJECT_COLUMNS } from './objects.js';
import { startingWith } from '../name-ranges.js';

export type SortKey = 'name' | 'size' | 'type' | 'updated';
export type SortOrder = 'asc' | 'desc';

export const SORT_COLUMNS = { name: 'name_sort', size: 'size', type: 'content_type', updated: 'updated_at' } as const;

/** A row's value in the sort column: for a cursor. */
export function sortValueOf(row: ObjectRow, sort: SortKey): string | number {
  return sort === 'name' ? nameSortKey(row.filename) : row[SORT_COLUMNS[sort]];
}

/**
 * Names under `prefix`: a range of names, and, when the prefix is a folder
 * (or the whole bucket), the same range of name keys, which the name index
 * reads in order. Another prefix (`ph` for `photos/`…) is a range of names only.
 */
function underPrefix<O>(q: SelectQueryBuilder<Database, 'objects', O>, prefix: string, byNameKey: boolean): SelectQueryBuilder<Database, 'objects', O> {
  if (prefix === '') return q;
  if (byNameKey && prefix.endsWith('/')) {
    const key = nameSortKey(prefix);
    return q.$call(startingWith('name_sort', key));
  }
  return q.$call(startingWith('filename', prefix));
}

/** Where the previous page ended: its last file's sort value and name. */
export interface SortPosition {
  key: string | number;
  filename: string;
}

export interface SortedRowsQuery {
  prefix: string;
  /** Only the files directly under `prefix` (no `/` after it): the delimiter listing's files. */
  directOnly: boolean;
  /** Leave out folder markers (names ending in `/`). */
  skipMarkers: boolean;
  /** A LIKE pattern (escaped with `\`) that the folded name must match. */
  foldedPattern?: string | undefined;
  sort: SortKey;
  order: SortOrder;
  after?: SortPosition | undefined;
  limit: number;
}

export function listSortedObjectRows(db: Db, bucketId: number, query: SortedRowsQuery): Promise<ObjectRow[]> {
  const column = SORT_COLUMNS[query.sort];
  let q = underPrefix(db.selectFrom('objects').select(OBJECT_COLUMNS).where('bucket_id', '=', bucketId), query.prefix, column === 'name_sort');
  if (query.directOnly) {
    q = q.where('filename', '<>', query.prefix).where(sql<boolean>`filename not like ${`${escapeLike(query.prefix)}%/%`} escape '\\'`);
  }
  if (query.skipMarkers) q = q.where(sql<boolean>`filename not like '%/'`);
  if (query.foldedPattern !== undefined) q = q.where(sql<boolean>`name_folded like ${query.foldedPattern} escape '\\'`);
  const after = query.after;
  if (after !== undefined) {
    const past = query.order === 'asc' ? '>' : '<';
    // One name, one name key: by name the key alone places a row.
    q =
      column === 'name_sort'
        ? q.where('name_sort', past, String(after.key))
        : q.where((eb) => eb.or([eb(column, past, after.key), eb.and([eb(column, '=', after.key), eb('filename', past, after.filename)])]));
  }
  q = q.orderBy(column, query.order);
  if (column !== 'name_sort') q = q.orderBy('filename', query.order);
  return q.limit(query.limit).execute();
}

/**
 * Names under `prefix` in name-key order either way, for walking a folder's
 * subfolders: past the key `after` or from `from` (ascending), before
 * `before` (descending). Names only: a walk reads many and keeps few.
 */
export async function listNames(
  db: Db,
  bucketId: number,
  page: { prefix: string; order: SortOrder; after?: string | undefined; from?: string | undefined; before?: string | undefined; limit: number },
): Promise<string[]> {
  let q = underPrefix(db.selectFrom('objects').select('filename').where('bucket_id', '=', bucketId), page.prefix, true);
  if (page.after !== undefined) q = q.where('name_sort', '>', page.after);
  if (page.from !== undefined) q = q.where('name_sort', '>=', page.from);
  if (page.before !== undefined) q = q.where('name_sort', '<', page.before);
  const rows = await q.orderBy('name_sort', page.order).limit(page.limit).execute();
  return rows.map((row) => row.filename);
}
