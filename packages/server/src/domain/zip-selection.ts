/**
 * What a zip download holds: a folder (everything under a prefix), or a
 * selection of files and folders, each file once. Rows come from the
 * database a page at a time, in name order, so a folder of any size is
 * never held in memory whole.
 */
import { isFolderMarker, type ZipSelection } from '@pail/shared';
import { findObjectRows, listObjectRows } from '../db/repositories/objects.js';
import type { BucketRow, Db, ObjectRow } from '../db/schema.js';
import { errors } from './errors.js';
import { parseFilename } from './objects.js';

/** Rows read from the database at a time. */
export const ZIP_PAGE_ROWS = 250;

export interface ZipPlan {
  /** The folder entries are named relative to: '' or a name ending in /. */
  prefix: string;
  /** The zip's own filename: the folder's last segment, or the bucket's name, with `.zip`. */
  archiveName: string;
  /** The files, a page at a time. */
  pages: () => AsyncGenerator<ObjectRow[], void, undefined>;
}

/** A folder name as given ('' for the whole bucket), checked and ending in /. */
function parseFolder(raw: string, what: string): string {
  if (raw === '') return '';
  const folder = raw.endsWith('/') ? raw : `${raw}/`;
  try {
    return parseFilename(folder);
  } catch {
    throw errors.validation(`${what} "${raw}" is not a valid folder name`);
  }
}

function archiveNameOf(bucket: Pick<BucketRow, 'name'>, prefix: string): string {
  const segments = prefix.split('/').filter((segment) => segment !== '');
  return `${segments[segments.length - 1] ?? bucket.name}.zip`;
}

/** `GET …/zip?prefix=`: everything under a folder, or the whole bucket. */
export function folderZip(db: Db, bucket: BucketRow, rawPrefix: string | undefined): ZipPlan {
  const prefix = parseFolder(rawPrefix ?? '', 'prefix');
  return { prefix, archiveName: archiveNameOf(bucket, prefix), pages: () => folderPages(db, bucket.id, prefix) };
}

/**
 * `POST …/zip`: the files and folders selected, all under `prefix`. A file
 * also under a selected folder, a folder under another, and a name given
 * twice are taken once.
 */
export function selectionZip(db: Db, bucket: BucketRow, selection: ZipSelection): ZipPlan {
  const prefix = parseFolder(selection.prefix ?? '', 'prefix');
  const outside = (name: string) => errors.validation(`"${name}" is not in the folder "${prefix}" (prefix)`);
  const folders = [...new Set((selection.folders ?? []).map((raw) => parseFolder(raw, 'folder')))].sort();
  for (const folder of folders) if (!folder.startsWith(prefix)) throw outside(folder);
  if (folders.includes('')) throw errors.validation('A folder in folders must not be empty: leave folders out and zip the bucket with GET …/zip');
  const topFolders = folders.filter((folder) => !folders.some((other) => other !== folder && folder.startsWith(other)));
  const inAFolder = (name: string) => topFolders.some((folder) => name.startsWith(folder));
  const filenames = [...new Set(selection.filenames ?? [])].map(parseFilename).sort();
  for (const name of filenames) if (!name.startsWith(prefix)) throw outside(name);
  const loose = filenames.filter((name) => !inAFolder(name) && !isFolderMarker(name));
  if (topFolders.length === 0 && loose.length === 0) throw errors.validation('Select at least one file or folder to zip (filenames, folders)');
  return {
    prefix,
    archiveName: archiveNameOf(bucket, prefix),
    pages: async function* () {
      for (let at = 0; at < loose.length; at += ZIP_PAGE_ROWS) {
        const rows = await findObjectRows(db, bucket.id, loose.slice(at, at + ZIP_PAGE_ROWS));
        if (rows.length > 0) yield rows;
      }
      for (const folder of topFolders) yield* folderPages(db, bucket.id, folder);
    },
  };
}

async function* folderPages(db: Db, bucketId: number, prefix: string): AsyncGenerator<ObjectRow[], void, undefined> {
  let after: string | undefined;
  for (;;) {
    const rows = await listObjectRows(db, bucketId, { prefix, after, limit: ZIP_PAGE_ROWS });
    if (rows.length > 0) yield rows;
    if (rows.length < ZIP_PAGE_ROWS) return;
    after = rows[rows.length - 1]!.filename;
  }
}
