/**
 * Storing a file. A large file's bytes go to a new, unique blob key first;
 * then one transaction (db/object-writes/) records the row, moves the
 * bucket's counts and the owner's usage (asking the cap, quota.ts, under the
 * owner's lock in that transaction) and retires the replaced version. A small
 * file's bytes are written in that same transaction. A crash anywhere leaves
 * the old version or the new one, and at worst an unreferenced blob that
 * garbage collection removes later. Once committed, the new version is
 * announced (object-events.ts) before the replaced one's bytes go.
 */
import { outboxFor, writtenChange } from './webhook-events.js';
import { isFolderMarker, type UploadResult } from '@pail/shared';
import type { Readable } from 'node:stream';
import { BlobTooLargeError } from '../blob/blob-store.js';
import { contentHashOf, createContentHasher } from '../blob/content-hash.js';
import { peekBody, takeSmallBody } from '../blob/small-body.js';
import { conditionRefusal, WriteRefused, type CommitInput, type Committed, type Refusal, type WriteCondition } from '../db/object-writes/object-writes.js';
import { findObjectRow } from '../db/repositories/objects.js';
import type { AccountRow } from '../db/schema.js';
import type { BucketIdentity } from './buckets.js';
import { bucketRules, checkDeclaredType, checkedType, TYPE_SNIFF_BYTES } from './bucket-rules.js';
import { errors } from './errors.js';
import { noSuchUpload } from './multipart-refusals.js';
import { dropBlobs, retireVersions } from './object-bytes.js';
import { newVersionLock, type RequestedLock } from './object-lock.js';
import { encodeParts, type ObjectPart } from './object-parts.js';
import type { StoragePorts } from './ports.js';
import { capOf, type Quota } from './quota.js';
import { timeOrderedUuid } from './storage-keys.js';
import { UploadReservation } from './upload-reservations.js';
import { newVersionId } from './version-ids.js';

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
  /** Its tags, canonical JSON (object-tags.ts), written in the commit with the version; absent: none. */
  tags?: string;
  /** The object lock its request asked for (S3's x-amz-object-lock-* headers); absent: the bucket's default retention, if any (object-lock.ts). */
  lock?: RequestedLock;
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
  /** The parts of the multipart upload it completes, kept with the file (object-parts.ts). */
  parts?: ObjectPart[];
  /**
   * Reads what follows the body in its request (a form's other parts) once
   * the body is read; a rejection (a second file) refuses the upload before
   * anything is committed.
   */
  beforeCommit?: () => Promise<void>;
  /** The door's name for the request (PutObject, uploadRaw, …), for whoever hears of the new file (object-events.ts). */
  operation?: string;
  /** A copy of an older version made current (versions.ts, whichever door asked): announced as object.restored, not object.created. */
  restored?: boolean;
  /**
   * The door's checks of the bytes (the S3 API's signed payload hash,
   * Content-MD5 and flexible checksum): run on a small body once read whole,
   * put around a longer one's stream. A failed check refuses the upload
   * before anything is committed.
   */
  verify?: BodyVerifier;
}

/** A door's checks of an upload's bytes (UploadInput.verify). */
export interface BodyVerifier {
  /** Checks a body read whole; throws (or rejects with) the door's error when it fails. */
  whole(bytes: Buffer): Promise<void> | void;
  /** The stream checked as it passes: it fails at its end when a check does. */
  around(stream: Readable): Readable;
}

