/**
 * The writes that change which bytes a file has, one implementation per
 * dialect (sqlite.ts, postgres.ts), chosen once by openDatabase. Each owns
 * its batching and the inline-bytes table, so a small file's bytes are
 * written, and a retired version's removed, in the transaction that changes
 * its row. Every implementation runs under the whole HTTP test suite.
 */
import type { CapRule } from '../repositories/holdings.js';
import type { PartRecorded, RecordPartInput } from '../repositories/multipart.js';
import type { RemovedVersion, StoredVersion } from '../repositories/objects.js';
import type { VersionRemoved } from './version-writes.js';
import type { BucketVersioning, ObjectRow } from '../schema.js';
import type { LockRow, LockValues } from '../repositories/version-locks.js';
import type { ReservationInput, ReservationRefusal } from '../repositories/upload-reservations.js';
import type { OutboxEvent } from '../repositories/webhook-outbox.js';

export interface CommitInput {
  ownerId: number;
  /**
   * The cap rule (domain/quota.ts), asked in the commit's transaction with
   * everything the owner holds but what this commit ends (its reservation,
   * the upload it completes) and the bytes it adds beside the version it replaces.
   */
  quota: CapRule;
  /** The reservation that held this file's bytes while they streamed: dropped in the commit's transaction, as the file starts to count (and when the commit is refused, so no later write counts it). */
  reservationId?: string;
  bucketId: number;
  filename: string;
  storageKey: string;
  contentType: string;
  size: number;
  contentHash: string;
  /** A small file's bytes, written with its row; absent when they are in the blob store. */
  inlineBytes?: Buffer;
  /** Stored headers and user metadata (JSON); absent: none, which also clears a replaced version's. */
  metadata?: string;
  /** Its tags (canonical JSON, domain/object-tags.ts); absent: none, which also clears a replaced version's. */
  tags?: string;
  /** Verified full-object checksums (JSON, algorithm to base64, e.g. {"crc32":"…"}); absent: none. */
  checksums?: string;
  /** Its object lock (a retention, a legal hold: domain/object-lock.ts), written with the version so it never exists unlocked; absent: none. */
  lock?: LockValues;
  /** What the file must be for the commit to go ahead (S3's conditional writes), checked in the commit's own transaction. */
  condition?: WriteCondition;
  /**
   * The multipart upload this commit completes: it ends in the same
   * transaction (its rows and its parts' rows go), so its parts stop counting
   * exactly when the object starts to. Refused with no-upload when it has
   * already ended (aborted, expired or completed by another request).
   */
  endsUpload?: string;
  /** The completed multipart upload's parts (JSON, domain/object-parts.ts), kept with the version as is its upload id (endsUpload); absent: none. */
  parts?: string;
  /** The resumable upload this commit completes, ended in the same transaction (its length stops counting as the file starts to); refused with no-resumable when it has ended. */
  endsResumable?: string;
  /** The version id the file takes if its bucket has versioning enabled (domain/versions.ts makes one per write); otherwise it is the `null` version. */
  versionId: string;
  /** Webhook events (issue 39): written in the commit's own transaction, so they exist exactly when it committed. */
  outbox?: OutboxEvent[];
}

/** A file's row re-pointed to a new name (and maybe bucket) of the same owner; its bytes stay where they are. */
export interface MoveInput {
  ownerId: number;
  /** The file as the mover found it: the move goes ahead only while this version (storageKey) is its current one. */
  from: { bucketId: number; filename: string; storageKey: string };
  to: { bucketId: number; filename: string };
  /** Replace a file already at `to` (its bytes are then retired); false: refused with 'exists'. */
  overwrite: boolean;
  /** The type the file takes in its new bucket (bucket-rules.ts names a generic type's detected one); absent: unchanged. */
  contentType?: string;
  /** The version id the file takes under its new name if that bucket has versioning enabled. */
  versionId: string;
  /** The id of the delete marker its old name gets if that bucket is versioned (enabled). */
  markerVersionId: string;
  /** Who moved it (the marker's deleted_by). */
  movedBy: string | null;
  /** Webhook events (issue 39), written in the move's transaction. */
  outbox?: OutboxEvent[];
  /** Asked about the moved version, which leaves its name (LockGuard); absent: its bucket has no object lock. */
  lockGuard?: LockGuard;
  /** Its lock under the new name (the target's default retention), written with the move so it never exists there unlocked; absent: none. */
  lock?: LockValues;
}

