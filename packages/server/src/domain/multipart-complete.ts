/**
 * Completing a multipart upload: the listed parts' bytes become one object
 * through the same rules as any upload (its cap check, its commit): copied
 * by the blob store from the part blobs (uploadConcatenated), or, when they
 * must be read (a FULL_OBJECT checksum, an object small enough to be kept
 * inline), streamed from them in order through uploadObject, never held in
 * memory.
 * The parts count against the cap until the commit, which ends the upload in
 * its own transaction, so the object's reservation is given their share
 * (heldBytes) rather than counting them twice, and no crash can leave both
 * the object and its parts counted.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { UploadResult } from '@pail/shared';
import { BlobNotFoundError } from '../blob/blob-store.js';
import type { WriteCondition } from '../db/object-writes/object-writes.js';
import { findUpload, listParts, type MultipartPartRow, type MultipartUploadRow } from '../db/repositories/multipart.js';
import { findCompletedBy } from '../db/repositories/objects.js';
import { CHECKSUM_ALGORITHMS, checksumPassing, compositeChecksum } from './checksum-algorithms.js';
import type { AccountRow, BucketIdentity } from '../db/schema.js';
import { MultipartRefused, noSuchUpload } from './multipart-refusals.js';
import { MAX_PART_NUMBER, requireUpload } from './multipart.js';
import type { RequestedLock } from './object-lock.js';
import type { StoragePorts } from './ports.js';
import { uploadConcatenated, uploadObject } from './uploads.js';

/** S3's smallest part, but for the last. */
export const MIN_PART_BYTES = 5 * 1024 * 1024;

export interface ListedPart {
  partNumber: number;
  /** As the client sent it: quotes are optional. */
  etag: string;
  /** The part's checksums as listed (algorithm to base64); the upload's own must be there when it keeps one. */
  checksums?: Record<string, string>;
}

export interface CompleteInput {
  owner: AccountRow;
  bucket: BucketIdentity;
  uploadId: string;
  /** The key the request names: a repeated completion is found by it (earlierCompletion). */
  filename: string;
  parts: ListedPart[];
  /** S3's conditional write (If-None-Match: *, If-Match), checked in the commit; refused, the upload stays to be retried or aborted. */
  condition?: WriteCondition | undefined;
  /** The whole object's checksums the client states (algorithm to base64): the one the upload keeps must match. */
  sentChecksums?: Record<string, string>;
  /** The door's name for the request, for whoever hears of the new file (UploadInput.operation). */
  operation?: string;
}

export interface Completed extends UploadResult {
  etag: string;
  /** The object's checksum in the upload's algorithm (a COMPOSITE one ends in `-<parts>`); absent when the upload keeps none. */
  checksum?: { algorithm: string; value: string };
  /** The object's tags (canonical JSON) and when it was made: what a lifecycle rule's expiry is counted from. */
  tags: string | null;
  lastModified: string | number;
}

/**
 * Completes the upload, or answers as its completion did when it has been
 * completed already (S3 does so for a repeated request, which is what an
 * SDK's retry is): nothing is written, counted or announced again.
 */
export async function completeUpload(ports: StoragePorts, input: CompleteInput): Promise<Completed> {
  try {
    return await completeLive(ports, input);
  } catch (error) {
    // Also when a request racing this one completed it first.
    const earlier = error instanceof MultipartRefused && error.refusal === 'no-upload' ? await earlierCompletion(ports, input) : undefined;
    if (earlier) return earlier;
    throw error;
  }
}

/**
 * Before the request's body is read: undefined when the upload is there to
 * be completed, its completion's answer when it was completed already, and
 * NoSuchUpload when neither.
 */
export async function requireCompletable(
  ports: Pick<StoragePorts, 'db'>,
  input: Pick<CompleteInput, 'bucket' | 'uploadId' | 'filename'>,
): Promise<Completed | undefined> {
  if (await findUpload(ports.db, input.uploadId, input.bucket.id)) return undefined;
  const earlier = await earlierCompletion(ports, input);
  if (!earlier) throw noSuchUpload();
  return earlier;
}