/** Refuses a conditional write that cannot succeed as things stand, before any byte is read; the commit checks again. */
export async function checkWriteCondition(ports: Pick<StoragePorts, 'db'>, bucketId: number, filename: string, condition: WriteCondition): Promise<void> {
  const refusal = conditionRefusal(condition, await findObjectRow(ports.db, bucketId, filename));
  if (refusal) throw refusalError(refusal);
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
  // The body may fail while the bucket's rules are looked up, before anything reads it: the failure stays on the stream for the reader.
  input.body.on('error', ignoreUntilRead);
  const rules = await bucketRules(ports, bucket.id);
  const maxFileBytes = Math.min(ports.limits.maxFileBytes, input.maxBytes ?? Infinity, rules.maxFileBytes ?? Infinity);
  checkDeclaredType(rules, input.contentType);
  const lock = await newVersionLock(ports, rules, bucket.id, filename, input.lock);
  const quota = capOf(ports.limits, owner);
  const marker = isFolderMarker(filename);
  if (marker && input.declaredSize !== undefined && input.declaredSize > 0) throw errors.folderMarkerNotEmpty();
  if (input.declaredSize !== undefined && input.declaredSize > maxFileBytes) throw errors.fileTooLarge(maxFileBytes);

  const storageKey = `${bucket.storage_name}/${timeOrderedUuid()}`;
  let reservation: UploadReservation | null = null;
  try {
    // A body that may be small is read that far first; a longer one carries on to the store.
    const body =
      input.declaredSize !== undefined && input.declaredSize > inlineMaxBytes
        ? rules.allowedTypes === null
          ? { stream: input.body }
          : await peekBody(input.body, TYPE_SNIFF_BYTES)
        : await takeSmallBody(input.body, marker ? 1 : Math.min(inlineMaxBytes, maxFileBytes));
    if (input.verify) {
      if ('small' in body) {
        // (Awaited only when a check is asynchronous: an await costs a small upload a turn of the event loop.)
        const checking = input.verify.whole(body.small);
        if (checking) await checking;
      } else body.stream = input.verify.around(body.stream);
    }
    if (marker && !('small' in body && body.small.length === 0)) throw errors.folderMarkerNotEmpty();
    // The bucket's types, checked against the first bytes before any is kept; a generic declared type becomes the detected one.
    const contentType = marker ? input.contentType : await checkedType(rules, input.contentType, headOf(body));
    let stored: { size: number; contentHash: string; inlineBytes?: Buffer };
    if ('small' in body) {
      if (body.small.length > maxFileBytes) throw errors.fileTooLarge(maxFileBytes);
      // A door that names the ETag (the S3 API's MD5) needs no content hash of its own: it would be replaced below.
      stored = { size: body.small.length, contentHash: input.etag ? input.etag() : await contentHashOf(body.small), inlineBytes: body.small };
    } else {
      // Bytes bound for the blob store are held against the cap from the start (upload-reservations.ts),
      // all of them when the length is declared, else as they stream; the replaced version's bytes count as freed
      // unless its bucket keeps it (versioning; rules.versioning as cached, the commit asks again).
      const replacedSize = rules.versioning !== 'unversioned' ? 0 : ((await findObjectRow(ports.db, bucket.id, filename))?.size ?? 0);
      const declared = input.declaredSize;
      const needed = declared === undefined ? 0 : Math.max(0, declared - replacedSize - (input.heldBytes ?? 0));
      reservation = await UploadReservation.take(ports, owner.id, needed, { quota, maxUploads: ports.limits.maxUploadsPerUser });
      const stream = declared === undefined ? reservation.meter(body.stream, replacedSize) : body.stream;
      try {
        stored = await ports.blobs.put(storageKey, stream, {
          maxBytes: maxFileBytes,
          contentType,
          releaseChunks: input.rawRequestBody === true,
        });
      } catch (error) {
        throw error instanceof BlobTooLargeError ? errors.fileTooLarge(maxFileBytes) : error;
      }
    }
    // Small files too: the commit asks the cap with everything the owner holds.
    const change: CommitInput = {
      ownerId: owner.id,
      quota,
      versionId: newVersionId(),
      ...(reservation ? { reservationId: reservation.id } : {}),
      bucketId: bucket.id,
      filename,
      storageKey,
      contentType,
      ...stored,
      ...(input.etag ? { contentHash: input.etag() } : {}),
      ...(input.metadata && Object.keys(input.metadata).length > 0 ? { metadata: JSON.stringify(input.metadata) } : {}),
      ...(input.tags !== undefined ? { tags: input.tags } : {}),
      ...(lock ? { lock } : {}),
      ...checksumsOf(input),
      ...(input.condition ? { condition: input.condition } : {}),
      ...(input.endsUpload !== undefined ? { endsUpload: input.endsUpload } : {}),
      ...(input.parts !== undefined ? { parts: encodeParts(input.parts) } : {}),
    };
    return await afterCommit(ports, bucket, change, await commit(ports, quota, input.beforeCommit, change, input), input.operation);
  } finally {
    await reservation?.release();
  }
}

/**
 * Stores the concatenation of blobs already held against the cap (a
 * completing multipart upload's parts) as a file, by the blob store's
 * concat(), which copies without hashing, and commits it as uploadObject
 * does: the same limits, reservation and commit, with the ETag given.
 */
