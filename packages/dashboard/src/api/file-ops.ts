/**
 * Operations on files and folders beyond upload and delete: move and rename,
 * deleting a folder with everything in it, a file's details and its metadata
 * (README, "Moving and renaming", "Deleting a folder", "File details").
 */
import type { EditFile, FileDetails, MoveResult } from '@pail/shared';
import { isFolderMarker } from '@pail/shared/names';
import { listFiles } from './buckets';
import { fileApiPath, request } from './http';

export interface MoveRequest {
  /** A file, or a folder ending in `/`. */
  from: string;
  /** The new name; a folder's ends in `/`. */
  to: string;
  /** Another of the owner's buckets; absent: the same one. */
  to_bucket_id?: number;
  /** Replace a file already under the new name (otherwise `409 FileExists`). */
  overwrite?: boolean;
}

export async function moveFile(bucketId: number, move: MoveRequest): Promise<MoveResult> {
  const res = await request<{ data: MoveResult }>(`/api/buckets/${bucketId}/move`, { method: 'POST', body: move });
  return res.data;
}

/** The folder's slashes stay literal, each segment encoded; the route wants the trailing `/`. */
export async function deleteFolder(bucketId: number, folder: string): Promise<number> {
  const path = folder.split('/').filter(Boolean).map(encodeURIComponent).join('/');
  const res = await request<{ data: { deleted: number } }>(`/api/buckets/${bucketId}/folders/${path}/`, { method: 'DELETE' });
  return res.data.deleted;
}

export interface FolderSize {
  files: number;
  bytes: number;
  /** More files than were counted: the figures are a lower bound. */
  more: boolean;
}

const COUNT_PAGES = 10;

/**
 * How many files a folder holds (its subfolders included, empty-folder
 * markers left out), read from the listing a thousand at a time; a very
 * large folder is counted up to 10,000 and said to hold more.
 */
export async function folderSize(bucketId: number, folder: string, signal?: AbortSignal): Promise<FolderSize> {
  const size: FolderSize = { files: 0, bytes: 0, more: false };
  let cursor: string | null = null;
  for (let page = 0; page < COUNT_PAGES; page++) {
    const listed = await listFiles(bucketId, { prefix: folder, limit: 1000, cursor }, signal);
    for (const object of listed.data) {
      if (isFolderMarker(object.filename)) continue;
      size.files++;
      size.bytes += object.size;
    }
    cursor = listed.next_cursor;
    if (!cursor) return size;
  }
  size.more = true;
  return size;
}

/** A file's details: the listing's fields, its ETag, user metadata and stored headers. */
export async function getFileDetails(bucketId: number, filename: string, signal?: AbortSignal): Promise<FileDetails> {
  const res = await request<{ data: FileDetails }>(`/api/buckets/${bucketId}/details/${encodeURIComponent(filename)}`, { signal });
  return res.data;
}

/** Changes a file's metadata (replaced whole), type or stored headers (null clears one); the bytes stay. */
export async function editFile(bucketId: number, filename: string, edit: EditFile): Promise<FileDetails> {
  const res = await request<{ data: FileDetails }>(fileApiPath(bucketId, filename), { method: 'PATCH', body: edit });
  return res.data;
}