/**
 * The answer an earlier completion of the upload gave, found on the version
 * it made (which carries its upload id) for as long as that version is the
 * key's current one: replaced or deleted, the upload is gone, as S3 has it.
 */
async function earlierCompletion(
  ports: Pick<StoragePorts, 'db'>,
  input: Pick<CompleteInput, 'bucket' | 'uploadId' | 'filename'>,
): Promise<Completed | undefined> {
  const made = await findCompletedBy(ports.db, input.bucket.id, input.filename, input.uploadId);
  if (!made) return undefined;
  const [stored] = Object.entries(made.checksums === null ? {} : (JSON.parse(made.checksums) as Record<string, string>));
  return {
    filename: input.filename,
    size: made.size,
    updated: false,
    etag: made.etag,
    tags: made.tags,
    lastModified: made.updated_at,
    ...(stored ? { checksum: { algorithm: stored[0], value: stored[1] } } : {}),
  };
}

async function completeLive(ports: StoragePorts, input: CompleteInput): Promise<Completed> {
  const upload = await requireUpload(ports, input.bucket, input.uploadId);
  const stored = await listParts(ports.db, upload.id, 0, MAX_PART_NUMBER);
  let chosen: MultipartPartRow[];
  try {
    chosen = chooseParts(stored, input.parts, upload.checksum_algorithm);
  } catch (error) {
    // The upload ended (completed or aborted) between reading it and its parts: that, not the parts, is the answer.
    if (error instanceof MultipartRefused) await requireUpload(ports, input.bucket, input.uploadId);
    throw error;
  }
  const size = chosen.reduce((total, part) => total + part.size, 0);
  const etag = multipartEtag(chosen);
  const checksum = await objectChecksum(ports, upload, chosen, input.sentChecksums ?? {});
  const common = {
    owner: input.owner,
    bucket: input.bucket,
    filename: upload.filename,
    contentType: upload.content_type,
    ...(upload.metadata !== null ? { metadata: JSON.parse(upload.metadata) as Record<string, string> } : {}),
    ...(upload.tags !== null ? { tags: upload.tags } : {}),
    ...(upload.lock !== null ? { lock: JSON.parse(upload.lock) as RequestedLock } : {}),
    ...(checksum ? { checksums: () => ({ [checksum.algorithm]: checksum.value() }) } : {}),
    ...(input.condition ? { condition: input.condition } : {}),
    // The upload and every part it kept (listed or not) end with the object's commit, in its transaction.
    endsUpload: upload.id,
    // Kept with the object, for reads by part number and GetObjectAttributes (object-parts.ts).
    parts: chosen.map((part) => ({ number: part.part_number, size: part.size, ...(part.checksum !== null ? { checksum: part.checksum } : {}) })),
    operation: input.operation,
  };
  // The part blobs are copied into the object's without a pass over the bytes in Pail, unless a
  // FULL_OBJECT checksum needs one, or the object is small enough to be kept inline (uploadObject).
  const written =
    checksum?.stream === undefined && size > ports.limits.inlineMaxBytes
      ? uploadConcatenated(ports, { ...common, sources: chosen.map((part) => part.storage_key), size, etag })
      : uploadObject(ports, {
          ...common,
          body: checksum?.stream ?? concatenated(ports, chosen),
          declaredSize: size,
          etag: () => etag,
          heldBytes: size,
        });
  // A part's blob gone while it was read: the upload was aborted or expired meanwhile.
  const result = await written.catch((error: unknown) => {
    throw error instanceof BlobNotFoundError ? noSuchUpload() : error;
  });
  return {
    ...result,
    etag,
    tags: upload.tags,
    lastModified: ports.clock.now(),
    ...(checksum ? { checksum: { algorithm: checksum.algorithm, value: checksum.value() } } : {}),
  };
}