export async function uploadConcatenated(
  ports: StoragePorts,
  input: Pick<
    UploadInput,
    'owner' | 'bucket' | 'filename' | 'contentType' | 'metadata' | 'tags' | 'lock' | 'checksums' | 'condition' | 'endsUpload' | 'parts' | 'operation'
  > & {
    /** The blobs, in order, and their total size (they are all held against the cap: heldBytes). */
    sources: string[];
    size: number;
    etag: string;
  },
): Promise<UploadResult> {
  const { owner, bucket, filename } = input;
  const rules = await bucketRules(ports, bucket.id);
  const maxFileBytes = Math.min(ports.limits.maxFileBytes, rules.maxFileBytes ?? Infinity);
  checkDeclaredType(rules, input.contentType);
  if (isFolderMarker(filename) && input.size > 0) throw errors.folderMarkerNotEmpty();
  if (input.size > maxFileBytes) throw errors.fileTooLarge(maxFileBytes);
  // The bucket's types, checked against the first bytes, as uploadObject checks them.
  const contentType =
    rules.allowedTypes === null ? input.contentType : await checkedType(rules, input.contentType, await firstBytesOf(ports, input.sources, TYPE_SNIFF_BYTES));
  const storageKey = `${bucket.storage_name}/${timeOrderedUuid()}`;
  // uploadObject's reservation with heldBytes = size: no bytes beyond the sources', but it counts as an upload in flight.
  const reservation = await UploadReservation.take(ports, owner.id, 0, { quota: capOf(ports.limits, owner), maxUploads: ports.limits.maxUploadsPerUser });
  try {
    const { size } = await ports.blobs.concat(storageKey, input.sources);
    return await commitStoredBlob(ports, { ...input, contentType, storageKey, size, contentHash: input.etag, reservationId: reservation.id });
  } finally {
    await reservation.release();
  }
}

/**
 * Commits bytes already stored under `storageKey` (a completed multipart or
 * resumable upload's) as the file's current version, as uploadObject commits:
 * the cap, the counts and the condition in one transaction, which also ends
 * the upload the file completes; the replaced version and the ended upload's
 * parts are then retired. Without a content hash given, it is read from the
 * stored bytes (the Pail API's ETag).
 */
export async function commitStoredBlob(
  ports: StoragePorts,
  input: Pick<
    UploadInput,
    'owner' | 'bucket' | 'filename' | 'contentType' | 'metadata' | 'tags' | 'lock' | 'checksums' | 'condition' | 'endsUpload' | 'parts' | 'operation'
  > & {
    storageKey: string;
    size: number;
    contentHash?: string;
    /** The resumable upload this file completes: it ends in the commit's transaction. */
    endsResumable?: string;
    /** The reservation that held this file while it was made: it ends in the commit's transaction. */
    reservationId?: string;
  },
): Promise<UploadResult> {
  const { owner, bucket, filename, storageKey } = input;
  const quota = capOf(ports.limits, owner);
  const contentHash = input.contentHash ?? (await storedContentHash(ports, storageKey));
  const lock = await newVersionLock(ports, await bucketRules(ports, bucket.id), bucket.id, filename, input.lock);
  const change: CommitInput = {
    ownerId: owner.id,
    quota,
    versionId: newVersionId(),
    ...(input.reservationId !== undefined ? { reservationId: input.reservationId } : {}),
    bucketId: bucket.id,
    filename,
    storageKey,
    contentType: input.contentType,
    size: input.size,
    contentHash,
    ...(input.metadata && Object.keys(input.metadata).length > 0 ? { metadata: JSON.stringify(input.metadata) } : {}),
    ...(input.tags !== undefined ? { tags: input.tags } : {}),
    ...(lock ? { lock } : {}),
    ...checksumsOf(input),
    ...(input.condition ? { condition: input.condition } : {}),
    ...(input.endsUpload !== undefined ? { endsUpload: input.endsUpload } : {}),
    ...(input.parts !== undefined ? { parts: encodeParts(input.parts) } : {}),
    ...(input.endsResumable !== undefined ? { endsResumable: input.endsResumable } : {}),
  };
  return afterCommit(ports, bucket, change, await commit(ports, quota, undefined, change, input), input.operation);
}

/**
 * After a commit: the new version is announced (and the upload it completed,
 * if any), then the replaced version's bytes and the ended upload's part
 * blobs are deleted.
 */
