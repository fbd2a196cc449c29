/**
 * S3 multipart uploads: begin one, keep its parts (each streamed to its own
 * blob and counted against the owner's cap while kept), end it. Completing
 * one is in multipart-complete.ts, its refusals in multipart-refusals.ts.
 */
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { BlobTooLargeError } from '../blob/blob-store.js';
import { findPart, findUpload, insertUpload, removeUpload, type MultipartUploadRow, type RemovedUpload } from '../db/repositories/multipart.js';
import type { AccountRow, BucketIdentity } from '../db/schema.js';
import { bucketRules, checkDeclaredType } from './bucket-rules.js';
import { nowIso } from './clock.js';
import { errors } from './errors.js';
import { lockForNewVersion, type RequestedLock } from './object-lock.js';
import { MultipartRefused, noSuchUpload } from './multipart-refusals.js';
import { dropBlobs } from './object-bytes.js';
import { readingTurn } from './part-turns.js';
import type { StoragePorts } from './ports.js';
import { capOf } from './quota.js';
import { UploadReservation } from './upload-reservations.js';
import { timeOrderedUuid } from './storage-keys.js';

export const MAX_PART_NUMBER = 10_000;

/** Begins an upload; its id is random and unguessable (it names the upload in every later request). */
export async function beginUpload(
  ports: Pick<StoragePorts, 'db' | 'caches' | 'clock'>,
  input: {
    owner: AccountRow;
    bucket: BucketIdentity;
    filename: string;
    contentType: string;
    metadata?: Record<string, string> | undefined;
    /** Its tags (canonical JSON, object-tags.ts), for the object it completes; absent: none. */
    tags?: string | undefined;
    /** The object lock it asked for (x-amz-object-lock-*), for the object it completes; absent: the bucket's default then. */
    lock?: RequestedLock | undefined;
    /** The flexible checksum its parts and object keep (checksum-algorithms.ts), and how the object's is made. */
    checksum?: { algorithm: string; type: 'COMPOSITE' | 'FULL_OBJECT' } | undefined;
  },
): Promise<string> {
  // A declared type the bucket does not take is refused now; the rest of its rules when the parts are complete.
  const rules = await bucketRules(ports, input.bucket.id);
  checkDeclaredType(rules, input.contentType);
  // A lock the bucket cannot give is refused now, as S3 does; the object's lock is decided when it is completed.
  lockForNewVersion(rules.lock, input.lock, ports.clock.now());
  // Hex, not base64url: an id starting with '-' reads as an option to command-line tools (aws s3api … --upload-id -x…).
  const id = randomBytes(24).toString('hex');
  const metadata = input.metadata && Object.keys(input.metadata).length > 0 ? JSON.stringify(input.metadata) : null;
  await insertUpload(ports.db, {
    id,
    owner_id: input.owner.id,
    bucket_id: input.bucket.id,
    filename: input.filename,
    content_type: input.contentType,
    metadata,
    tags: input.tags ?? null,
    lock: input.lock === undefined ? null : JSON.stringify(input.lock),
    created_at: nowIso(ports.clock),
    checksum_algorithm: input.checksum?.algorithm ?? null,
    checksum_type: input.checksum?.type ?? null,
  });
  return id;
}

/** The upload, or NoSuchUpload (also for another bucket's upload). */
export async function requireUpload(ports: Pick<StoragePorts, 'db'>, bucket: BucketIdentity, uploadId: string): Promise<MultipartUploadRow> {
  const upload = await findUpload(ports.db, uploadId, bucket.id);
  if (!upload) throw noSuchUpload();
  return upload;
}

export function parsePartNumber(text: string | undefined): number {
  const number = text !== undefined && /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(number >= 1 && number <= MAX_PART_NUMBER)) {
    throw new MultipartRefused('invalid-part-number', `Part number must be an integer between 1 and ${MAX_PART_NUMBER}, inclusive`);
  }
  return number;
}

