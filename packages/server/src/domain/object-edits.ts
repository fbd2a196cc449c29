/**
 * An edit of a file's row in place (its headers, metadata or tags, never its bytes), the one way every such edit
 * is made: applied to the version read, made afresh when another version replaced it meanwhile (503 if that keeps
 * happening), and announced on the commit seam (object-edited) so every instance's caches see it at once.
 */
import type { BucketRow, ObjectRow } from '../db/schema.js';
import { errors } from './errors.js';
import { requireObject } from './objects.js';
import type { StoragePorts } from './ports.js';

const EDIT_ATTEMPTS = 3;

/** `edit` rewrites the version it is given and answers the row as rewritten, or null when that version is gone. */
export async function editObjectRow(
  ports: StoragePorts,
  bucket: BucketRow,
  filename: string,
  operation: string | null,
  what: string,
  edit: (current: ObjectRow) => Promise<ObjectRow | null>,
): Promise<ObjectRow> {
  for (let attempt = 0; attempt < EDIT_ATTEMPTS; attempt++) {
    const edited = await edit(await requireObject(ports, bucket, filename));
    if (!edited) continue;
    await announceEdit(ports, bucket, edited, operation);
    return edited;
  }
  throw errors.unavailable(`The file kept being replaced while its ${what}; try again`);
}

/** Tells every instance a version's row was edited in place (object-edited on the commit seam), so no cache serves the row as it was. */
export async function announceEdit(ports: StoragePorts, bucket: BucketRow, edited: ObjectRow, operation: string | null): Promise<void> {
  await ports.events.announce({
    type: 'object-edited',
    ownerId: bucket.owner_id,
    bucketId: bucket.id,
    bucketStorageName: bucket.storage_name,
    filename: edited.filename,
    storageKey: edited.storage_key,
    operation,
  });
}
