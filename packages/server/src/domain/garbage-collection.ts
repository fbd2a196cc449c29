/**
 * Garbage collection: removes blobs that no object row references (an upload
 * whose process died between storing bytes and committing the row, or a
 * replaced blob whose deletion failed) and finishes interrupted bucket
 * deletions. Only blobs older than the grace period are touched, so uploads in
 * flight are never harmed; deleting an unreferenced blob twice is harmless, so
 * several instances may run this at once.
 */
import { STAGING_PREFIX } from '../blob/staging.js';
import { referencedKeys } from '../db/repositories/objects.js';
import { dropLapsedReservations } from '../db/repositories/upload-reservations.js';
import { resumePurges } from './bucket-deletion.js';
import type { StoragePorts } from './ports.js';

const CHECK_BATCH = 500;

export interface GcReport {
  orphansRemoved: number;
  bucketsPurged: number;
}

export async function collectGarbage(
  ports: Pick<StoragePorts, 'db' | 'writes' | 'blobs' | 'events' | 'durable'>,
  graceSeconds: number,
  now = Date.now(),
): Promise<GcReport> {
  const bucketsPurged = await resumePurges(ports);
  await dropLapsedReservations(ports.db, new Date(now).toISOString());
  const cutoff = now - graceSeconds * 1000;
  let orphansRemoved = 0;
  let batch: string[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const keep = await referencedKeys(ports.db, batch);
    const orphans = batch.filter((key) => !keep.has(key));
    if (orphans.length > 0) await ports.blobs.delete(orphans);
    orphansRemoved += orphans.length;
    batch = [];
  };
  for await (const blob of ports.blobs.list('')) {
    // Resumable uploads' staged bytes are theirs to remove when they end or expire (resumable-uploads.ts).
    if (blob.modifiedAt.getTime() > cutoff || blob.key.startsWith(STAGING_PREFIX)) continue;
    batch.push(blob.key);
    if (batch.length >= CHECK_BATCH) await flush();
  }
  await flush();
  return { orphansRemoved, bucketsPurged };
}