export interface PartInput {
  owner: AccountRow;
  bucket: BucketIdentity;
  uploadId: string;
  /** The upload's row when the caller has just read it (requireUpload), so it is not read again. */
  upload?: MultipartUploadRow;
  partNumber: number;
  body: Readable;
  declaredSize: number;
  rawRequestBody: boolean;
  /** The hex MD5 of the body, once read: the part's ETag. */
  md5Hex: () => string;
  /** The bytes the part's connection has brought so far, so that a stalled part lets the next one read (part-turns.ts). */
  received?: () => number;
  /** The part's checksum (base64) in its upload's checksum algorithm, once the body is read; absent when the upload keeps none. */
  checksum?: () => Promise<string>;
}

/**
 * Stores a part, replacing any earlier one of that number. Its bytes are
 * held against the cap while they stream (as any upload's) and kept counted
 * once recorded; a part that would take the owner past the cap is refused
 * with the cap's error and nothing is kept.
 */
export async function storePart(ports: StoragePorts, input: PartInput): Promise<{ md5: string; checksum: string | null }> {
  const { owner, bucket } = input;
  const maxFileBytes = ports.limits.maxFileBytes;
  if (input.declaredSize > maxFileBytes) throw errors.fileTooLarge(maxFileBytes);
  if (input.upload?.id !== input.uploadId || input.upload.bucket_id !== bucket.id) await requireUpload(ports, bucket, input.uploadId);
  const quota = capOf(ports.limits, owner);
  const earlier = (await findPart(ports.db, input.uploadId, input.partNumber))?.size ?? 0;
  const reservation = await UploadReservation.take(ports, owner.id, Math.max(0, input.declaredSize - earlier), {
    quota,
    maxUploads: ports.limits.maxUploadsPerUser,
  });
  const storageKey = `${bucket.storage_name}/${timeOrderedUuid()}`;
  let stored = false;
  try {
    let size: number;
    // This upload's parts are read one at a time (part-turns.ts).
    const turn = await readingTurn(input.uploadId, input.body, input.received);
    try {
      // No content hash: a part's ETag is its MD5, and completing reads no part's hash.
      const options = { maxBytes: maxFileBytes, releaseChunks: input.rawRequestBody, contentHash: false };
      ({ size } = await ports.blobs.put(storageKey, input.body, options));
      stored = true;
    } catch (error) {
      throw error instanceof BlobTooLargeError ? errors.fileTooLarge(maxFileBytes) : error;
    } finally {
      turn.release();
    }
    const md5 = input.md5Hex();
    const checksum = input.checksum ? await input.checksum() : null;
    const now = new Date().toISOString();
    const part = { upload_id: input.uploadId, part_number: input.partNumber, storage_key: storageKey, size, md5, created_at: now, checksum };
    const recorded = await ports.writes.recordPart({ userId: owner.id, quota, reservationId: reservation.id, now, part });
    if ('refusal' in recorded) throw recorded.refusal === 'over-cap' ? quota.exceeded() : noSuchUpload();
    stored = false;
    if (recorded.replaced) await dropBlobs(ports, [recorded.replaced]);
    return { md5, checksum };
  } finally {
    if (stored) await ports.blobs.delete([storageKey]).catch(() => {});
    await reservation.release();
  }
}

/** Ends an upload without an object: its parts and their bytes go. `operation`: the door's name for the request, for whoever hears of it. */
export async function abortUpload(ports: StoragePorts, bucket: BucketIdentity, uploadId: string, operation?: string): Promise<void> {
  await requireUpload(ports, bucket, uploadId);
  const removed = await removeUpload(ports.db, uploadId);
  if (removed === null) throw noSuchUpload();
  await announceEnded(ports, uploadId, removed, 'aborted', operation ?? null);
  await dropBlobs(ports, removed.partKeys);
}

/** An upload ended without an object, announced (object-events.ts). */
export function announceEnded(
  ports: Pick<StoragePorts, 'events'>,
  uploadId: string,
  { upload }: RemovedUpload,
  outcome: 'aborted' | 'expired',
  operation: string | null,
): Promise<void> | undefined {
  return ports.events.announce({
    type: 'upload-ended',
    kind: 'multipart',
    uploadId,
    ownerId: upload.owner_id,
    bucketId: upload.bucket_id,
    filename: upload.filename,
    outcome,
    operation,
  });
}
