/**
 * File listings asked for with `sort`, `order` or `search`: what the
 * dashboard's file browser asks for. The default listing (none of them:
 * names ascending in byte order, as S3 lists) stays in objects.ts, with its
 * own cursor format.
 *
 * - `search`: a substring anywhere in the name after `prefix`, ignoring case
 *   (Unicode folding, db/folded-names.ts), `%` and `_` literal. With
 *   `delimiter=/` it searches the whole folder tree under `prefix` and
 *   returns the matching files (no folder markers), `folders` empty: a search
 *   box finds files wherever they are below the folder shown.
 * - `sort` name | size | type | updated, `order` asc | desc; ties by name in
 *   the same order. By name is as a file manager sorts: natural (`file2`
 *   before `file10`) and ignoring case (db/name-sort-keys.ts). With
 *   `delimiter=/` and no search, the folders come first (in that name
 *   order: descending only when sorting by name descending), then the files.
 */
import type { BucketRow, Db, ObjectRow } from '../db/schema.js';
import { foldName, escapeLike } from '../db/folded-names.js';
import { nameSortKey } from '../db/name-sort-keys.js';
import {
  listNames,
  listSortedObjectRows,
  SORT_COLUMNS,
  sortValueOf,
  type SortKey,
  type SortOrder,
  type SortPosition,
} from '../db/repositories/sorted-objects.js';
import { errors } from './errors.js';

export const SORT_KEYS = Object.keys(SORT_COLUMNS) as SortKey[];
const ORDERS: readonly SortOrder[] = ['asc', 'desc'];
const MAX_SEARCH_LENGTH = 1024;
const LONE_SURROGATE = /\p{Surrogate}/u;

export interface SortedListing {
  prefix: string;
  limit: number;
  folders: boolean;
  search: string | undefined;
  sort: SortKey;
  order: SortOrder;
  cursor: string | undefined;
}

/** The listing's search, sort and order, checked; null when none is given (the default listing). */
export function parseSortAndSearch(query: { search?: string | undefined; sort?: string | undefined; order?: string | undefined }) {
  const given = (value: string | undefined) => value !== undefined && value !== '';
  const sort = given(query.sort) ? query.sort! : 'name';
  const order = given(query.order) ? query.order! : 'asc';
  if (!(SORT_KEYS as string[]).includes(sort)) throw errors.validation(`sort must be one of ${SORT_KEYS.join(', ')}`);
  if (!(ORDERS as string[]).includes(order)) throw errors.validation('order must be asc or desc');
  const search = query.search === undefined || query.search === '' ? undefined : query.search;
  if (search !== undefined && (search.length > MAX_SEARCH_LENGTH || LONE_SURROGATE.test(search))) {
    throw errors.validation(`search must be valid text of at most ${MAX_SEARCH_LENGTH} characters`);
  }
  if (search === undefined && !given(query.sort) && !given(query.order)) return null;
  return { search, sort: sort as SortKey, order: order as SortOrder };
}

type Position = { folder: string } | ({ file: true } & SortPosition);
type Entry = { folder: string } | { row: ObjectRow };

export async function listSorted(
  db: Db,
  bucket: BucketRow,
  listing: SortedListing,
): Promise<{ rows: ObjectRow[]; folders: string[]; nextCursor: string | null }> {
  const { prefix, limit, sort, order } = listing;
  const position = listing.cursor === undefined ? undefined : decodeSortedCursor(listing.cursor, sort, order);
  const entries: Entry[] = [];
  const foldersFirst = listing.folders && listing.search === undefined;
  if (foldersFirst && (position === undefined || 'folder' in position)) {
    const folderOrder = sort === 'name' ? order : 'asc';
    const folders = await subfolders(db, bucket.id, prefix, folderOrder, position && 'folder' in position ? position.folder : undefined, limit + 1);
    entries.push(...folders.map((folder) => ({ folder })));
  }
  if (entries.length <= limit) {
    const rows = await listSortedObjectRows(db, bucket.id, {
      prefix,
      directOnly: foldersFirst,
      skipMarkers: listing.folders && !foldersFirst,
      foldedPattern: listing.search === undefined ? undefined : `${escapeLike(foldName(prefix))}%${escapeLike(foldName(listing.search))}%`,
      sort,
      order,
      after: position && 'file' in position ? position : undefined,
      limit: limit + 1 - entries.length,
    });
    entries.push(...rows.map((row) => ({ row })));
  }
  const page = entries.slice(0, limit);
  const last = page[page.length - 1];
  const next: Position | undefined =
    entries.length > limit && last
      ? 'folder' in last
        ? { folder: last.folder }
        : { file: true, key: sortValueOf(last.row, sort), filename: last.row.filename }
      : undefined;
  return {
    rows: page.flatMap((entry) => ('row' in entry ? [entry.row] : [])),
    folders: page.flatMap((entry) => ('folder' in entry ? [entry.folder] : [])),
    nextCursor: next === undefined ? null : encodeSortedCursor(sort, order, next),
  };
}

