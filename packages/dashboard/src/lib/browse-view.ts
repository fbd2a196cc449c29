/**
 * What the file browser shows, kept in the page's URL so that a reload, the
 * back button or a shared link lands on the same view:
 * `/buckets/3?folder=photos%2F&q=cat&sort=size&order=desc&page=2&cursor=…`.
 * Defaults are left out, so the plain bucket URL is the top, by name.
 */
import { filenameProblem, isFolderMarker } from '@pail/shared/names';

export type SortColumn = 'name' | 'size' | 'type' | 'updated';
export type SortOrder = 'asc' | 'desc';

export interface BrowseView {
  /** `''` for the top of the bucket, else a path ending in `/`. */
  folder: string;
  /** The search box's text (searched on the server, the whole tree under the folder). */
  search: string;
  sort: SortColumn;
  order: SortOrder;
  /** The cursor of the page shown; null for the first page. */
  cursor: string | null;
  /** The page's number from 1, for "Page 3" (the cursor alone says where it starts). */
  page: number;
}

const SORTS: readonly SortColumn[] = ['name', 'size', 'type', 'updated'];

export function viewFromQuery(search: string): BrowseView {
  const params = new URLSearchParams(search);
  const folder = params.get('folder') ?? '';
  const sort = params.get('sort') as SortColumn | null;
  const cursor = params.get('cursor');
  const page = Number(params.get('page'));
  return {
    // Anything that is not a valid folder name means the top.
    folder: isFolderMarker(folder) && filenameProblem(folder) === null ? folder : '',
    search: params.get('q') ?? '',
    sort: sort && SORTS.includes(sort) ? sort : 'name',
    order: params.get('order') === 'desc' ? 'desc' : 'asc',
    cursor: cursor || null,
    page: cursor && Number.isInteger(page) && page > 1 ? page : 1,
  };
}

/** The query string of a view (with its `?`), or `''` for the default view. */
export function queryOf(view: Partial<BrowseView>): string {
  const params = new URLSearchParams();
  if (view.folder) params.set('folder', view.folder);
  if (view.search) params.set('q', view.search);
  if (view.sort && view.sort !== 'name') params.set('sort', view.sort);
  if (view.order === 'desc') params.set('order', 'desc');
  if (view.cursor) {
    params.set('page', String(view.page ?? 2));
    params.set('cursor', view.cursor);
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}
