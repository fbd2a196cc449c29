/**
 * Changing object lock: a version's retention and legal hold, by whatever
 * door asks (S3's Put…Retention, Put…LegalHold; the Pail API's PUT
 * …/retention and …/legal-hold). A bucket's lock configuration is
 * bucket-lock.ts's. What may change is object-lock.ts's rule; a change is
 * decided and written under its bucket's lock, as a delete of a version
 * reads the lock, so two changes at once never undo each other's extension
 * and a delete never misses a lock that was answered as set.
 */
import type { RetentionMode } from '@pail/shared';
import { changeLockInBucket } from '../db/repositories/version-locks.js';
import { findObjectRow } from '../db/repositories/objects.js';
import { findVersion } from './versions.js';
import type { BucketRow, Db } from '../db/schema.js';
import type { Clock } from './clock.js';
import { recordAudit, type Actor } from './audit.js';
import { AppError, errors } from './errors.js';
import { futureDate, lockOfRow, retentionChangeRefusal, type VersionLock } from './object-lock.js';

type LockPorts = { db: Db; clock: Clock };
type LockBucket = Pick<BucketRow, 'id' | 'object_lock' | 'owner_id'>;

/** The audit log's name for a version: its bucket and file, and the version id it was named by. */
const versionTarget = (bucket: LockBucket, version: LockedVersion): string =>
  `bucket:${bucket.id}/file:${version.filename}${version.versionId === undefined ? '' : `?version_id=${version.versionId}`}`;

/** The version a change is on: its bucket, name and storage key (whichever table holds its row). */
export interface LockedVersion {
  filename: string;
  storageKey: string;
  /** The version id it was named by; undefined: the file's current version. */
  versionId?: string;
}

/**
 * The version of a file a lock change is on: its current one, or the one
 * `versionId` names (domain/versions.ts); a delete marker has no lock.
 */
export async function lockedVersion(ports: { db: Db }, bucket: Pick<BucketRow, 'id'>, filename: string, versionId?: string): Promise<LockedVersion> {
  if (versionId === undefined) {
    const object = await findObjectRow(ports.db, bucket.id, filename);
    if (!object) throw errors.fileNotFound();
    return { filename: object.filename, storageKey: object.storage_key };
  }
  const found = await findVersion(ports, bucket, filename, versionId);
  if (found === null || !('object' in found)) throw errors.versionNotFound();
  return { filename, storageKey: found.object.storage_key, versionId };
}

export const lockNotEnabled = (): AppError => errors.validation('Bucket is missing Object Lock Configuration');

function requireLockBucket(bucket: Pick<BucketRow, 'object_lock'>): void {
  if (bucket.object_lock !== 1) throw lockNotEnabled();
}

/**
 * Lets `decide` make a version's next lock from the one it has now (or
 * throw), and writes it, all under its bucket's lock (version-locks.ts): a
 * delete of the version meanwhile is either done before (then the version
 * is not found) or sees the new lock.
 */
async function changeLock(ports: LockPorts, bucketId: number, version: LockedVersion, decide: (current: VersionLock) => VersionLock): Promise<VersionLock> {
  const next = await changeLockInBucket(ports.db, { bucketId, filename: version.filename, storageKey: version.storageKey }, (row) => decide(lockOfRow(row)));
  if (next === undefined) throw version.versionId === undefined ? errors.fileNotFound() : errors.versionNotFound();
  return { mode: next.mode as VersionLock['mode'], retainUntil: next.retainUntil, legalHold: next.legalHold };
}

/**
 * Sets (null: removes) a version's retention. A running COMPLIANCE
 * retention may only be extended; a GOVERNANCE one shortened, removed or
 * changed only with `bypassGovernance` (object-lock.ts). The date must be in
 * the future.
 */
export async function setRetention(
  ports: LockPorts,
  bucket: LockBucket,
  version: LockedVersion,
  requested: { mode: RetentionMode; retainUntil: string } | null,
  bypassGovernance: boolean,
  actor: Actor,
): Promise<VersionLock> {
  requireLockBucket(bucket);
  const now = ports.clock.now();
  const next = requested === null ? null : { mode: requested.mode, retainUntil: futureDate(requested.retainUntil, now) };
  const lock = await changeLock(ports, bucket.id, version, (current) => {
    const refusal = retentionChangeRefusal(current, next, now, bypassGovernance);
    if (refusal !== null) throw new AppError('ObjectLocked', refusal);
    return { mode: next?.mode ?? null, retainUntil: next?.retainUntil ?? null, legalHold: current.legalHold };
  });
  await recordAudit(ports.db, {
    userId: bucket.owner_id,
    actor,
    action: 'object.retention_changed',
    target: versionTarget(bucket, version),
    details: { mode: lock.mode, retain_until: lock.retainUntil, ...(bypassGovernance ? { bypass_governance: true } : {}) },
  });
  return lock;
}

/** Puts a version under a legal hold, or lifts it; either needs only a bucket with object lock. */
export async function setLegalHold(ports: LockPorts, bucket: LockBucket, version: LockedVersion, on: boolean, actor: Actor): Promise<VersionLock> {
  requireLockBucket(bucket);
  const lock = await changeLock(ports, bucket.id, version, (current) => ({ ...current, legalHold: on }));
  await recordAudit(ports.db, {
    userId: bucket.owner_id,
    actor,
    action: 'object.legal_hold_changed',
    target: versionTarget(bucket, version),
    details: { legal_hold: on },
  });
  return lock;
}
