/**
 * Storing a file. A large file's bytes go to a new, unique blob key first;
 * then one transaction (db/object-writes/) records the row, moves the
 * bucket's counts and the owner's usage (checked against the plan's cap in
 * the same conditional update) and retires the replaced version. A small
 * file's bytes are written in that same transaction. A crash anywhere leaves
 * the old version or the new one, and at worst an unreferenced blob that
 * garbage collection removes later.
 */
import { isFolderMarker, type UploadResult } from '@pail/shared';
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { BlobTooLargeError } from '../blob/blob-store.js';
import { contentHashOf } from '../blob/content-hash.js';
import { takeSmallBody } from '../blob/small-body.js';
import { conditionRefusal, WriteRefused, type CommitInput, type Committed, type Refusal, type WriteCondition } from '../db/object-writes/object-writes.js';
import { findObjectRow } from '../db/repositories/objects.js';
import type { AccountRow } from '../db/schema.js';
import type { BucketIdentity } from './buckets.js';
import { errors } from './errors.js';
import { noSuchUpload } from './multipart-refusals.js';
import { retireVersions } from './object-bytes.js';
import type { StoragePorts } from './ports.js';
import { UploadReservation } from './upload-reservations.js';
import { planOf } from './users.js';

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
  /** A limit below the server's per-file limit (a signed url's max_bytes). */
  maxBytes?: number;
  /** Headers and user metadata to keep with the file (the S3 API's); the Pail API sets none. */
  metadata?: Record<string, string>;
  /**
   * The ETag to keep instead of the content hash, read once the body has
   * been (the S3 API's: the MD5 of the bytes, which S3 tools compare with).
   */
  etag?: () => string;
  /**
   * Bytes of this upload already held against the cap elsewhere (a completing
   * multipart upload's kept parts, which count until the commit): not reserved twice.
   */
  heldBytes?: number;
  /** Verified full-object checksums to keep (algorithm to base64), read once the body has been (the S3 API's flexible checksum). */
  checksums?: () => Record<string, string> | undefined;
  /**
   * S3's conditional write, checked inside the commit's transaction: no other
   * write to the name can come between the check and the commit. (A door may
   * also call checkWriteCondition first, to refuse before reading a body.)
   */
  condition?: WriteCondition;
  /** The multipart upload this upload completes: it ends in the commit's transaction, and its part blobs are deleted after. */
  endsUpload?: string;
}

/** Refuses a conditional write that cannot succeed as things stand, before any byte is read; the commit checks again. */
export async function checkWriteCondition(ports: Pick<StoragePorts, 'db'>, bucketId: number, filename: string, condition: WriteCondition): Promise<void> {
  const refusal = conditionRefusal(condition, await findObjectRow(ports.db, bucketId, filename));
  // The plan and cap only name an over-cap refusal, which a condition never is.
  if (refusal) throw refusalError(refusal, '', 0);
}

/** A conditional write whose condition did not hold; each door answers it in its own terms (S3: 412 PreconditionFailed). */
export class WriteConditionFailed extends Error {
  constructor() {
    super('The write condition did not hold');
    this.name = 'WriteConditionFailed';
  }
}