const WALK_BATCH = 256;

/**
 * Up to `max` folders directly under `prefix`, past `after`, in name order
 * (natural, case-insensitive: name keys, db/name-sort-keys.ts) either way.
 * A folder's key begins the key of everything in it, so each folder found
 * skips past all of it: a folder with many files costs one query, not a
 * read of all of them.
 */
async function subfolders(db: Db, bucketId: number, prefix: string, order: SortOrder, after: string | undefined, max: number): Promise<string[]> {
  const found: string[] = [];
  // Ascending, a folder's keys all sort from its key up to pastPrefix(key); descending, every key before it sorts below it.
  const past = (folder: string) => {
    const key = nameSortKey(folder);
    return order === 'asc' ? { from: pastPrefix(key) } : { before: key };
  };
  let bound: { after?: string; from?: string; before?: string } = after === undefined ? {} : past(after);
  while (found.length < max) {
    const names = await listNames(db, bucketId, { prefix, order, ...bound, limit: WALK_BATCH });
    const folder = names.map((name) => folderOf(name, prefix)).find((f) => f !== null);
    if (folder) {
      found.push(folder);
      bound = past(folder);
      continue;
    }
    const last = names[names.length - 1];
    if (names.length < WALK_BATCH || last === undefined) break;
    bound = order === 'asc' ? { after: nameSortKey(last) } : { before: nameSortKey(last) };
  }
  return found;
}

function folderOf(name: string, prefix: string): string | null {
  const slash = name.indexOf('/', prefix.length);
  return slash === -1 ? null : name.slice(0, slash + 1);
}

/** The first name (or name key) after every one that starts with `prefix` (see objects.ts). */
function pastPrefix(prefix: string): string {
  const last = prefix.codePointAt(prefix.length - 1)!;
  const lastLength = last > 0xffff ? 2 : 1;
  return prefix.slice(0, -lastLength) + String.fromCodePoint(last + 1);
}

// `s1.` cannot start the default listing's cursor (plain base64url), so neither is taken for the other.
const CURSOR_MARK = 's1.';

function encodeSortedCursor(sort: SortKey, order: SortOrder, position: Position): string {
  const fields = 'folder' in position ? [sort, order, 'd', position.folder] : [sort, order, 'f', position.filename, position.key];
  return CURSOR_MARK + Buffer.from(JSON.stringify(fields), 'utf8').toString('base64url');
}

function decodeSortedCursor(cursor: string, sort: SortKey, order: SortOrder): Position {
  const invalid = () => errors.validation('cursor is not valid for this sort and order; pass next_cursor from the previous page');
  if (!cursor.startsWith(CURSOR_MARK)) throw invalid();
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(cursor.slice(CURSOR_MARK.length), 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(fields) || fields[0] !== sort || fields[1] !== order || typeof fields[3] !== 'string') throw invalid();
  if (fields[2] === 'd' && fields.length === 4) return { folder: fields[3] };
  const key: unknown = fields[4];
  const keyFits = sort === 'size' ? Number.isSafeInteger(key) : typeof key === 'string';
  if (fields[2] === 'f' && fields.length === 5 && keyFits) return { file: true, key: key as string | number, filename: fields[3] };
  throw invalid();
}
