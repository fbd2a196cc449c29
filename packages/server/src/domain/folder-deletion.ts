/**
 * Deleting a folder with everything in it: every file whose name starts with
 * the folder's (its folder marker too), each in its own transaction
 * (deleteObject), so a crash leaves each file whole or gone, and counts and
 * usage exact at every step. Interrupted, the same request again deletes
 * what is left.
 */
import { isFolderMarker, type DeleteFolderResult } from '@pail/shared';
import { listObjectRows } from '../db/repositories/objects.js';
import type { BucketRow } from '../db/schema.js';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { AppError } from './errors.js';
import { deleteObject, parseFilename } from './objects.js';
import type { StoragePorts } from './ports.js';

const PAGE = 500;

/** `rawPrefix` with or without its trailing `/`; 0 deleted when nothing is under it (a deletion already finished). */
export async function deleteFolder(ports: StoragePorts, bucket: BucketRow, rawPrefix: string, operation?: string): Promise<DeleteFolderResult> {
  const prefix = parseFilename(isFolderMarker(rawPrefix) ? rawPrefix : `${rawPrefix}/`);
  let deleted = 0;
  for (;;) {
    // Always the first page: the rows deleted are gone from it.
    const rows = await listObjectRows(ports.db, bucket.id, { prefix, limit: PAGE });
    if (rows.length === 0) break;
    for (const row of rows) {
      try {
        await deleteObject(ports, bucket, row.filename, operation);
        deleted += 1;
      } catch (error) {
        // Deleted by another request meanwhile: gone either way.
        if (!(error instanceof AppError && error.code === 'FileNotFound')) throw error;
      }
      // On SQLite a deletion never waits for I/O: a turn of the event loop between files lets other requests in.
      await nextTurn();
    }
  }
  return { deleted, prefix };
}
