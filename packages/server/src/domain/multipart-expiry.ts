/**
 * Unfinished multipart uploads are removed once they are older than
 * MULTIPART_EXPIRY_SECONDS (S3's usual lifecycle rule: 7 days), so parts a
 * client forgot stop counting against its owner's cap. Each upload's rows go
 * first, in one transaction (removeUpload), then its part blobs: when several
 * instances sweep at once, only the one whose delete removed the rows deletes
 * the blobs, and a crash between the two leaves unreferenced blobs that
 * garbage collection removes.
 */
import { removeUpload, uploadsBegunBefore } from '../db/repositories/multipart.js';
import { announceEnded } from './multipart.js';
import { dropBlobs } from './object-bytes.js';
import type { StoragePorts } from './ports.js';

const BATCH = 100;

/** Removes every upload begun more than `maxAgeSeconds` before `now`; returns how many this call removed. */
export async function expireMultipartUploads(
  ports: Pick<StoragePorts, 'db' | 'blobs' | 'events' | 'durable' | 'clock'>,
  maxAgeSeconds: number,
  now = ports.clock.now(),
): Promise<number> {
  const cutoff = new Date(now - maxAgeSeconds * 1000).toISOString();
  let removed = 0;
  for (;;) {
    const ids = await uploadsBegunBefore(ports.db, cutoff, BATCH);
    for (const id of ids) {
      const ended = await removeUpload(ports.db, id);
      // Null: another instance's sweep, an abort or a completion ended it first, and deletes its blobs.
      if (ended === null) continue;
      removed += 1;
      await announceEnded(ports, id, ended, 'expired', null);
      await dropBlobs(ports, ended.partKeys);
    }
    if (ids.length < BATCH) return removed;
  }
}
