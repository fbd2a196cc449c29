/**
 * Listings other than the default one (names ascending): sorted by a column
 * either way, or searched. They page with a keyset over (sort column,
 * filename), so a page never repeats or skips a file however many there
 * are. No index serves these orders: each page reads the rows under the
 * prefix (the primary key's range) and sorts them, which keeps uploads from
 * paying for three more indexes (docs/performance.md, "Sorted and searched
 * listings").
 */
import { sql } from 'kysely';
import { escapeLike } from '../folded-names.js';
import type { Db, ObjectRow } from '../schema.js';
import { OBJECT_COLUMNS } from './objects.js';

export type SortKey = 'name' | 'size' | 'type' | 'updated';
export type SortOrder = 'asc' | 'desc';

export const SORT_COLUMNS = { name: 'filename', size: 'size', type: 'content_type', updated: 'updated_at' } as const satisfies Record<SortKey, keyof ObjectRow>;

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
  let q = db.selectFrom('objects').select(OBJECT_COLUMNS).where('bucket_id', '=', bucketId);
  if (query.prefix !== '') q = q.where('filename', '>=', query.prefix).where('filename', '<', `${query.prefix}\u{10FFFF}`);
  if (query.directOnly) {
    q = q.where('filename', '<>', query.prefix).where(sql<boolean>`filename not like ${`${escapeLike(query.prefix)}%/%`} escape '\\'`);
  }
  if (query.skipMarkers) q = q.where(sql<boolean>`filename not like '%/'`);
  if (query.foldedPattern !== undefined) q = q.where(sql<boolean>`name_folded like ${query.foldedPattern} escape '\\'`);
  const after = query.after;
  if (after !== undefined) {
    const past = query.order === 'asc' ? '>' : '<';
    q =
      column === 'filename'
        ? q.where('filename', past, after.filename)
        : q.where((eb) => eb.or([eb(column, past, after.key), eb.and([eb(column, '=', after.key), eb('filename', past, after.filename)])]));
  }
  q = q.orderBy(column, query.order);
  if (column !== 'filename') q = q.orderBy('filename', query.order);
  return q.limit(query.limit).execute();
}

/**
 * Names under `prefix` in byte order either way, for walking a folder's
 * subfolders: after `after` or from `from` (ascending), before `before`
 * (descending). Names only: a walk reads many and keeps few.
 */
export async function listNames(
  db: Db,
  bucketId: number,
  page: { prefix: string; order: SortOrder; after?: string | undefined; from?: string | undefined; before?: string | undefined; limit: number },
): Promise<string[]> {
  let q = db.selectFrom('objects').select('filename').where('bucket_id', '=', bucketId);
  if (page.prefix !== '') q = q.where('filename', '>=', page.prefix).where('filename', '<', `${page.prefix}\u{10FFFF}`);
  if (page.after !== undefined) q = q.where('filename', '>', page.after);
  if (page.from !== undefined) q = q.where('filename', '>=', page.from);
  if (page.before !== undefined) q = q.where('filename', '<', page.before);
  const rows = await q.orderBy('filename', page.order).limit(page.limit).execute();
  return rows.map((row) => row.filename);
}