export interface Moved {
  /** The row as it is now, under its new name. */
  row: ObjectRow;
  /** The version that was current at the new name (overwrite): replaced, or kept as a noncurrent version. */
  replaced: StoredVersion | null;
  /** The versions whose bytes the move's transaction dropped, now to be deleted. */
  retired: StoredVersion[];
}

/** What deleting a file's current version did (ObjectWrites.deleteVersion). */
export interface Deleted {
  /** The version that was current (it left listings), or null when the name held none (S3 adds a delete marker anyway). */
  removed: RemovedVersion | null;
  /** The version whose bytes are now to be deleted: the removed one when not kept; null when kept (versioning) or none. */
  retired: StoredVersion | null;
  /** The delete marker the delete added (versioned buckets): its version id, null for the `null` version. */
  marker: { versionId: string | null } | null;
  versioning: BucketVersioning;
}

export interface DeleteOptions {
  /** The id a delete marker takes in a bucket with versioning enabled. */
  markerVersionId: string;
  /** Who deletes it (principal kind:id), kept on a delete marker for the trash. */
  deletedBy: string | null;
  /** Add a delete marker even when the name holds no current version (S3's DeleteObject); else refused with no-file. */
  evenIfAbsent?: boolean;
  /** Webhook events (issue 39), written in the delete's transaction. */
  outbox?: OutboxEvent[];
  /** Only while this version (a storage key) is the current one, else refused with no-file: a lifecycle rule weighed that one. */
  onlyStorageKey?: string;
  /** Asked about the version the delete removes for good, if any (LockGuard). */
  lockGuard?: LockGuard;
}

/**
 * Object lock's say on a version a write removes for good: called inside the
 * write's transaction, under the bucket's lock that changes of a lock take
 * too (repositories/version-locks.ts), with the version's lock row as it is
 * there (undefined: none); it throws to refuse, which rolls the write back.
 * The rule is the domain's (domain/object-lock.ts, removalGuard).
 */
export type LockGuard = (lock: LockRow | undefined) => void;

export interface Committed {
  /** The version whose bytes this commit retired (the replaced one; in a versioned bucket only a replaced `null` version), now to be deleted. */
  replaced: StoredVersion | null;
  /** Whether the name held a file before (replaced or, in a versioned bucket, kept as a noncurrent version). */
  overwrote: boolean;
  /** The new version's id: null in an unversioned bucket, and for the `null` version of a suspended one. */
  versionId: string | null;
  /** The bucket's versioning when the commit ran (S3 answers x-amz-version-id only in a versioned bucket). */
  versioning: BucketVersioning;
  /** The storage keys of the ended upload's parts (endsUpload), whose blobs are now unreferenced. */
  endedParts: string[];
}

/** S3's If-None-Match: * (`absent`) and If-Match (`etagIn`, the ETags without quotes; `*` matches any). */
export interface WriteCondition {
  absent?: boolean;
  etagIn?: string[];
}

/** Why a conditional write may not go ahead given the file's current version (undefined: none), or null when it may. */
export function conditionRefusal(condition: WriteCondition | undefined, current: { etag: string } | undefined): Refusal | null {
  if (condition === undefined) return null;
  if (condition.absent && current !== undefined) return 'precondition-failed';
  if (condition.etagIn !== undefined) {
    if (current === undefined) return 'no-file';
    if (!condition.etagIn.some((etag) => etag === '*' || etag === current.etag)) return 'precondition-failed';
  }
  return null;
}