export async function uploadObject(ports: StoragePorts, input: UploadInput): Promise<UploadResult> {
  const { owner, bucket, filename } = input;
  const { inlineMaxBytes } = ports.limits;
  const maxFileBytes = Math.min(ports.limits.maxFileBytes, input.maxBytes ?? Infinity);
  const plan = planOf(owner);
  const cap = ports.limits.plans[plan].storageBytes;
  const marker = isFolderMarker(filename);
  if (marker && input.declaredSize !== undefined && input.declaredSize > 0) throw errors.folderMarkerNotEmpty();
  if (input.declaredSize !== undefined && input.declaredSize > maxFileBytes) throw errors.fileTooLarge(maxFileBytes);

  const storageKey = `${bucket.storage_name}/${timeOrderedUuid()}`;
  let reservation: UploadReservation | null = null;
  try {
    // A body that may be small is read that far first; a longer one carries on to the store.
    const body =
      input.declaredSize !== undefined && input.declaredSize > inlineMaxBytes
        ? { stream: input.body }
        : await takeSmallBody(input.body, marker ? 1 : Math.min(inlineMaxBytes, maxFileBytes));
    if (marker && !('small' in body && body.small.length === 0)) throw errors.folderMarkerNotEmpty();
    let stored: { size: number; contentHash: string; inlineBytes?: Buffer };
    if ('small' in body) {
      if (body.small.length > maxFileBytes) throw errors.fileTooLarge(maxFileBytes);
      stored = { size: body.small.length, contentHash: await contentHashOf(body.small), inlineBytes: body.small };
    } else {
      // Bytes bound for the blob store are held against the cap from the start (upload-reservations.ts),
      // all of them when the length is declared, else as they stream; the replaced version's bytes count as freed.
      const replacedSize = (await findObjectRow(ports.db, bucket.id, filename))?.size ?? 0;
      const rules = { cap, plan, maxUploads: ports.limits.maxUploadsPerUser };
      const declared = input.declaredSize;
      const needed = declared === undefined ? 0 : Math.max(0, declared - replacedSize - (input.heldBytes ?? 0));
      reservation = await UploadReservation.take(ports.db, owner.id, needed, rules);
      const stream = declared === undefined ? reservation.meter(body.stream, replacedSize) : body.stream;
      try {
        stored = await ports.blobs.put(storageKey, stream, {
          maxBytes: maxFileBytes,
          contentType: input.contentType,
          releaseChunks: input.rawRequestBody === true,
        });
      } catch (error) {
        throw error instanceof BlobTooLargeError ? errors.fileTooLarge(maxFileBytes) : error;
      }
    }
    const { replaced, endedParts } = await commit(ports, {
      ownerId: owner.id,
      cap,
      plan,
      bucketId: bucket.id,
      filename,
      storageKey,
      contentType: input.contentType,
      ...stored,
      ...(input.etag ? { contentHash: input.etag() } : {}),
      ...(input.metadata && Object.keys(input.metadata).length > 0 ? { metadata: JSON.stringify(input.metadata) } : {}),
      ...checksumsOf(input),
      ...(input.condition ? { condition: input.condition } : {}),
      ...(input.endsUpload !== undefined ? { endsUpload: input.endsUpload } : {}),
    });
    await ports.caches.changed('objects');
    if (replaced) await retireVersions(ports, [replaced]);
    // Best effort: a part blob left behind is unreferenced now, and garbage collection removes it.
    if (endedParts.length > 0) await ports.blobs.delete(endedParts).catch(() => {});
    return { filename, size: stored.size, updated: replaced !== null };
  } finally {
    await reservation?.release();
  }
}

/** The commit; on a refusal the stored bytes are removed and the refusal becomes the answer. */
async function commit(ports: StoragePorts, input: CommitInput & { plan: string }): Promise<Committed> {
  try {
    return await ports.writes.commitUpload(input);
  } catch (error) {
    if (!input.inlineBytes) await ports.blobs.delete([input.storageKey]).catch(() => {});
    if (error instanceof WriteRefused) throw refusalError(error.refusal, input.plan, input.cap);
    throw error;
  }
}

function refusalError(refusal: Refusal, plan: string, cap: number): Error {
  if (refusal === 'over-cap') return errors.storageLimit(plan, cap);
  if (refusal === 'precondition-failed') return new WriteConditionFailed();
  if (refusal === 'no-upload') return noSuchUpload();
  // If-Match on a name that holds no file: S3 answers 404 NoSuchKey.
  return refusal === 'no-file' ? errors.fileNotFound() : errors.bucketNotFound();
}

function checksumsOf(input: UploadInput): { checksums?: string } {
  const checksums = input.checksums?.();
  return checksums && Object.keys(checksums).length > 0 ? { checksums: JSON.stringify(checksums) } : {};
}

/**
 * A UUIDv7 (RFC 9562): the time in milliseconds, then random bits, so new
 * storage keys land at the end of the storage-key indexes
 * (docs/performance.md). Made from Node's pooled randomUUID().
 */
export function timeOrderedUuid(): string {
  const time = Date.now().toString(16).padStart(12, '0');
  // randomUUID(): xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx; keep its random bits after the version digit.
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${randomUUID().slice(15)}`;
}
