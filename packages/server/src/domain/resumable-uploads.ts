/**
 * Resumable uploads (decisions.md, "Resumable uploads"; the tus protocol is
 * the tus door's, tus/): an upload is created with its length,
 * which is held against the owner's cap from then on; its bytes arrive in any
 * number of requests, one at a time (resumable-writers.ts), each written to
 * the blob store's staging area at its offset and flushed before its new
 * offset is acknowledged; when the last byte lands the
 * file is committed as any upload is, and the commit ends the upload in the
 * same transaction, so its bytes count once. Uploads idle for 24 hours expire.
 * The bucket's limits are checked at creation (length, declared type) and
 * against the first bytes (their type).
 */
import { randomBytes } from 'node:crypto';
import { pipeline, type Readable } from 'node:stream';
import type { UploadResult } from '@pail/shared';
import { peekBody } from '../blob/small-body.js';
import {
  advanceResumableUpload,
  findResumableUpload,
  insertResumableUpload,
  removeResumableUpload,
  resumableUploadsIdleSince,
  type ResumableUploadRow,
} from '../db/repositories/resumable-uploads.js';
import { findOwnLiveBucket } from '../db/repositories/buckets.js';
import type { AccountRow, BucketIdentity } from '../db/schema.js';
import { bucketRules, checkDeclaredType, checkedType, TYPE_SNIFF_BYTES } from './bucket-rules.js';
import { AppError, errors } from './errors.js';
import { isFolderMarker } from '@pail/shared';
import type { StoragePorts } from './ports.js';
import { ResumableHashes } from './resumable-hashes.js';
import { timeOrderedUuid } from './storage-keys.js';
import { commitStoredBlob } from './uploads.js';
import { capOf } from './quota.js';

/** This process's running content hashes of the uploads whose bytes it receives. */
const hashes = new ResumableHashes();

/** An upload that received nothing for this long is removed (decisions.md). */
export const RESUMABLE_IDLE_SECONDS = 24 * 3600;

export interface NewResumableUpload {
  owner: AccountRow;
  bucket: BucketIdentity;
  filename: string;
  contentType: string;
  length: number;
  /** The client's Upload-Metadata, kept to be shown back. */
  metadata?: Record<string, string | null>;
}

/** A resumable upload's id: random and unguessable, as it names the upload in every later request. */
export const newResumableId = (): string => randomBytes(16).toString('hex');

/**
 * Creates an upload under `id`: refused (413) over the server's or the
 * bucket's file limit, (415) for a declared type the bucket does not take,
 * and with the cap's error when its length does not fit beside everything
 * else the owner holds.
 */
export async function createResumableUpload(ports: StoragePorts, id: string, input: NewResumableUpload): Promise<ResumableUploadRow> {
  const rules = await bucketRules(ports, input.bucket.id);
  const maxFileBytes = Math.min(ports.limits.maxFileBytes, rules.maxFileBytes ?? Infinity);
  if (input.length > maxFileBytes) throw errors.fileTooLarge(maxFileBytes);
  if (isFolderMarker(input.filename) && input.length > 0) throw errors.folderMarkerNotEmpty();
  checkDeclaredType(rules, input.contentType);
  const quota = capOf(ports.limits, input.owner);
  const now = new Date().toISOString();
  const row: ResumableUploadRow = {
    id,
    owner_id: input.owner.id,
    bucket_id: input.bucket.id,
    filename: input.filename,
    content_type: input.contentType,
    length: input.length,
    received: 0,
    metadata: input.metadata ? JSON.stringify(input.metadata) : null,
    created_at: now,
    updated_at: now,
  };
  await ports.blobs.staging.create(id);
  if (!(await insertResumableUpload(ports.db, row, quota))) {
    await ports.blobs.staging.remove(id).catch(() => {});
    throw quota.exceeded();
  }
  return row;
}

/** The caller's upload into this bucket, with its offset as staged; NotFound for anyone else's, or one that ended. */
export async function findOwnResumableUpload(ports: StoragePorts, id: string, owner: AccountRow, bucket: BucketIdentity): Promise<ResumableUploadRow> {
  const row = await findResumableUpload(ports.db, id);
  if (!row || row.owner_id !== owner.id || row.bucket_id !== bucket.id) throw errors.uploadNotFound();
  return row;
}

/**
 * A request's bytes for upload `id` at `offset`, written while the request
 * holds the upload (resumable-writers.ts): a newer request on the same
 * upload ends this one (its body is destroyed: what arrived is kept and
 * recorded), and the offset is checked once nobody else writes.
 */