export interface ObjectWrites {
  /**
   * Makes stored bytes the file's current version in one transaction: moves
   * the owner's usage by the difference (refusing, under the owner's lock,
   * what does not fit beside everything else held: CommitInput.quota), writes the row and any inline bytes, drops the
   * replaced version's inline bytes, and moves the bucket's counts (which
   * fails if the bucket was deleted meanwhile), and ends the multipart
   * upload it completes, if any.
   */
  commitUpload(input: CommitInput): Promise<Committed>;
  /**
   * Deletes a file in one transaction with its bucket's counts and its owner's usage: in an unversioned bucket its
   * row (and inline bytes) go; in a versioned one a delete marker becomes its newest version (version-writes.ts).
   */
  deleteVersion(bucket: { id: number; owner_id: number }, filename: string, options: DeleteOptions): Promise<Deleted>;
  /**
   * Deletes one version of a file for good (null: the `null` version), as S3's DeleteObject with a versionId; refused
   * with no-version, or by `lockGuard`. `noncurrentOnly`: refused (no-version) when that version is the current one
   * by then (lifecycle's noncurrent expiry: it became current again meanwhile). `outbox`: its webhook events (issue
   * 39), written in its transaction.
   */
  deleteVersionById(
    bucket: { id: number; owner_id: number },
    filename: string,
    versionId: string | null,
    lockGuard?: LockGuard,
    options?: { noncurrentOnly?: boolean; outbox?: OutboxEvent[] | undefined },
  ): Promise<VersionRemoved>;
  /**
   * Rewrites a version's type, stored headers and updated_at, keeping its
   * bytes: only while it is the file's current version (storageKey) in a live
   * bucket. Returns the rewritten row, or null when the version is no longer there.
   */
  editHeaders(input: EditHeadersInput): Promise<ObjectRow | null>;
  /** Replaces a version's tags (null: none), as editHeaders rewrites its headers: only while it is current in a live bucket; null when it is not. */
  editTags(input: EditTagsInput): Promise<ObjectRow | null>;
  /**
   * Moves a file in one transaction: its row takes the new bucket and name
   * (the bytes and their key stay; a blob key names no bucket that matters,
   * see domain/moves.ts), the version at the new name, if overwritten, goes,
   * and both buckets' counts move with it. The owner's usage changes only by
   * an overwritten version's size. A crash leaves the file under its old name
   * or its new one, never both or neither.
   */
  moveVersion(input: MoveInput): Promise<Moved>;
  /** Removes purged versions' rows and inline bytes (their blobs are already gone); returns the rows this call removed. */
  removePurged(bucketId: number, versions: StoredVersion[]): Promise<RemovedVersion[]>;
  /** Removes a deleted bucket's kept versions and delete markers by id, with their inline bytes (their blobs are already gone). */
  removePurgedKept(bucketId: number, versions: { id: number; storage_key: string | null; inline: number }[]): Promise<void>;
  /** A small file's bytes; undefined when there are none under that key. */
  readInline(storageKey: string): Promise<Buffer | undefined>;
  /** Holds bytes for an upload in flight if they fit the cap (repositories/upload-reservations.ts), or says why not. */
  reserveUpload(input: ReservationInput): Promise<ReservationRefusal | null>;
  /** Records a stored multipart part if it fits the cap, dropping the reservation that held it (repositories/multipart.ts). */
  recordPart(input: RecordPartInput): Promise<PartRecorded>;
}

export interface EditHeadersInput {
  bucketId: number;
  filename: string;
  storageKey: string;
  contentType: string;
  /** Stored headers and user metadata (JSON); null: none. */
  metadata: string | null;
  updatedAt: string;
}

export interface EditTagsInput {
  bucketId: number;
  filename: string;
  storageKey: string;
  /** Canonical JSON (domain/object-tags.ts); null: none. */
  tags: string | null;
  /** Also a kept (noncurrent) version with that key, when the current one has another (a tag change by version id). */
  orKept?: boolean;
}

/** Why a write was refused; the domain turns it into the answer. */
export type Refusal = 'over-cap' | 'no-bucket' | 'no-file' | 'precondition-failed' | 'no-upload' | 'no-resumable' | 'exists' | 'no-version';

export class WriteRefused extends Error {
  constructor(readonly refusal: Refusal) {
    super(`write refused: ${refusal}`);
    this.name = 'WriteRefused';
  }
}