/**
 * The object's checksum when the upload keeps one: a COMPOSITE one from the
 * parts' checksums, at once; a FULL_OBJECT one taken of the bytes as they
 * stream into the object (then its stream is the object's body; a stated
 * value that differs fails it, so nothing is kept).
 */
async function objectChecksum(
  ports: Pick<StoragePorts, 'blobs'>,
  upload: MultipartUploadRow,
  parts: MultipartPartRow[],
  sent: Record<string, string>,
): Promise<{ algorithm: string; stream?: Readable; value: () => string } | undefined> {
  const algorithm = upload.checksum_algorithm;
  if (algorithm === null) return undefined;
  const badDigest = () =>
    new MultipartRefused('bad-digest', `The ${CHECKSUM_ALGORITHMS[algorithm]!.label} you specified did not match the calculated checksum.`);
  const stated = sent[algorithm];
  if (upload.checksum_type === 'FULL_OBJECT') {
    const passing = checksumPassing(concatenated(ports, parts), algorithm, stated === undefined ? undefined : { value: stated, mismatch: badDigest });
    return { algorithm, ...passing };
  }
  const composite = await compositeChecksum(
    algorithm,
    parts.map((part) => part.checksum ?? ''),
  );
  // A stated COMPOSITE value may come with or without its `-<parts>`.
  if (stated !== undefined && stated !== composite && `${stated}-${parts.length}` !== composite) throw badDigest();
  return { algorithm, value: () => composite };
}

/** The stored parts the client listed, checked as S3 checks them: ascending numbers, matching ETags, all but the last at least 5 MiB. */
function chooseParts(stored: MultipartPartRow[], listed: ListedPart[], algorithm: string | null): MultipartPartRow[] {
  const byNumber = new Map(stored.map((part) => [part.part_number, part]));
  const chosen: MultipartPartRow[] = [];
  for (const [index, entry] of listed.entries()) {
    if (index > 0 && entry.partNumber <= listed[index - 1]!.partNumber) {
      throw new MultipartRefused('invalid-part-order', 'The list of parts was not in ascending order. Parts must be ordered by part number.');
    }
    const part = byNumber.get(entry.partNumber);
    if (!part || part.md5 !== entry.etag.replace(/^"|"$/g, '').toLowerCase()) {
      throw new MultipartRefused(
        'invalid-part',
        "One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.",
      );
    }
    if (algorithm !== null) checkListedChecksum(entry, part, algorithm);
    chosen.push(part);
  }
  for (const part of chosen.slice(0, -1)) {
    if (part.size < MIN_PART_BYTES) throw new MultipartRefused('too-small', 'Your proposed upload is smaller than the minimum allowed size');
  }
  return chosen;
}

/** A part of an upload that keeps checksums is listed with its checksum, and the one it was stored with. */
function checkListedChecksum(entry: ListedPart, part: MultipartPartRow, algorithm: string): void {
  const listed = entry.checksums?.[algorithm];
  if (listed === undefined) {
    throw new MultipartRefused(
      'missing-part-checksum',
      `The upload was created using a ${algorithm} checksum. The complete request must include the checksum for each part. It was missing for part ${entry.partNumber} in the request.`,
    );
  }
  if (listed !== part.checksum) {
    throw new MultipartRefused(
      'invalid-part',
      "One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.",
    );
  }
}

/** S3's multipart ETag: the MD5 of the parts' binary MD5s, then `-<parts>`. */
export function multipartEtag(parts: Pick<MultipartPartRow, 'md5'>[]): string {
  const md5 = createHash('md5');
  for (const part of parts) md5.update(Buffer.from(part.md5, 'hex'));
  return `${md5.digest('hex')}-${parts.length}`;
}

/** The parts' bytes one after another, each blob opened only when the one before has ended. */
function concatenated(ports: Pick<StoragePorts, 'blobs'>, parts: MultipartPartRow[]): Readable {
  return Readable.from(
    (async function* () {
      for (const part of parts) yield* (await ports.blobs.get(part.storage_key)) as AsyncIterable<Buffer>;
    })(),
    { objectMode: false },
  );
}
