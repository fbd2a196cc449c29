/**
 * Buckets: create, list, get, change visibility. A caller only ever sees its
 * own live buckets; anything else is "Bucket not found".
 */
import { bucketNameProblem, type RetentionMode, type StorageBucket } from '@pail/shared';
import { randomBytes } from 'node:crypto';
import type { Caches } from '../cache/caches.js';
import {
  countLiveBuckets,
  findOwnLiveBucket,
  findOwnLiveBucketByName,
  insertBucket,
  listLiveBuckets,
  liveBucketNamed,
  storageNameUsed,
  setBucketLimits,
  setBucketPublic,
  setBucketVersioning,
} from '../db/repositories/buckets.js';
import { insertWithinLimit } from '../db/repositories/users.js';
import type { BucketIdentity, BucketRow, Db, NamedBucket } from '../db/schema.js';
import { parseLimits } from './bucket-rules.js';
import { publicRefusal } from './public-access.js';
import { outboxFor, visibilityChange } from './webhook-events.js';
import { nowIso } from './clock.js';
import { errors } from './errors.js';
import { checkedDefaultRetention, defaultRetentionOf } from './object-lock.js';
import { lockPatchOf, setLockConfiguration, type LockPatch } from './bucket-lock.js';
import { authorize, type Action } from './authorize.js';
import type { AccountPrincipal } from './principal.js';
import { OPERATOR, recordAudit, type Actor } from './audit.js';

export type { BucketIdentity };

export interface VisibilityInput {
  visibility?: 'public' | 'private';
  public?: boolean;
}

export function bucketView(row: BucketRow): StorageBucket {
  return {
    id: row.id,
    name: row.name,
    public: row.public === 1,
    object_count: row.object_count,
    total_bytes: row.total_bytes,
    created_at: row.created_at,
    max_file_bytes: row.max_file_bytes,
    allowed_types: row.allowed_types === null ? null : (JSON.parse(row.allowed_types) as string[]),
    versioning: row.versioning,
    noncurrent_bytes: row.noncurrent_bytes,
    object_lock: row.object_lock === 1,
    default_retention: defaultRetentionOf(row),
  };
}

/** Object lock asked of a new bucket (decisions.md, "Object lock"): for good, with a default retention or none. */
export interface LockInput {
  object_lock?: boolean;
  default_retention?: { mode: RetentionMode; days?: number | null; years?: number | null } | null;
}

function lockColumns(input: LockInput) {
  const retention = input.default_retention ?? null;
  if (retention !== null && input.object_lock !== true) throw errors.validation('default_retention needs object_lock: true');
  if (input.object_lock !== true) return {};
  const checked = retention === null ? null : checkedDefaultRetention(retention);
  // Versioned for good (decisions.md): a write keeps the version it displaces.
  return {
    object_lock: 1,
    versioning: 'enabled' as const,
    lock_default_mode: checked?.mode ?? null,
    lock_default_days: checked?.days ?? null,
    lock_default_years: checked?.years ?? null,
  };
}

/** Bucket ids in paths are positive integers; anything else cannot name a bucket. */
export function parseBucketId(raw: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(raw)) throw errors.bucketNotFound();
  return Number(raw);
}

/** `visibility` and `public` are two ways to say one thing; together they must agree. */
function parseVisibility(input: VisibilityInput): boolean | undefined {
  const fromVisibility = input.visibility === undefined ? undefined : input.visibility === 'public';
  if (fromVisibility !== undefined && input.public !== undefined && fromVisibility !== input.public) {
    throw errors.validation('visibility and public contradict each other');
  }
  return fromVisibility ?? input.public;
}

