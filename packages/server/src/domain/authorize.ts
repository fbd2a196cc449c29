/**
 * What a principal may do: one decision for every door. Each door names its
 * operations in the action vocabulary below (one table per door:
 * http/operations.ts, s3/operations.ts) and asks here, first with the action
 * alone (or with the bucket its path names) before any handler runs, then
 * with the bucket once it is found. A key's limits (decisions.md, "API keys
 * with limits") give the permissions and the buckets; a bucket outside a
 * key's reach is, for it, a bucket that does not exist.
 */
import type { Permission } from '@pail/shared';
import type { BucketRow } from '../db/schema.js';
import { errors, type AppError } from './errors.js';
import { readableByAnyone, type PublicReadFacts } from './public-access.js';
import { urlSignerOf, type Principal, type SignedMethod } from './principal.js';

/** Every action, with the permissions a key needs for it, checked in this order. */
export const ACTION_PERMISSIONS = {
  listBuckets: ['read'],
  /** A bucket's own settings: itself, its location, versioning, ACL, CORS, public access block. */
  readBucket: ['read'],
  listObjects: ['read'],
  /** A key limited to some buckets cannot make one: the new bucket would lie outside its own limits. */
  createBucket: ['manage'],
  /** Deleting a bucket, its visibility (ACL), limits, CORS, public access block. */
  manageBucket: ['manage'],
  readObject: ['read'],
  /** Any upload: whole, by form, by parts, resumable. */
  writeObject: ['write'],
  deleteObject: ['delete'],
  /** Writes the target and reads the source (CopyObject, UploadPartCopy). */
  copyObject: ['write', 'read'],
  /** A move or rename (a file or a folder): reads and deletes the source, writes the target (which is authorized for writeObject too). */
  moveObject: ['read', 'write', 'delete'],
  /** Making a signed url; it also needs the action its method grants (GRANTED_ACTION). */
  signUrl: ['manage'],
  /** Unfinished uploads, as S3's ListMultipartUploads and AbortMultipartUpload ask: listing reads, cancelling writes. */
  listUploads: ['read'],
  cancelUpload: ['write'],
  /** Removing or shortening what a GOVERNANCE retention protects (object lock), when the request asks to. */
  bypassGovernance: ['bypass-governance'],
} as const satisfies Record<string, readonly Permission[]>;

export type Action = keyof typeof ACTION_PERMISSIONS;

/** The action a signed url of this method grants, and needs of its signer. */
export const GRANTED_ACTION: Record<SignedMethod, Action> = { GET: 'readObject', PUT: 'writeObject' };

/**
 * The bucket an action is on: its id, and its owner and visibility (with
 * its public access block's switches) when it may be another owner's (a
 * read by url: findReadable). Without them it is one the principal names
 * among its own (a path's bucket id, its own bucket found).
 */
export type BucketAccess = Pick<BucketRow, 'id'> & Partial<Pick<BucketRow, 'owner_id'> & PublicReadFacts>;

/** Why an action is refused: 401 (a credential is needed), 403 (with why), or 404 (for this principal the bucket does not exist). */
export type Refusal = { refusal: 'unauthorized' } | { refusal: 'forbidden'; message: string } | { refusal: 'bucket-not-found' };

const UNAUTHORIZED: Refusal = { refusal: 'unauthorized' };
const BUCKET_NOT_FOUND: Refusal = { refusal: 'bucket-not-found' };

/**
 * The decision: null when the principal may do the action, else the refusal.
 * `bucket` absent: the action alone (its bucket not known yet); null: the
 * bucket it names does not exist. Someone without a credential may only
 * read, and is told to show one whether a bucket is private or absent,
 * which leaks nothing.
 */
export function decide(principal: Principal, action: Action, bucket?: BucketAccess | null): Refusal | null {
  if (principal.user === null) {
    if (action !== 'readObject' || bucket === null) return UNAUTHORIZED;
    return bucket === undefined || bucket.owner_id === undefined || readableByAnyone(bucket) ? null : UNAUTHORIZED;
  }
  if (principal.via === 'signed-url' && GRANTED_ACTION[principal.grant.method] !== action) {
    return { refusal: 'forbidden', message: `This signed url grants ${principal.grant.method} only` };
  }
  const { limits } = principal;
  for (const permission of ACTION_PERMISSIONS[action]) {
    if (!limits.permissions.includes(permission)) return { refusal: 'forbidden', message: `This API key does not allow ${permission}` };
  }
  if (action === 'createBucket' && limits.buckets !== null) {
    return { refusal: 'forbidden', message: 'This API key is limited to some buckets, so it cannot create buckets' };
  }
  if (action === 'signUrl' && urlSignerOf(principal) === null) return UNAUTHORIZED;
  if (bucket === undefined) return null;
  if (bucket === null || (limits.buckets !== null && !limits.buckets.includes(bucket.id))) return BUCKET_NOT_FOUND;
  // Another owner's bucket is there for reading its files when it is public (and no block hides it), and for nothing else.
  if (bucket.owner_id !== undefined && bucket.owner_id !== principal.user.id && !(action === 'readObject' && readableByAnyone(bucket))) return BUCKET_NOT_FOUND;
  return null;
}

export function refusalError(refusal: Refusal): AppError {
  switch (refusal.refusal) {
    case 'unauthorized':
      return errors.unauthorized();
    case 'forbidden':
      return errors.forbidden(refusal.message);
    case 'bucket-not-found':
      return errors.bucketNotFound();
  }
}

/** Throws the refusal (an AppError) unless the principal may do the action. */
export function authorize(principal: Principal, action: Action, bucket?: BucketAccess | null): void {
  const refusal = decide(principal, action, bucket);
  if (refusal !== null) throw refusalError(refusal);
}

/** The same decision as a predicate: which of its buckets a key lists, whether a url's signer still reaches its bucket. */
export const allows = (principal: Principal, action: Action, bucket?: BucketAccess | null): boolean => decide(principal, action, bucket) === null;

/** The buckets a principal reaches, for queries that filter by them: null for every bucket of its owner. */
export const bucketScope = (principal: Principal): readonly number[] | null => (principal.user === null ? [] : principal.limits.buckets);

/** Whether a principal asking to bypass GOVERNANCE retention (x-amz-bypass-governance-retention) may: a key with the bypass-governance permission. */
export const mayBypassGovernance = (principal: Principal, asked: boolean): boolean => asked && allows(principal, 'bypassGovernance');