async function afterCommit(
  ports: StoragePorts,
  bucket: BucketIdentity,
  change: CommitInput,
  committed: Committed,
  door: string | undefined,
): Promise<UploadResult> {
  const { ownerId, filename } = change;
  const operation = door ?? null;
  const { replaced } = committed;
  await ports.events.announce({
    type: 'object-created',
    ownerId,
    bucketId: bucket.id,
    bucketStorageName: bucket.storage_name,
    filename,
    storageKey: change.storageKey,
    size: change.size,
    etag: change.contentHash,
    contentType: change.contentType,
    replaced: replaced?.storage_key ?? null,
    cause: 'stored',
    operation,
  });
  const ended =
    change.endsUpload !== undefined
      ? { kind: 'multipart' as const, uploadId: change.endsUpload }
      : change.endsResumable !== undefined
        ? { kind: 'resumable' as const, uploadId: change.endsResumable }
        : null;
  if (ended) {
    await ports.events.announce({ type: 'upload-ended', ...ended, ownerId, bucketId: bucket.id, filename, outcome: 'completed', operation });
  }
  if (replaced) await retireVersions(ports, [replaced]);
  await dropBlobs(ports, committed.endedParts);
  // S3 names the new version only where versions are kept (a suspended bucket's write is the null version, unnamed).
  const versioned = committed.versioning === 'enabled' && committed.versionId !== null ? { version_id: committed.versionId } : {};
  return { filename, size: change.size, updated: committed.overwrote, ...versioned };
}

/** The content hash of a stored blob, read back (content-hash.ts). */
async function storedContentHash(ports: Pick<StoragePorts, 'blobs'>, storageKey: string): Promise<string> {
  const hasher = await createContentHasher();
  for await (const chunk of (await ports.blobs.get(storageKey)) as AsyncIterable<Buffer>) hasher.update(chunk);
  return hasher.digest();
}

/** Up to `bytes` first bytes of the blobs one after another. */
async function firstBytesOf(ports: Pick<StoragePorts, 'blobs'>, sources: string[], bytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for (const source of sources) {
    const stream = await ports.blobs.get(source);
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      length += chunk.length;
      if (length >= bytes) break;
    }
    stream.destroy();
    if (length >= bytes) break;
  }
  return Buffer.concat(chunks).subarray(0, bytes);
}

/** The commit, after `before` (UploadInput.beforeCommit); on a refusal the stored bytes are removed and the refusal becomes the answer. */
async function commit(
  ports: StoragePorts,
  quota: Quota,
  before: (() => Promise<void>) | undefined,
  input: CommitInput,
  door: Pick<UploadInput, 'operation' | 'restored'>,
): Promise<Committed> {
  try {
    await before?.();
    // Issue 39: the webhook events this commit writes in its own transaction (none, and no wait, without a webhook).
    const events = outboxFor(ports, input.bucketId, [writtenChange(input.filename, input.size, input.contentHash, door, `user:${input.ownerId}`)]);
    const outbox = events instanceof Promise ? await events : events;
    if (outbox) input.outbox = outbox;
    return await ports.writes.commitUpload(input);
  } catch (error) {
    if (!input.inlineBytes) await ports.blobs.delete([input.storageKey]).catch(() => {});
    if (error instanceof WriteRefused) throw refusalError(error.refusal, quota);
    throw error;
  }
}

/** The answer to a refused write; the quota names an over-cap refusal, which a condition check never gives. */
function refusalError(refusal: Refusal, quota?: Quota): Error {
  if (refusal === 'over-cap') return quota?.exceeded() ?? new Error('an over-cap refusal without its quota');
  if (refusal === 'precondition-failed') return new WriteConditionFailed();
  if (refusal === 'no-upload') return noSuchUpload();
  if (refusal === 'no-resumable') return errors.uploadNotFound();
  // If-Match on a name that holds no file: S3 answers 404 NoSuchKey.
  return refusal === 'no-file' ? errors.fileNotFound() : errors.bucketNotFound();
}

function checksumsOf(input: Pick<UploadInput, 'checksums'>): { checksums?: string } {
  const checksums = input.checksums?.();
  return checksums && Object.keys(checksums).length > 0 ? { checksums: JSON.stringify(checksums) } : {};
}

function ignoreUntilRead(): void {}

/** The first bytes read of a body: all of a small one, or those a peek or the small-body read took. */
function headOf(body: { small: Buffer } | { stream: Readable; head?: Buffer | (() => Buffer) }): Buffer {
  if ('small' in body) return body.small;
  return typeof body.head === 'function' ? body.head() : (body.head ?? Buffer.alloc(0));
}
