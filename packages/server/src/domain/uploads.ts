/**
 * Storing a file. A large file's bytes go to a new, unique blob key first;
 * then one transaction (db/object-writes/) records the row, moves the
 * bucket's counts and the owner's usage (checked against the plan's cap in
 * the same conditional update) and retires the replaced version. A small
 * file's bytes are written in that same transaction. A crash anywhere leaves
 * the old version or the new one, and at worst an unreferenced blob that
 * garbage collection removes later.
 */
import type { UploadResult } from '@pail/shared';
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { BlobTooLargeError } from '../blob/blob-store.js';
import { contentHashOf } from '../blob/content-hash.js';
import { takeSmallBody } from '../blob/small-body.js';
import { WriteRefused } from '../db/object-writes/object-writes.js';
import { findObjectRow } from '../db/repositories/objects.js';
import { storageUsed } from '../db/repositories/users.js';
import type { AccountRow } from '../db/schema.js';
import type { BucketIdentity } from './buckets.js';
import { errors } from './errors.js';
import { retireVersions } from './object-bytes.js';
import type { StoragePorts } from './ports.js';
import { planOf } from './users.js';

/** Uploads of a declared size up to this go straight to the store; the commit checks the cap. */
const PRECHECK_ABOVE_BYTES = 1024 * 1024;

export interface UploadInput {
  owner: AccountRow;
  bucket: BucketIdentity;
  filename: string;
  body: Readable;
  contentType: string;
  /** From Content-Length when the client sent one: lets hopeless uploads fail before any byte is stored. */
  declaredSize?: number;
  /** The body is the raw request: its chunks are this upload's alone (PutOptions.releaseChunks). */
  rawRequestBody?: boolean;
}

export async function uploadObject(ports: StoragePorts, input: UploadInput): Promise<UploadResult> {
  const { owner, bucket, filename } = input;
  const { maxFileBytes, inlineMaxBytes } = ports.limits;
  const plan = planOf(owner);
  const cap = ports.limits.plans[plan].storageBytes;
  if (input.declaredSize !== undefined && input.declaredSize > maxFileBytes) throw errors.fileTooLarge(maxFileBytes);
  // Room left under the cap, counting the replaced file's bytes as freed. Only
  // a guide to stop a doomed large upload early; the commit is the real
  // check, so small uploads of a known size skip the two lookups.
  let maxBytes = maxFileBytes;
  if (input.declaredSize === undefined || input.declaredSize > PRECHECK_ABOVE_BYTES) {
    const existing = await findObjectRow(ports.db, bucket.id, filename);
    const headroom = Math.max(0, cap - (await storageUsed(ports.db, owner.id)) + (existing?.size ?? 0));
    if (input.declaredSize !== undefined && input.declaredSize > headroom) throw errors.storageLimit(plan, cap);
    maxBytes = Math.min(maxBytes, headroom);
  }
  const tooLarge = () => (maxBytes === maxFileBytes ? errors.fileTooLarge(maxFileBytes) : errors.storageLimit(plan, cap));

  const storageKey = `${bucket.storage_name}/${timeOrderedUuid()}`;
  // A body that may be small is read that far first; a longer one carries on to the store.
  const body =
    input.declaredSize !== undefined && input.declaredSize > inlineMaxBytes
      ? { stream: input.body }
      : await takeSmallBody(input.body, Math.min(inlineMaxBytes, maxBytes));
  let stored: { size: number; contentHash: string; inlineBytes?: Buffer };
  if ('small' in body) {
    if (body.small.length > maxBytes) throw tooLarge();
    stored = { size: body.small.length, contentHash: await contentHashOf(body.small), inlineBytes: body.small };
  } else {
    try {
      stored = await ports.blobs.put(storageKey, body.stream, { maxBytes, contentType: input.contentType, releaseChunks: input.rawRequestBody === true });
    } catch (error) {
      throw error instanceof BlobTooLargeError ? tooLarge() : error;
    }
  }

  let replaced;
  try {
    replaced = await ports.writes.commitUpload({
      ownerId: owner.id,
      cap,
      bucketId: bucket.id,
      filename,
      storageKey,
      contentType: input.contentType,
      ...stored,
    });
  } catch (error) {
    if (!stored.inlineBytes) await ports.blobs.delete([storageKey]).catch(() => {});
    if (error instanceof WriteRefused) throw error.refusal === 'over-cap' ? errors.storageLimit(plan, cap) : errors.bucketNotFound();
    throw error;
  }
  await ports.caches.changed('objects');
  if (replaced) await retireVersions(ports, [replaced]);
  return { filename, size: stored.size, updated: replaced !== null };
}

/**
 * A UUIDv7 (RFC 9562): the time in milliseconds, then random bits, so new
 * storage keys land at the end of the storage-key indexes
 * (docs/performance.md). Made from Node's pooled randomUUID().
 */
function timeOrderedUuid(): string {
  const time = Date.now().toString(16).padStart(12, '0');
  // randomUUID(): xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx; keep its random bits after the version digit.
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${randomUUID().slice(15)}`;
}
