/**
 * Folders are name prefixes ending in `/`, as in S3 (decisions.md, "Folders"):
 * `photos/2026/cat.jpg` is `cat.jpg` in the folder `photos/2026/`. The top of
 * a bucket is the folder `''`.
 */
import { filenameProblem, isFolderMarker } from '@pail/shared/names';

export interface Crumb {
  /** The segment's own name, e.g. `2026`. */
  name: string;
  /** The whole folder up to and including it, e.g. `photos/2026/`. */
  folder: string;
}

/** `photos/2026/` → photos (`photos/`), 2026 (`photos/2026/`). */
export function crumbsOf(folder: string): Crumb[] {
  const crumbs: Crumb[] = [];
  let path = '';
  for (const name of folder.split('/').filter(Boolean)) {
    path += `${name}/`;
    crumbs.push({ name, folder: path });
  }
  return crumbs;
}

/** What is left of a name inside `folder`: `photos/2026/cat.jpg` in `photos/` is `2026/cat.jpg`. */
export function nameInFolder(filename: string, folder: string): string {
  return filename.startsWith(folder) ? filename.slice(folder.length) : filename;
}

/** A folder's own name, without its parent or trailing slash: `photos/2026/` in `photos/` is `2026`. */
export function folderName(folder: string, parent: string): string {
  return nameInFolder(folder, parent).replace(/\/$/, '');
}

/** The last segment, the name a browser saves a download under. */
export function baseName(filename: string): string {
  return filename.split('/').pop() ?? filename;
}

/** The dashboard page of a folder: `/buckets/3`, or `/buckets/3?folder=photos%2F2026%2F`. */
export function folderPagePath(bucketId: number, folder: string): string {
  return folder ? `/buckets/${bucketId}?${new URLSearchParams({ folder }).toString()}` : `/buckets/${bucketId}`;
}

/** The folder named in a page's query string; anything that is not a valid folder name means the top. */
export function folderFromQuery(search: string): string {
  const folder = new URLSearchParams(search).get('folder') ?? '';
  return isFolderMarker(folder) && filenameProblem(folder) === null ? folder : '';
}