export async function createBucket(
  db: Db,
  ownerId: number,
  input: VisibilityInput & LimitsInput & LockInput & { name: string },
  maxBuckets: number,
  actor: Actor = OPERATOR,
): Promise<StorageBucket> {
  const problem = bucketNameProblem(input.name);
  if (problem) throw errors.validation(problem);
  const lock = lockColumns(input);
  const isPublic = parseVisibility(input) ?? false;
  const limits = parseLimits(input);
  if (await liveBucketNamed(db, ownerId, input.name)) throw errors.bucketNameTaken();
  // The storage name is the bucket's own name while no bucket, live or deleted, has had it (so unsigned S3 requests
  // and public urls name it as S3 tools expect), else the name with a random suffix. Either way it is unique and
  // never reused, so a URL or blob key can never point at another bucket.
  const plainFree = !(await storageNameUsed(db, input.name));
  const insert = (storageName: string) =>
    insertWithinLimit(
      db,
      ownerId,
      maxBuckets,
      (trx) => countLiveBuckets(trx, ownerId),
      (trx) =>
        insertBucket(trx, {
          owner_id: ownerId,
          name: input.name,
          storage_name: storageName,
          public: isPublic ? 1 : 0,
          created_at: nowIso(),
          ...limits,
          ...lock,
        }),
    );
  const suffixed = () => `${input.name}-${randomBytes(6).toString('hex')}`;
  try {
    let row;
    try {
      row = await insert(plainFree ? input.name : suffixed());
    } catch (error) {
      // Another owner took the plain name between the check and the insert: take a suffixed one.
      if (!plainFree || (await liveBucketNamed(db, ownerId, input.name)) || !(await storageNameUsed(db, input.name))) throw error;
      row = await insert(suffixed());
    }
    if (!row) throw errors.tooMany('buckets', maxBuckets);
    await recordAudit(db, {
      userId: ownerId,
      actor,
      action: 'bucket.created',
      target: `bucket:${row.id}`,
      details: { name: row.name, public: row.public === 1 },
    });
    return bucketView(row);
  } catch (error) {
    // Two creates racing for one name: the partial unique index decides.
    if (await liveBucketNamed(db, ownerId, input.name)) throw errors.bucketNameTaken();
    throw error;
  }
}

export async function listBuckets(db: Db, ownerId: number): Promise<StorageBucket[]> {
  return (await listLiveBuckets(db, ownerId)).map(bucketView);
}

/** The caller's live bucket, or BucketNotFound (also for other owners' buckets). */
export async function getOwnBucket(db: Db, ownerId: number, rawId: string): Promise<BucketRow> {
  const row = await findOwnLiveBucket(db, ownerId, parseBucketId(rawId));
  if (!row) throw errors.bucketNotFound();
  return row;
}

/**
 * The principal's live bucket by name (or storage name), as the S3 API names
 * buckets, for an action on it; BucketNotFound for other owners' buckets,
 * and for buckets the key's limits leave out (authorize.ts).
 */
export async function getOwnBucketByName(db: Db, principal: AccountPrincipal, name: string, action: Action): Promise<BucketRow> {
  const row = name === '' ? undefined : await findOwnLiveBucketByName(db, principal.user.id, name);
  authorize(principal, action, row ?? null);
  // authorize() refused a bucket that is not there.
  return row!;
}

/** The principal's live bucket by id, for an action on it; BucketNotFound for other owners' buckets and those the key's limits leave out. */
export async function getOwnBucketFor(db: Db, principal: AccountPrincipal, id: number, action: Action): Promise<BucketRow> {
  const row = await findOwnLiveBucket(db, principal.user.id, id);
  authorize(principal, action, row ?? null);
  // authorize() refused a bucket that is not there.
  return row!;
}

/**
 * getOwnBucketByName for the S3 API's writes, cached per (owner, name) and
 * forgotten on every instance when a bucket is removed (its name may then be
 * another's) or changes visibility; the upload's commit checks again that it
 * is live. A bucket found by its storage name is not kept under that name: a
 * bucket created later with the name comes first.
 */
export async function ownNamedBucket(ports: { db: Db; caches: Caches }, principal: AccountPrincipal, name: string, action: Action): Promise<NamedBucket> {
  const cache = ports.caches.bucketsByName;
  const cacheKey = `${principal.user.id}/${name}`;
  let bucket: NamedBucket | undefined = cache?.get(cacheKey);
  if (!bucket) {
    const mark = cache?.mark() ?? 0;
    const row = name === '' ? undefined : await findOwnLiveBucketByName(ports.db, principal.user.id, name);
    if (row) bucket = { id: row.id, owner_id: row.owner_id, storage_name: row.storage_name, public: row.public };
    if (row?.name === name) cache?.set(cacheKey, bucket!, mark);
  }
  authorize(principal, action, bucket ?? null);
  // authorize() refused a bucket that is not there.
  return bucket!;
}

/**
 * The caller's bucket for an upload. Its identity never changes, so it is
 * cached per (owner, id) without invalidation; whether the bucket is still
 * live is checked again by the upload's commit.
 */
