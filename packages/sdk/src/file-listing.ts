/** How `listFiles` and `iterateFiles` are asked for a page of files and folders, and what a page holds. */
import type { CallOptions } from './call-options.js';
import type { BucketObject } from './types.js';

export interface ListFilesOptions extends CallOptions {
  /** Only files whose name starts with this; with `delimiter`, a folder such as `photos/`. */
  prefix?: string | undefined;
  /**
   * `'/'` (the only one the server supports): list the files directly under
   * `prefix` in `files`, and the folders under it in `folders`.
   */
  delimiter?: '/' | undefined;
  /** Page size, 1 to 1000 (server default 1000). */
  limit?: number | undefined;
  /** `nextCursor` of the previous page. */
  cursor?: string | undefined;
  /**
   * Only files whose name after `prefix` contains this, ignoring case
   * (Unicode: `straße` finds `STRASSE.txt`); `%` and `_` are literal. With
   * `delimiter: '/'` it searches every folder under `prefix` and returns
   * files only (`folders` is empty).
   */
  search?: string | undefined;
  /** The column to sort by, ties by name. Default `'name'` (byte order of UTF-8). */
  sort?: FileSort | undefined;
  /** Default `'asc'`. */
  order?: SortOrder | undefined;
}

/** What `listFiles` can sort by: the name, the size, the content type or the time of the last upload (`updated_at`). */
export type FileSort = 'name' | 'size' | 'type' | 'updated';
export type SortOrder = 'asc' | 'desc';

export interface FilePage {
  files: BucketObject[];
  /** With `delimiter: '/'`, the folders directly under the prefix, each ending in `/` (`photos/2026/`); otherwise empty. */
  folders: string[];
  /** Pass as `cursor` to get the next page; null on the last page. */
  nextCursor: string | null;
}

export interface IterateFilesOptions extends CallOptions {
  prefix?: string | undefined;
  search?: string | undefined;
  sort?: FileSort | undefined;
  order?: SortOrder | undefined;
  /** Files fetched per request, 1 to 1000. Default 1000. */
  pageSize?: number | undefined;
}