export async function receiveResumableBytes(
  ports: StoragePorts,
  id: string,
  caller: { owner: AccountRow; bucket: BucketIdentity },
  offset: number,
  body: Readable,
  options: {
    /** When the request arrived (ResumableWriters.arrival()). */
    arrival?: number;
    /** The body is the raw request: its chunks are this upload's alone (PutOptions.releaseChunks). */
    rawRequestBody?: boolean;
    /** The door's name for the request, for whoever hears of the file or of the upload's end (object-events.ts). */
    operation?: string;
  } = {},
): Promise<{ offset: number; finished: UploadResult | null }> {
  // A cut connection may fail the body while the upload is looked up: the append keeps what arrived (or nothing) then.
  body.on('error', () => {});
  // Only its owner's requests may end another's: the upload is checked before it is held, and read again once held.
  await findOwnResumableUpload(ports, id, caller.owner, caller.bucket);
  // Asked to stop: a body still arriving ends here (what arrived is kept); one read to its end is being committed, and finishes.
  const release = await ports.resumableWriters.hold(
    id,
    () => {
      if (!body.readableEnded) body.destroy();
    },
    options.arrival === undefined ? undefined : { arrival: options.arrival, writes: true },
  );
  try {
    const upload = await findOwnResumableUpload(ports, id, caller.owner, caller.bucket);
    // Cut, or ended by a newer request, while it waited: nothing to write (and no end event will come to wait for).
    if (body.readableAborted) return { offset: upload.received, finished: null };
    return await appendToResumableUpload(ports, upload, caller.owner, offset, body, options);
  } finally {
    await release();
  }
}

/**
 * Appends a request's bytes at `offset` (which must be the upload's) and
 * returns the new offset; when it reaches the length, the file is committed
 * and the result given too. The caller holds the upload
 * (resumable-writers.ts). The first bytes' type is checked against the
 * bucket's rules before any is kept: a refusal ends the upload.
 */
export async function appendToResumableUpload(
  ports: StoragePorts,
  upload: ResumableUploadRow,
  owner: AccountRow,
  offset: number,
  body: Readable,
  options: {
    /** The body is the raw request: its chunks are this upload's alone (PutOptions.releaseChunks). */
    rawRequestBody?: boolean;
    /** The door's name for the request (receiveResumableBytes). */
    operation?: string;
  } = {},
): Promise<{ offset: number; finished: UploadResult | null }> {
  const operation = options.operation ?? null;
  // A cut connection may fail the body while the rules are looked up: the append keeps what arrived (or nothing) then.
  body.on('error', () => {});
  if (offset !== upload.received) throw errors.offsetMismatch(`Upload-Offset ${offset} does not match the upload's offset ${upload.received}`);
  let contentType: string | undefined;
  let stream = body;
  if (offset === 0 && upload.length > 0) {
    const rules = await bucketRules(ports, upload.bucket_id);
    if (rules.allowedTypes !== null) {
      const peeked = await peekBody(body, Math.min(TYPE_SNIFF_BYTES, upload.length)).catch(() => null);
      // Cut (or ended by a newer request) before its first bytes could be checked: nothing is kept.
      if (peeked === null) return { offset, finished: null };
      stream = peeked.stream;
      try {
        contentType = await checkedType(rules, upload.content_type, peeked.head);
      } catch (error) {
        body.resume();
        await endHeldResumableUpload(ports, upload.id, { outcome: 'refused', operation });
        throw error;
      }
    }
  }
  const hashing = await hashes.tap(upload.id, offset, upload.length - offset);
  // Joined by pipeline, which owns every error on the way: a cut at any byte ends the stream the store reads, never the process.
  if (hashing.tap) stream = pipeline(stream, hashing.tap, () => {});
  let received: number;
  try {
    received = await ports.blobs.staging.append(upload.id, offset, stream, upload.length - offset, { releaseChunks: options.rawRequestBody === true });
  } catch (error) {
    hashes.forget(upload.id);
    throw error;
  }
  hashes.kept(upload.id, offset, received, hashing.hashed());
  if (received !== offset) {
    const moved = await advanceResumableUpload(ports.db, upload.id, {
      from: offset,
      to: received,
      at: new Date().toISOString(),
      ...(contentType ? { contentType } : {}),
    });
    if (!moved) {
      // Ended meanwhile (its writer's lease ran out): the bytes just staged belong to nothing, and go.
      if (!(await findResumableUpload(ports.db, upload.id))) await ports.blobs.staging.remove(upload.id).catch(() => {});
      throw errors.offsetMismatch('The upload moved on meanwhile (another request) or ended');
    }
  }
  if (received < upload.length) return { offset: received, finished: null };
  const finished = await finishResumableUpload(ports, { ...upload, received, ...(contentType ? { content_type: contentType } : {}) }, owner, operation);
  return { offset: received, finished };
}