export async function ownBucketForUpload(ports: { db: Db; caches: Caches }, ownerId: number, rawId: string): Promise<BucketIdentity> {
  const cacheKey = `${ownerId}/${rawId}`;
  const cached = ports.caches.bucketIdentities.get(cacheKey);
  if (cached) return cached;
  const { id, owner_id, storage_name } = await getOwnBucket(ports.db, ownerId, rawId);
  const identity = { id, owner_id, storage_name };
  ports.caches.bucketIdentities.set(cacheKey, identity);
  return identity;
}

export type LimitsInput = { max_file_bytes?: number | null; allowed_types?: string[] | null; versioning?: 'enabled' | 'suspended' };

/** PATCH: a bucket's limits (absent: unchanged; null: cleared), its versioning (domain/versions.ts) and its object lock (bucket-lock.ts), in force for every upload that starts after the answer, on every instance. */
export async function updateBucketLimits(
  ports: { db: Db; caches: Caches },
  ownerId: number,
  rawId: string,
  input: LimitsInput & LockPatch,
  actor: Actor = OPERATOR,
): Promise<StorageBucket> {
  const bucket = await getOwnBucket(ports.db, ownerId, rawId);
  const limits = parseLimits(input);
  // Checked before anything changes: a refused lock change leaves the limits and versioning as they were.
  const lock = lockPatchOf(bucket, input, input.versioning ?? bucket.versioning);
  let row = Object.keys(limits).length === 0 ? bucket : await setBucketLimits(ports.db, bucket.id, limits);
  if (!row) throw errors.bucketNotFound();
  if (input.versioning !== undefined) row = await setVersioning(ports, bucket, input.versioning, actor);
  if (lock !== undefined) row = await setLockConfiguration(ports, row, lock, actor);
  await ports.caches.changed('buckets');
  return bucketView(row);
}

/** Public or private, on every door; a public access block with BlockPublicAcls refuses public (403, domain/public-access.ts). */
export async function setVisibility(
  ports: { db: Db; caches: Caches },
  ownerId: number,
  rawId: string,
  input: VisibilityInput,
  actor: Actor = OPERATOR,
): Promise<void> {
  const isPublic = parseVisibility(input);
  if (isPublic === undefined) throw errors.validation('visibility is required: "public" or "private"');
  const bucket = await getOwnBucket(ports.db, ownerId, rawId);
  // Issue 39: bucket.visibility_changed, written in the change's transaction.
  const outbox = bucket.public === (isPublic ? 1 : 0) ? undefined : await outboxFor(ports, bucket.id, [visibilityChange(isPublic, `user:${ownerId}`)]);
  if (!(await setBucketPublic(ports.db, bucket.id, isPublic, outbox))) throw await publicRefusal(ports.db, bucket.id);
  await ports.caches.changed('objects');
  // The bucket by name carries its visibility too.
  await ports.caches.changed('buckets');
  if (bucket.public !== (isPublic ? 1 : 0)) {
    await recordAudit(ports.db, { userId: ownerId, actor, action: 'bucket.visibility_changed', target: `bucket:${bucket.id}`, details: { public: isPublic } });
  }
}

/** PATCH and S3's PutBucketVersioning: enabled or suspended (never back to unversioned; a bucket with object lock never suspended). */
export async function setVersioning(
  ports: { db: Db; caches: Caches },
  bucket: Pick<BucketRow, 'id' | 'owner_id' | 'versioning'> & Partial<Pick<BucketRow, 'object_lock'>>,
  versioning: string,
  actor: Actor = OPERATOR,
): Promise<BucketRow> {
  if (versioning !== 'enabled' && versioning !== 'suspended') throw errors.validation('versioning must be "enabled" or "suspended"');
  // A bucket with object lock is versioned for good (decisions.md, "Object lock").
  if (versioning === 'suspended' && bucket.object_lock === 1) throw errors.versioningLocked();
  const row = await setBucketVersioning(ports.db, bucket.id, versioning);
  // Refused in the statement too: lock may have been turned on since the bucket was read.
  if (!row) throw (await findOwnLiveBucket(ports.db, bucket.owner_id, bucket.id))?.object_lock === 1 ? errors.versioningLocked() : errors.bucketNotFound();
  // Reads answer with the bucket's versioning (x-amz-version-id): cached lookups see the new one.
  await ports.caches.changed('objects');
  await ports.caches.changed('buckets');
  if (bucket.versioning !== versioning) {
    await recordAudit(ports.db, {
      userId: bucket.owner_id,
      actor,
      action: 'bucket.versioning_changed',
      target: `bucket:${bucket.id}`,
      details: { versioning },
    });
  }
  return row;
}