/** Every byte arrived: the staged bytes become the file's blob, committed as any upload, the upload ending in the commit. */
async function finishResumableUpload(ports: StoragePorts, upload: ResumableUploadRow, owner: AccountRow, operation: string | null): Promise<UploadResult> {
  // Still live? (Deleted since the upload began: the upload ends with it.)
  const bucket = await findOwnLiveBucket(ports.db, owner.id, upload.bucket_id);
  if (!bucket) {
    await endHeldResumableUpload(ports, upload.id, { outcome: 'refused', operation });
    throw errors.bucketNotFound();
  }
  const storageKey = `${bucket.storage_name}/${timeOrderedUuid()}`;
  await ports.blobs.staging.commit(upload.id, storageKey, upload.length);
  return commitStoredBlob(ports, {
    owner,
    bucket,
    filename: upload.filename,
    contentType: upload.content_type,
    storageKey,
    size: upload.length,
    endsResumable: upload.id,
    ...withHash(hashes.finish(upload.id, upload.length)),
    ...(operation !== null ? { operation } : {}),
  });
}

const withHash = (contentHash: string | undefined) => (contentHash === undefined ? {} : { contentHash });

type EndPorts = Pick<StoragePorts, 'db' | 'blobs' | 'events' | 'durable' | 'resumableWriters'>;

/** Why an upload ends without a file, and the door's name for the request that ended it (null: the expiry sweep). */
export interface ResumableEnding {
  outcome: 'aborted' | 'refused' | 'expired';
  operation: string | null;
}

/**
 * Ends an upload without a file (cancelled, expired): once it holds the
 * upload (resumable-writers.ts), so a PATCH still writing stops first, as for
 * a newer request, and records what it kept before its staged bytes go; false
 * when it had already ended.
 */
export function endResumableUpload(ports: EndPorts, id: string, ending: ResumableEnding): Promise<boolean> {
  return whileHeld(ports, id, () => endHeldResumableUpload(ports, id, ending));
}

/**
 * Ends an upload the caller holds (tus termination, a refusal or a deleted
 * bucket met by the request writing it): its row (and so its hold on the cap)
 * and its staged bytes go, and its end is announced. Nobody else writes it,
 * so nothing is staged after.
 */
export async function endHeldResumableUpload(
  ports: Pick<StoragePorts, 'db' | 'blobs' | 'events' | 'durable'>,
  id: string,
  ending: ResumableEnding,
): Promise<boolean> {
  hashes.forget(id);
  const removed = await removeResumableUpload(ports.db, id);
  await ports.durable();
  if (removed) {
    await ports.events.announce({
      type: 'upload-ended',
      kind: 'resumable',
      uploadId: id,
      ownerId: removed.owner_id,
      bucketId: removed.bucket_id,
      filename: removed.filename,
      ...ending,
    });
  }
  // The row is gone, so the bytes are never read again; a failure here leaves them to the operator (garbage collection skips staging).
  await ports.blobs.staging.remove(id).catch(() => {});
  return removed !== undefined;
}

/** `work` while this caller holds upload `id`; asked to stop meanwhile, it finishes first (it is short). */
async function whileHeld<T>(ports: Pick<StoragePorts, 'resumableWriters'>, id: string, work: () => Promise<T>): Promise<T> {
  const release = await ports.resumableWriters.hold(id, () => {});
  try {
    return await work();
  } finally {
    await release();
  }
}

/** Removes uploads that received nothing for `maxIdleSeconds`; returns how many this call removed. */
export async function expireResumableUploads(ports: EndPorts, maxIdleSeconds: number, now = Date.now()): Promise<number> {
  const cutoff = new Date(now - maxIdleSeconds * 1000).toISOString();
  let removed = 0;
  const skipped = new Set<string>();
  for (;;) {
    const ids = (await resumableUploadsIdleSince(ports.db, cutoff, 100 + skipped.size)).filter((id) => !skipped.has(id));
    for (const id of ids) {
      const ended = await whileHeld(ports, id, async () => {
        // A request that was writing it may have recorded bytes before it let go: the upload is then not idle.
        const row = await findResumableUpload(ports.db, id);
        return row !== undefined && row.updated_at < cutoff && (await endHeldResumableUpload(ports, id, { outcome: 'expired', operation: null }));
      }).catch((error: unknown) => {
        // Still written by a request that does not let go (409): left for the next sweep.
        if (!(error instanceof AppError)) throw error;
        return false;
      });
      if (ended) removed += 1;
      else skipped.add(id);
    }
    if (ids.length < 100) return removed;
  }
}
